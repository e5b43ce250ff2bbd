// Finding lines in a stage's log, read in chunks from its start (or any line start): the one
// matcher behind `longhaul logs --grep` (docs/cli.md) and the HTTP log search (docs/http-api.md,
// "Searching a log"). A line is matched as a terminal shows it: colour and other escape
// sequences removed, and of a line redrawn with \r only its last state; the line handed to
// the caller is the raw one, with its newline.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <string_view>

#include "core/status.h"

namespace longhaul {

struct LogPattern {
  std::string text;          // not empty
  bool regex = false;        // ECMAScript regular expression; otherwise the literal text
  bool ignore_case = false;  // ASCII letters only for a literal
};

// `line` (without its newline) as a terminal would show it: ANSI escape sequences (CSI, such
// as colours and cursor moves; OSC, such as window titles; two-byte ESC sequences) removed,
// and only what follows the last \r (a trailing \r, of CRLF, is dropped first).
std::string VisibleLogLine(std::string_view line);

class LogLineMatcher {
 public:
  // Fails (InvalidArgument naming `what`) on an empty text or a regular expression that does
  // not parse.
  static Result<LogLineMatcher> Make(const LogPattern& pattern, std::string_view what);
  // Whether the visible text of `line` (no newline) holds the pattern.
  bool Matches(std::string_view line) const;

 private:
  LogLineMatcher() = default;
  LogPattern pattern_;
  std::shared_ptr<const std::regex> re_;  // set for a regular expression
};

// Splits bytes fed in order into lines and reports each matching one with the byte offset of
// its start. A line longer than kMaxLogSearchLine is matched in pieces of that size.
class LogLineSearch {
 public:
  // (offset of the line's first byte, the raw line with its newline if it has one)
  using OnMatch = std::function<void(int64_t, std::string_view)>;
  static constexpr size_t kMaxLogSearchLine = 1024 * 1024;

  // `start`: the offset of the first byte that will be fed.
  LogLineSearch(LogLineMatcher matcher, int64_t start);
  // The bytes that follow what was fed so far; a line not yet ended waits for its end.
  void Feed(std::string_view data, const OnMatch& on_match);
  // The log has ended: a last line without a newline counts too.
  void Finish(const OnMatch& on_match);
  // The offset of the line not yet ended: where a search that stops here goes on.
  int64_t pending_line() const { return start_; }

 private:
  void Emit(std::string_view line, const OnMatch& on_match);
  LogLineMatcher matcher_;
  int64_t start_;        // offset of partial_'s first byte
  std::string partial_;  // the line not yet ended
};

}  // namespace longhaul
