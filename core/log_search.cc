#include "core/log_search.h"

#include <algorithm>

#include "core/strings.h"

namespace longhaul {
namespace {

constexpr char kLogEsc = '\x1b';
constexpr char kLogBel = '\x07';

// The length of the escape sequence that starts at s[i] (s[i] is ESC); to the end of `s` when
// it is cut off.
size_t LogEscapeLength(std::string_view s, size_t i) {
  if (i + 1 >= s.size()) return s.size() - i;
  char kind = s[i + 1];
  size_t j = i + 2;
  if (kind == '[') {  // CSI: parameter and intermediate bytes, then one final byte @..~
    while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
    return std::min(j + 1, s.size()) - i;
  }
  if (kind == ']' || kind == 'P' || kind == '_' || kind == '^' || kind == 'X') {
    // OSC and other strings: up to BEL or ST (ESC \).
    for (; j < s.size(); ++j) {
      if (s[j] == kLogBel) return j + 1 - i;
      if (s[j] == kLogEsc && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
    }
    return s.size() - i;
  }
  return 2;  // ESC and one byte (ESC 7, ESC =, ...)
}

char LowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

}  // namespace

std::string VisibleLogLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (size_t cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size();) {
    if (line[i] == kLogEsc) {
      i += LogEscapeLength(line, i);
    } else {
      out += line[i++];
    }
  }
  return out;
}

Result<LogLineMatcher> LogLineMatcher::Make(const LogPattern& pattern, std::string_view what) {
  if (pattern.text.empty()) return absl::InvalidArgumentError(StrCat(what, ": empty pattern"));
  LogLineMatcher m;
  m.pattern_ = pattern;
  if (pattern.regex) {
    auto flags = std::regex::ECMAScript;
    if (pattern.ignore_case) flags |= std::regex::icase;
    try {
      m.re_ = std::make_shared<const std::regex>(pattern.text, flags);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(
          StrCat(what, " '", pattern.text, "': not a regular expression: ", e.what()));
    }
  } else if (pattern.ignore_case) {
    m.pattern_.text = LowerAscii(pattern.text);
  }
  return m;
}

bool LogLineMatcher::Matches(std::string_view line) const {
  // Most lines hold no escape: match them as they are, without a copy.
  bool plain =
      line.find(kLogEsc) == std::string_view::npos && line.find('\r') == std::string_view::npos;
  std::string visible;
  if (!plain) {
    visible = VisibleLogLine(line);
    line = visible;
  }
  if (re_) return std::regex_search(line.begin(), line.end(), *re_);
  if (!pattern_.ignore_case) return line.find(pattern_.text) != std::string_view::npos;
  auto it = std::search(line.begin(), line.end(), pattern_.text.begin(), pattern_.text.end(),
                        [](char a, char b) { return LowerAscii(a) == b; });
  return it != line.end();
}

LogLineSearch::LogLineSearch(LogLineMatcher matcher, int64_t start)
    : matcher_(std::move(matcher)), start_(start) {}

void LogLineSearch::Feed(std::string_view data, const OnMatch& on_match) {
  while (!data.empty()) {
    size_t nl = data.find('\n');
    size_t take = nl == std::string_view::npos ? data.size() : nl + 1;
    size_t room = kMaxLogSearchLine - partial_.size();
    if (take > room) take = room;  // an overlong line: match what fits, go on with the rest
    bool ends = (nl != std::string_view::npos && take == nl + 1) || take == room;
    if (ends && partial_.empty()) {
      Emit(data.substr(0, take), on_match);  // the common case: no copy
    } else {
      partial_.append(data.substr(0, take));
      if (ends) {
        Emit(partial_, on_match);
        partial_.clear();
      }
    }
    data.remove_prefix(take);
  }
}

void LogLineSearch::Finish(const OnMatch& on_match) {
  if (!partial_.empty()) Emit(partial_, on_match);
  partial_.clear();
}

void LogLineSearch::Emit(std::string_view line, const OnMatch& on_match) {
  std::string_view text = line;
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  if (matcher_.Matches(text)) on_match(start_, line);
  start_ += static_cast<int64_t>(line.size());
}

}  // namespace longhaul
