// lh-gpucheck: check GPUs before work and before a quarantined GPU returns to service
// (docs/gpus.md, "Pre-flight: lh-gpucheck"). Flags only; the checks live in
// longhaul_stages_gpucheck.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/event_writer.h"
#include "stages/gpucheck/gpucheck_app.h"

int main(int argc, char** argv) {
  using namespace longhaul::gpucheck;
  CLI::App app{
      "lh-gpucheck: check each GPU given (every visible one by default) with a memory pattern "
      "test, a compute burn whose results are checked, and peer copies between GPUs. One "
      "summary line per GPU on stdout; stage events when $LONGHAUL_EVENTS is set. Exit 0 all "
      "passed, 1 a GPU failed a check (stderr names it), 2 bad flags, 3 no usable CUDA driver. "
      "With `-- COMMAND ARGS`, a pre-flight: COMMAND runs in its place when every GPU passed."};
  GpucheckOptions o;
  QuickDefaults quick;
  bool quick_mode = false;
  std::string patterns = "zeros,ones,walking-ones,walking-zeros,address,random";
  double p2p_mib = 256;
  bool no_p2p = false;

  app.add_option("--cuda-library", o.cuda_library,
                 "the CUDA driver library to dlopen (a test double's path in tests)")
      ->capture_default_str();
  app.add_option("--gpus", o.gpus,
                 "CUDA ordinals to check, comma-separated, as this process sees them (after "
                 "CUDA_VISIBLE_DEVICES); default: every visible GPU")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--quick", quick_mode,
               "the return-to-service check, a few seconds per GPU: --memory-fraction 0.01, "
               "--patterns walking-ones,address,random, --burn-seconds 2, --p2p-mib 64 unless "
               "given");
  auto* fraction = app.add_option("--memory-fraction", o.memory.fraction,
                                  "fraction of each GPU's free memory the pattern test covers")
                       ->check(CLI::Range(1e-6, 0.95))
                       ->capture_default_str();
  auto* patterns_opt =
      app.add_option("--patterns", patterns,
                     "memory patterns, comma-separated: zeros, ones, walking-ones, "
                     "walking-zeros, address, random")
          ->capture_default_str();
  app.add_option("--seed", o.memory.seed, "seed of the random pattern")->capture_default_str();
  auto* burn_seconds =
      app.add_option("--burn-seconds", o.burn.seconds, "compute burn length per GPU, seconds")
          ->check(CLI::Range(0.0, 86400.0))
          ->capture_default_str();
  app.add_option("--burn-launches", o.burn.launches,
                 "instead of --burn-seconds: exactly this many kernel launches")
      ->check(CLI::PositiveNumber);
  app.add_option("--burn-threads", o.burn.threads, "threads per burn launch")
      ->check(CLI::Range(1u, 1u << 30))
      ->capture_default_str();
  app.add_option("--burn-rounds", o.burn.rounds, "rounds of 8 FMAs per thread per launch")
      ->check(CLI::Range(1u, 1u << 24))
      ->capture_default_str();
  auto* p2p_mib_opt = app.add_option("--p2p-mib", p2p_mib, "size of each peer copy, MiB")
                          ->check(CLI::Range(0.001, 65536.0))
                          ->capture_default_str();
  app.add_option("--p2p-copies", o.p2p_options.copies, "timed peer copies per GPU pair")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--report", o.report_path,
                 "also write the results as JSON to this file (default: none)");
  app.add_flag("--no-p2p", no_p2p,
               "skip the peer checks (GPUs without NVLink or a P2P path; one GPU skips them "
               "anyway)");
  std::vector<std::string> command;
  app.add_option("command", command,
                 "after --: the command to run in lh-gpucheck's place (exec, same process) when "
                 "every GPU passed; not run when one did not");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Usage errors exit with 2, as the other stages do; --help with 0.
    return app.exit(e) == 0 ? 0 : kExitBadInput;
  }
  if (quick_mode) {
    if (fraction->count() == 0) o.memory.fraction = quick.memory_fraction;
    if (burn_seconds->count() == 0) o.burn.seconds = quick.burn_seconds;
    if (p2p_mib_opt->count() == 0) p2p_mib = static_cast<double>(quick.p2p_bytes >> 20);
  }
  if (quick_mode && patterns_opt->count() == 0) {
    o.memory.patterns = quick.patterns;
  } else {
    auto parsed = ParsePatterns(patterns);
    if (!parsed.ok()) {
      std::cerr << "lh-gpucheck: " << parsed.status().message() << "\n";
      return kExitBadInput;
    }
    o.memory.patterns = *parsed;
  }
  o.p2p = !no_p2p;
  o.p2p_options.bytes = static_cast<uint64_t>(p2p_mib * (1 << 20));
  longhaul::EventWriter events = longhaul::EventWriter::FromEnv();
  int rc = RunGpucheck(o, events, std::cout, std::cerr);
  if (command.empty()) return rc;
  // A stage's pre-flight (docs/gpus.md, "Pre-flight before a stage").
  if (rc != kExitAllPassed) {
    std::cerr << "lh-gpucheck: pre-flight failed (exit " << rc << "); " << command[0]
              << " was not run\n";
    return rc;
  }
  events.Message("info", "pre-flight passed; starting " + command[0]);
  std::cout.flush();
  std::vector<char*> args;
  for (std::string& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::cerr << "lh-gpucheck: cannot run " << command[0] << ": " << std::strerror(errno) << "\n";
  return 127;
}
