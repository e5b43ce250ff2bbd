// The command backend's flags, shared by lh-extract's and lh-finetune's main.cc, the entry
// point that runs it with real processes, signals and time, and the choice between it and the
// in-process refengine backend (--backend) that both binaries make the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/event_writer.h"
#include "core/status.h"
#include "stages/command/command_runner.h"

namespace longhaul::command {

struct CommandFlags {
  explicit CommandFlags(std::string stage) { options.stage = std::move(stage); }

  // Adds --progress-pattern, --loss-pattern, --epoch-pattern, --metric-pattern,
  // --progress-unit, --checkpoint-glob, --resume-flag, --resume-with-checkpoint,
  // --expect-file, --output, --config-file, --config-set, --grace, --checkpoint-poll and the
  // command after "--".
  void Add(CLI::App& app);
  // The names of the flags above that were given (to refuse them with another backend).
  std::vector<std::string> Given() const;

  CommandOptions options;
  std::string grace = "8s";
  std::string poll = "2s";
  std::vector<CLI::Option*> added;
};

// Names of the options in `opts` that were given on the command line.
std::vector<std::string> GivenOptions(const std::vector<CLI::Option*>& opts);

// Parses the durations, validates (exit 2 with a message on stderr naming the flag), then runs
// the command (command_runner.h) on a fresh io_context with the system clock. `out` is the
// output directory ("" = the working directory); `resume` is true when this attempt resumes.
int RunCommandStage(CommandFlags& flags, const std::string& out, bool resume, EventWriter& events);

// A stage binary with two backends: `refengine` (the reference model, in-process) and
// `command` (an external command, above).
struct BackendFlags {
  explicit BackendFlags(const std::string& stage_name) : stage(stage_name), command(stage_name) {}

  std::string stage;  // "lh-extract": prefixes messages on stderr
  std::string backend;
  std::string out;
  CommandFlags command;
  // Flags of the refengine backend, added by main.cc: refused with --backend command.
  std::vector<CLI::Option*> refengine_only;
};

// Adds --backend (required; `refengine_what` says what the in-process backend runs, e.g. "the
// reference target"), --out (`out_help`) and the command backend's flags (CommandFlags::Add).
void AddBackendFlags(CLI::App& app, BackendFlags& flags, const std::string& refengine_what,
                     const std::string& out_help);

// Runs the chosen backend once the flags are parsed; returns the exit code. command: refuses
// the refengine-only flags (exit 2), then RunCommandStage. refengine: refuses the command
// backend's flags, needs --data (`data`) and --out (exit 2), then run_refengine(out); its error
// goes to stderr and an error event, exit 2 for InvalidArgument, else 1.
int RunBackend(BackendFlags& flags, const std::string& data, bool resume, EventWriter& events,
               const std::function<Status(const std::string& out)>& run_refengine);

// Whether the agent started this attempt as a resume (LONGHAUL_RESUME=1).
bool ResumeFromEnv();

}  // namespace longhaul::command
