// The `command` backend of lh-extract and lh-finetune: supervises an external command given in
// the workflow (SpecForge's hidden-state and training scripts under torchrun, say) as the
// stage's real work.
//
//   config     with --config-file, first writes the YAML built from --config-set there
//              (config_file.h); '{config}' in the command's arguments becomes its path
//   start      the command in its own process group (stages/common/group_process.h); on
//              a resume (LONGHAUL_RESUME=1 or --resume) with --resume-flag, that flag is
//              appended, with the newest checkpoint's path when asked
//   watch      its output, echoed unchanged, is scanned for progress / loss / epoch / metrics
//              (output_scanner.h); checkpoints matching --checkpoint-glob are reported as
//              they complete (checkpoint_watcher.h)
//   stop       SIGTERM/SIGINT to the supervisor go to the command's group; SIGKILL after
//              the grace period; remnants of the group are killed once the command has ended
//   validate   after exit 0, every --expect-file / --output path must exist and be non-empty
//
// Exit code: the command's (128+N when it died of signal N); after a forwarded stop, the
// command's code if non-zero, else 128+the signal received; kExitValidationFailed when the
// command succeeded but an expected output is missing; 127 when it could not be started.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/event_writer.h"
#include "core/status.h"
#include "stages/command/output_scanner.h"

namespace longhaul::command {

constexpr int kExitValidationFailed = 3;
constexpr int kExitNotStarted = 127;

struct CommandOptions {
  std::string stage = "lh-command";  // names the supervisor in its log lines and messages
  std::vector<std::string> argv;     // the command
  std::string out = ".";  // checkpoints and relative --expect-file / --output paths live here
  ScanPatterns patterns;
  std::string checkpoint_glob;          // relative to `out`
  std::string resume_flag;              // appended on resume; "{checkpoint}" in it is replaced
  bool resume_with_checkpoint = false;  // also append the newest checkpoint's path
  bool resume = false;
  std::vector<std::string> expect_files;
  std::vector<std::string> outputs;  // NAME=PATH: validated, then output + artifact events
  std::string config_file;               // written before the start; relative to `out`
  std::vector<std::string> config_sets;  // KEY=VALUE pairs it is built from
  int64_t grace_ms = 8000;           // SIGTERM -> SIGKILL of the command's group
  int64_t poll_ms = 2000;            // checkpoint polling and flushing rate-limited events
};

// Checks what can be checked before starting: a command is given, patterns compile, outputs
// are NAME=PATH, the config renders, '{config}' is used only with --config-file.
// InvalidArgument names the flag.
Status ValidateCommandOptions(const CommandOptions& o);

// Where --config-file is written: relative to `out` unless absolute; "" without one.
std::string ConfigPath(const CommandOptions& o);

// The argv to run: the command with '{config}' replaced by ConfigPath, plus the resume flag
// (and checkpoint) when resuming. `newest` is the newest checkpoint, "" when none. `note`
// explains what was done.
std::vector<std::string> CommandArgv(const CommandOptions& o, const std::string& newest,
                                     std::string* note);

// Runs the command to its end on `io` (which must not be running elsewhere); installs its own
// SIGTERM/SIGINT handling for the duration. Supervisor lines go to `log`.
int RunCommandBackend(boost::asio::io_context& io, const CommandOptions& o, EventWriter& events,
                      std::ostream& log, const Clock* clock);

}  // namespace longhaul::command
