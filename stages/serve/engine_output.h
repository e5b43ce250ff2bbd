// What lh-serve does with its engine's output (the bytes GroupProcess reads): every line is
// appended to a log file per stream (engine.stdout.log, engine.stderr.log), echoed to
// lh-serve's own stdout/stderr when asked, then handed to a callback without its line end.
//
// Lines end at '\n' (a '\r' before it stays in the logs and is dropped for the callback); a
// last line without one counts when its stream ends, and is logged with a '\n' added. Not
// thread-safe.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "stages/common/line_splitter.h"

namespace longhaul::stages {

class EngineOutput {
 public:
  using LineFn = std::function<void(bool is_stderr, std::string_view line)>;

  // Opens the log files for appending ("" = no file). Errors name the file.
  static Result<std::unique_ptr<EngineOutput>> Open(const std::string& stdout_log,
                                                    const std::string& stderr_log, bool echo,
                                                    LineFn on_line);
  ~EngineOutput();

  // Bytes of one stream as they arrive.
  void Feed(bool is_stderr, std::string_view bytes);
  // The stream reached its end.
  void End(bool is_stderr);

 private:
  EngineOutput(bool echo, LineFn on_line) : echo_(echo), on_line_(std::move(on_line)) {}
  void Line(bool is_stderr, std::string_view line);

  bool echo_;
  LineFn on_line_;
  std::FILE* out_log_ = nullptr;
  std::FILE* err_log_ = nullptr;
  // Logs keep whole lines, however long: no cut.
  LineSplitter out_lines_{std::string::npos, /*split_at_cr=*/false};
  LineSplitter err_lines_{std::string::npos, /*split_at_cr=*/false};
};

}  // namespace longhaul::stages
