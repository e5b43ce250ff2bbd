// Helpers shared by every test binary: temp dirs, explicit waits with deadlines, and real
// subprocesses for integration tests. No test sleeps to pass: it waits for a condition.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace longhaul::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction
// unless LONGHAUL_KEEP_TEST_DIRS is set.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Join(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

// Calls `pred` every `poll_ms` until it returns true or `timeout_ms` passes; returns the last
// result. For waiting on real processes and daemons, never for making a test pass by delay.
bool WaitFor(const std::function<bool()>& pred, int64_t timeout_ms, int64_t poll_ms = 10);

// Where the build put the binaries ($LONGHAUL_BIN_DIR, set by ctest) and the source tree.
std::string BinDir();
std::string SourceDir();
std::string BinPath(const std::string& name);

// Writes `data` to `path` (whole file); CHECK-fails on error.
void WriteTextFile(const std::string& path, const std::string& data);
std::string ReadTextFile(const std::string& path);  // "" when missing
// The lines of `text`, without their "\n" (a last line without one counts too).
std::vector<std::string> SplitLines(const std::string& text);

// A child process in its own process group, output to `log_path` (or /dev/null). The
// destructor SIGKILLs the group and reaps the child if it still runs.
class Subprocess {
 public:
  static Result<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {},
      const std::string& log_path = "");
  ~Subprocess();

  pid_t pid() const { return pid_; }
  void Signal(int sig);       // to the child only
  void SignalGroup(int sig);  // to its process group
  // Waits up to `timeout_ms` for the child to end; returns its wait status.
  std::optional<int> Wait(int64_t timeout_ms);
  bool Running();

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  std::optional<int> status_;
};

struct CommandResult {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs a command to completion (with a deadline; killed past it), capturing its output.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         int64_t timeout_ms = 60'000, const std::string& stdin_data = "");

// True if a process with this pid exists (and is not a zombie).
bool ProcessAlive(pid_t pid);
// utime + stime of a process so far, in seconds (0 when it is gone). For CPU figures.
double ProcessCpuSeconds(pid_t pid);

}  // namespace longhaul::testing
