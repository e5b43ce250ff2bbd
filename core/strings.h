// String helpers. Debian's absl keeps its own absl::string_view (not std::string_view), so
// absl::StrCat does not take std::string_view; longhaul code uses these instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"

namespace longhaul {
namespace strings_internal {

inline void Append(std::string& out, std::string_view s) { out.append(s); }
inline void Append(std::string& out, const std::string& s) { out.append(s); }
inline void Append(std::string& out, const char* s) { out.append(s); }
inline void Append(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
inline void Append(std::string& out, char c) { out.push_back(c); }
void Append(std::string& out, double v);
template <typename T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, bool>)
void Append(std::string& out, T v) {
  out += std::to_string(v);
}
inline void Append(std::string& out, bool b) { out += b ? "true" : "false"; }

}  // namespace strings_internal

// Concatenates strings and numbers: StrCat("line ", 3, ": ", msg). Doubles print as %g.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::Append(out, args), ...);
  return out;
}

std::vector<std::string> StrSplit(std::string_view s, char sep);
std::string StrJoin(const std::vector<std::string>& parts, std::string_view sep);
std::string_view StripWhitespace(std::string_view s);
bool StartsWith(std::string_view s, std::string_view prefix);
bool EndsWith(std::string_view s, std::string_view suffix);

// The whole of `s` as a decimal integer or a number; nullopt when it is not one (empty, extra
// characters) or is out of range. Never throws: for text from outside (file names, flags).
std::optional<int64_t> ParseInt64(std::string_view s);
std::optional<double> ParseDouble(std::string_view s);

// absl::string_view (as Status::message() returns) to std::string.
inline std::string ToStd(absl::string_view s) { return std::string(s.data(), s.size()); }

}  // namespace longhaul
