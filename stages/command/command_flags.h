// The command backend's flags, shared by lh-extract's and lh-finetune's main.cc, and the
// entry point that runs it with real processes, signals and time.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/event_writer.h"
#include "stages/command/command_runner.h"

namespace longhaul::command {

struct CommandFlags {
  explicit CommandFlags(std::string stage) { options.stage = std::move(stage); }

  // Adds --progress-pattern, --loss-pattern, --epoch-pattern, --metric-pattern,
  // --progress-unit, --checkpoint-glob, --resume-flag, --resume-with-checkpoint,
  // --expect-file, --output, --grace, --checkpoint-poll and the command after "--".
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

}  // namespace longhaul::command
