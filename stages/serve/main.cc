// lh-serve: launches an inference engine from a profile (workflows/engines/*.yaml), reports
// its endpoint once it really generates, and supervises it. See docs/engine-profiles.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/event_writer.h"
#include "core/logging.h"
#include "core/strings.h"
#include "stages/serve/serve_app.h"

namespace {

std::string ExeDir() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "" : p.parent_path().string();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::stages;
  ServeOptions o;
  std::string log_level = "info";
  bool dry_run = false, quiet = false, engine_version = false;

  CLI::App app{"lh-serve: start an inference engine from a profile and supervise it"};
  app.add_option("--profile", o.profile, "profile NAME (searched) or PATH to a .yaml")->required();
  app.add_option("--model", o.model, "the target model (path or name): ${model}");
  app.add_option("--drafter", o.drafter, "a drafter directory: ${drafter}, enables spec decoding");
  app.add_option("--set", o.sets, "KEY=VALUE for a profile variable (repeatable)");
  app.add_option("--profiles-dir", o.profiles_dirs, "a directory of profiles searched first");
  app.add_option("--host", o.host, "bind address: ${host} (default 127.0.0.1)");
  app.add_option("--advertise-host", o.advertise_host, "host name put in the endpoint output");
  app.add_option("--log-dir", o.log_dir, "where engine.stdout.log / engine.stderr.log go");
  app.add_option("--load-timeout", o.load_timeout, "override the profile's timeouts.load");
  app.add_option("--probe-timeout", o.probe_timeout, "override the profile's timeouts.probe");
  app.add_option("--stop-grace", o.stop_grace, "override the profile's timeouts.stop_grace");
  app.add_flag("--no-echo", quiet, "do not copy the engine's output to lh-serve's own");
  app.add_flag("--dry-run", dry_run, "print the command, environment and endpoint; start nothing");
  app.add_option("--log-level", log_level, "debug | info | warn | error");
  app.add_flag("--engine-version", engine_version,
               "run the profile's version_command, print its first line; start nothing");
  CLI11_PARSE(app, argc, argv);
  if (engine_version) {
    Result<std::string> v = EngineVersion(o, ExeDir(), /*timeout_ms=*/10'000);
    if (!v.ok()) {
      std::fprintf(stderr, "lh-serve: %s\n", ToStd(v.status().message()).c_str());
      return 2;
    }
    std::printf("%s\n", v->c_str());
    return 0;
  }
  o.echo = !quiet;
  if (const char* node = std::getenv("LONGHAUL_ADVERTISE_HOST")) o.node_host = node;

  SetupLogging(log_level);
  EventWriter events = EventWriter::FromEnv();
  auto cfg = PrepareServe(o, ExeDir());
  if (!cfg.ok()) {
    std::string msg = ToStd(cfg.status().message());
    events.Message("error", msg);
    std::fprintf(stderr, "lh-serve: %s\n", msg.c_str());
    return 2;
  }
  if (dry_run) {
    std::printf("profile: %s\n", cfg->profile.path.c_str());
    for (const auto& a : cfg->command.argv) std::printf("argv: %s\n", a.c_str());
    for (const auto& [k, v] : cfg->command.env) std::printf("env: %s=%s\n", k.c_str(), v.c_str());
    std::printf("endpoint: %s\nmodel: %s\n", cfg->endpoint.c_str(), cfg->model.c_str());
    return 0;
  }
  boost::asio::io_context io(1);
  ServeSupervisor supervisor(io, std::move(*cfg), events);
  Status s = supervisor.Run();
  if (!s.ok()) {
    std::fprintf(stderr, "lh-serve: %s\n", ToStd(s.message()).c_str());
    return 1;
  }
  return 0;
}
