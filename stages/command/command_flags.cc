#include "stages/command/command_flags.h"

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/clock.h"
#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::command {

void CommandFlags::Add(CLI::App& app) {
  CommandOptions& o = options;
  ScanPatterns& p = o.patterns;
  auto* g = "command backend";
  // Repeatable options take one value per occurrence: with CLI11's default for vectors (extra
  // args allowed), the "--" right after one would end its values and be lost, leaving the
  // command's own flags to be parsed as ours.
  added = {
      app.add_option("--progress-pattern", p.progress,
                     "regex on the command's output: group 1 = done, group 2 = total")
          ->group(g),
      app.add_option("--progress-unit", p.progress_unit, "unit of --progress-pattern's counts")
          ->capture_default_str()
          ->group(g),
      app.add_option("--loss-pattern", p.loss, "regex: group 1 = loss (metric 'loss')")->group(g),
      app.add_option("--epoch-pattern", p.epoch,
                     "regex: group 1 = epoch, optional group 2 = total epochs (metric 'epoch')")
          ->group(g),
      app.add_option("--metric-pattern", p.metrics, "NAME=REGEX, group 1 = value (repeatable)")
          ->allow_extra_args(false)
          ->group(g),
      app.add_option("--checkpoint-glob", o.checkpoint_glob,
                     "glob of checkpoints in --out, e.g. 'epoch_*' (reported as they complete)")
          ->group(g),
      app.add_option("--resume-flag", o.resume_flag,
                     "appended to the command on a resume (LONGHAUL_RESUME=1); '{checkpoint}' "
                     "in it becomes the newest checkpoint's path")
          ->group(g),
      app.add_flag("--resume-with-checkpoint", o.resume_with_checkpoint,
                   "on a resume, also append the newest checkpoint's path as an argument")
          ->group(g),
      app.add_option("--expect-file", o.expect_files,
                     "must exist and be non-empty after exit 0, else the stage fails (repeatable)")
          ->allow_extra_args(false)
          ->group(g),
      app.add_option("--output", o.outputs,
                     "NAME=PATH: checked like --expect-file, then reported as output and "
                     "artifact NAME (repeatable)")
          ->allow_extra_args(false)
          ->group(g),
      app.add_option("--config-file", o.config_file,
                     "write a YAML config built from --config-set here (relative to --out) "
                     "before starting the command; '{config}' in its arguments becomes the path")
          ->group(g),
      app.add_option("--config-set", o.config_sets,
                     "KEY=VALUE for --config-file; a dotted KEY nests (training.num_epochs=5), "
                     "VALUE is read as YAML (repeatable)")
          ->allow_extra_args(false)
          ->group(g),
      app.add_option("--grace", grace, "SIGTERM -> SIGKILL of the command's process group")
          ->capture_default_str()
          ->group(g),
      app.add_option("--checkpoint-poll", poll, "how often checkpoints are looked for")
          ->capture_default_str()
          ->group(g),
      app.add_option("command", o.argv, "the command and its arguments, after '--'")->group(g),
  };
}

std::vector<std::string> GivenOptions(const std::vector<CLI::Option*>& opts) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : opts) {
    if (opt->count() > 0) out.push_back(opt->get_name());
  }
  return out;
}

std::vector<std::string> CommandFlags::Given() const { return GivenOptions(added); }

int RunCommandStage(CommandFlags& flags, const std::string& out, bool resume, EventWriter& events) {
  CommandOptions& o = flags.options;
  o.out = out.empty() ? "." : out;
  o.resume = o.resume || resume;
  for (auto [flag, text, slot] : {std::tuple{"--grace", &flags.grace, &o.grace_ms},
                                  std::tuple{"--checkpoint-poll", &flags.poll, &o.poll_ms}}) {
    auto ms = ParseDurationMs(*text);
    if (!ms.ok()) {
      std::cerr << o.stage << ": " << flag << ": " << ms.status().message() << "\n";
      return 2;
    }
    *slot = *ms;
  }
  Status s = ValidateCommandOptions(o);
  if (!s.ok()) {
    std::cerr << o.stage << ": " << s.message() << "\n";
    events.Message("error", std::string(s.message()));
    return 2;
  }
  boost::asio::io_context io;
  return RunCommandBackend(io, o, events, std::cout, SystemClock::Get());
}

void AddBackendFlags(CLI::App& app, BackendFlags& flags, const std::string& refengine_what,
                     const std::string& out_help) {
  app.add_option(
         "--backend", flags.backend,
         StrCat("refengine (", refengine_what, ", in-process) or command (an external command)"))
      ->required()
      ->check(CLI::IsMember({"refengine", "command"}));
  app.add_option("--out", flags.out, out_help);
  flags.command.Add(app);
}

int RunBackend(BackendFlags& flags, const std::string& data, bool resume, EventWriter& events,
               const std::function<Status(const std::string& out)>& run_refengine) {
  const std::string& stage = flags.stage;
  if (flags.backend == "command") {
    if (auto given = GivenOptions(flags.refengine_only); !given.empty()) {
      std::cerr << stage << ": " << StrJoin(given, ", ")
                << " apply only to --backend refengine (pass them to the command instead)\n";
      return 2;
    }
    return RunCommandStage(flags.command, flags.out, resume, events);
  }
  if (auto given = flags.command.Given(); !given.empty()) {
    std::cerr << stage << ": " << StrJoin(given, ", ") << " apply only to --backend command\n";
    return 2;
  }
  if (data.empty() || flags.out.empty()) {
    std::cerr << stage << ": --backend refengine needs --data and --out\n";
    return 2;
  }
  Status s = run_refengine(flags.out);
  if (!s.ok()) {
    std::cerr << stage << ": " << s.message() << "\n";
    events.Message("error", std::string(s.message()));
    return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}

bool ResumeFromEnv() {
  const char* r = std::getenv("LONGHAUL_RESUME");
  return r != nullptr && std::strcmp(r, "1") == 0;
}

}  // namespace longhaul::command
