#include "core/duration.h"

#include <cctype>
#include <cstdio>

#include "core/strings.h"

namespace longhaul {
namespace {

// Milliseconds as an int64, or an error when they do not fit (a cast would be undefined).
Result<int64_t> InRange(std::string_view text, double ms) {
  if (!(ms >= 0 && ms < 9.2e18)) {
    return absl::InvalidArgumentError(StrCat("bad duration '", text, "': out of range"));
  }
  return static_cast<int64_t>(ms);
}

}  // namespace

Result<int64_t> ParseDurationMs(std::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("empty duration");
  bool bare = true;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') bare = false;
  }
  if (bare) {
    std::optional<double> seconds = ParseDouble(text);
    if (!seconds) return absl::InvalidArgumentError(StrCat("bad duration '", text, "'"));
    return InRange(text, *seconds * 1000.0);
  }
  double total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (start == i) {
      return absl::InvalidArgumentError(
          StrCat("bad duration '", text, "': expected a number at '", text.substr(i), "'"));
    }
    std::optional<double> value = ParseDouble(text.substr(start, i - start));
    if (!value) {
      return absl::InvalidArgumentError(StrCat("bad duration '", text, "': '",
                                               text.substr(start, i - start),
                                               "' is not a number"));
    }
    size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1000;
    else if (unit == "m") scale = 60'000;
    else if (unit == "h") scale = 3'600'000;
    else if (unit == "d") scale = 86'400'000;
    else {
      return absl::InvalidArgumentError(StrCat(
          "bad duration '", text, "': unit '", unit, "' is not one of ms, s, m, h, d"));
    }
    total += *value * scale;
  }
  return InRange(text, total);
}

std::string FormatDurationMs(int64_t ms) {
  if (ms < 0) return "-" + FormatDurationMs(-ms);
  if (ms < 1000) return StrCat(ms, "ms");
  int64_t s = ms / 1000;
  char buf[32];
  if (s < 60) return StrCat(s, "s");
  if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>((s % 3600) / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>((s % 86400) / 3600));
  }
  return buf;
}

std::string FormatWholeDurationMs(int64_t ms) {
  constexpr int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
  if (ms > 0 && ms % kDay == 0) return StrCat(ms / kDay, "d");
  if (ms > 0 && ms % kHour == 0) return StrCat(ms / kHour, "h");
  if (ms > 0 && ms % kMinute == 0) return StrCat(ms / kMinute, "m");
  return FormatDurationMs(ms);
}

}  // namespace longhaul
