#include "cli/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::cli {
namespace {

std::string FormatTime(int64_t ms, const char* format) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

bool IsContinuationByte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

}  // namespace

std::string FormatDuration(int64_t ms) { return ms < 0 ? "-" : FormatDurationMs(ms); }

std::string FormatBytes(int64_t bytes) {
  if (bytes < 0) return "-";
  if (bytes < 1024) return StrCat(bytes, " B");
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024 && unit < 5) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string FormatLocalTime(int64_t ms) {
  return ms <= 0 ? "-" : FormatTime(ms, "%Y-%m-%d %H:%M:%S");
}

std::string FormatClockTime(int64_t ms) { return FormatTime(ms, "%H:%M:%S"); }

std::string FormatAgo(int64_t then_ms, int64_t now_ms) {
  if (then_ms <= 0) return "never";
  int64_t d = now_ms - then_ms;
  if (d < 1000) return "just now";
  return StrCat(FormatDurationMs(d), " ago");
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "nan";
  if (std::fabs(v - std::round(v)) < 1e-9 && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<int64_t>(std::llround(v)));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

std::string FormatProgressBar(double done, double total, int width) {
  width = std::max(width, 1);
  std::string bar(static_cast<size_t>(width), ' ');
  if (total > 0) {
    double frac = std::clamp(done / total, 0.0, 1.0);
    int filled = static_cast<int>(std::floor(frac * width));
    for (int i = 0; i < filled; ++i) bar[i] = '=';
    if (filled < width && done > 0) bar[filled] = '>';
  }
  return StrCat("[", bar, "]");
}

std::string FormatProgress(double done, double total, std::string_view unit) {
  if (done <= 0 && total <= 0) return "";
  std::string text =
      total > 0 ? StrCat(FormatNumber(done), "/", FormatNumber(total)) : FormatNumber(done);
  if (!unit.empty()) text += StrCat(" ", unit);
  if (total > 0) {
    int pct = static_cast<int>(std::floor(std::clamp(done / total, 0.0, 1.0) * 100));
    text += StrCat(" (", pct, "%)");
  }
  return text;
}

std::string FormatRate(double per_second, std::string_view unit) {
  if (!(per_second > 0)) return "";
  char buf[32];
  if (per_second >= 100) {
    std::snprintf(buf, sizeof buf, "%.0f", per_second);
  } else if (per_second >= 1) {
    std::snprintf(buf, sizeof buf, "%.1f", per_second);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f", per_second);
  }
  return unit.empty() ? StrCat(buf, "/s") : StrCat(buf, " ", unit, "/s");
}

std::string FormatEta(double seconds) {
  if (seconds < 0 || std::isnan(seconds)) return "-";
  return FormatDurationMs(static_cast<int64_t>(seconds * 1000));
}

int DisplayWidth(std::string_view s) {
  int n = 0;
  for (char c : s) n += IsContinuationByte(c) ? 0 : 1;
  return n;
}

std::string Truncate(std::string_view s, int width) {
  if (width <= 0 || DisplayWidth(s) <= width) return std::string(s);
  std::string out;
  int n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsContinuationByte(s[i])) {
      if (n == width - 1) break;
      ++n;
    }
    out += s[i];
  }
  return out + "\u2026";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  for (const std::string& a : argv) {
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) ||
             std::string_view("-_./=:,+@%").find(c) != std::string_view::npos;
    });
    if (plain) {
      words.push_back(a);
      continue;
    }
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    words.push_back(q + "'");
  }
  return StrJoin(words, " ");
}

std::string FormatGpuHours(double hours) {
  char buf[32];
  std::snprintf(buf, sizeof buf, hours < 100 ? "%.2f" : "%.0f", hours);
  return buf;
}

std::string FormatBudgetHours(double hours) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", hours);
  return buf;
}

std::string EarlyStopSavingText(const v1::EarlyStopSaving& s) {
  std::string what =
      s.gpu_hours() > 0
          ? StrCat(FormatGpuHours(s.gpu_hours()), " GPU-hours")
          : StrCat(FormatDuration(static_cast<int64_t>(s.wall_seconds() * 1000)), " of stage time");
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.0f", s.percent());
  return StrCat("saved ~", what, " (", pct, " % of the sweep), ", s.stopped_items(),
                s.stopped_items() == 1 ? " item" : " items", " stopped early");
}

std::string FormatEnergy(double kwh) {
  double wh = kwh * 1000;
  char buf[32];
  if (!(wh > 0)) return "0 Wh";
  if (wh < 1000) {
    std::snprintf(buf, sizeof buf, wh < 10 ? "%.2f Wh" : "%.0f Wh", wh);
  } else {
    std::snprintf(buf, sizeof buf, wh < 10000 ? "%.2f kWh" : "%.1f kWh", kwh);
  }
  return buf;
}

std::string GpuUsageText(const v1::GpuUsage& u) {
  std::vector<std::string> parts;
  if (u.mean_sm_util_pct() >= 0)
    parts.push_back(StrCat("mean ", FormatNumber(u.mean_sm_util_pct()), "% SM"));
  if (u.peak_mem_used_bytes() >= 0) {
    parts.push_back(
        StrCat("peak ", FormatBytes(u.peak_mem_used_bytes()),
               u.mem_total_bytes() > 0 ? StrCat(" of ", FormatBytes(u.mem_total_bytes())) : ""));
  }
  parts.push_back(FormatEnergy(u.energy_kwh()));
  parts.push_back(StrCat("idle ", FormatGpuHours(u.idle_gpu_hours()), " of ",
                         FormatGpuHours(u.sampled_gpu_hours()), " GPU-h sampled"));
  return StrJoin(parts, ", ");
}

}  // namespace longhaul::cli
