// Flags of lh-testjob, the configurable stage program used by tests and benchmarks.
//
// ParseTestJobArgs never exits or prints: it returns the options, or InvalidArgument naming
// the flag and what was wrong with its value. TestJobHelp() is the text of --help.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace longhaul::testjob {

struct TestJobOptions {
  bool help = false;
  double sleep_s = 0;
  std::vector<std::string> print;  // lines to stdout
  std::vector<std::string> stderr_lines;
  int exit_code = 0;
  int fail_first = 0;    // fail while $LONGHAUL_ATTEMPT <= fail_first
  int64_t progress = 0;  // progress events spread over the sleep
  int64_t events = 0;    // progress lines as fast as possible
  std::vector<std::pair<std::string, std::string>> outputs;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::pair<std::string, std::string>> artifacts;  // name, relative path
  int spawn_children = 0;
  std::string pid_dir;  // where children.pids goes; default $LONGHAUL_WORK_DIR
  bool ignore_sigterm = false;
  int64_t malformed = 0;
  std::optional<double> stall_after_s;
  bool ready = false;
  int64_t work = 0;  // resumable work items 1..work
  int64_t step_ms = 0;
  int64_t checkpoint_every = 1;
  bool checkpoint_on_usr1 = false;  // a notice before a stop: checkpoint at the next item
  std::string pid_file;
};

Result<TestJobOptions> ParseTestJobArgs(const std::vector<std::string>& args);

std::string TestJobHelp();

}  // namespace longhaul::testjob
