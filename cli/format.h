// Text for humans: durations, sizes, times, numbers and progress bars, as the CLI's tables
// and `watch` show them. Pure functions; times in ms since the epoch.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// "350ms", "42s", "5m07s", "3h05m" (core FormatDurationMs); "-" for a negative duration.
std::string FormatDuration(int64_t ms);

// "512 B", "1.5 KiB", "77.5 MiB", "12.0 GiB"; "-" for a negative size (not reported).
std::string FormatBytes(int64_t bytes);

// "2024-05-01 12:03:04" in the local time zone; "-" for 0.
std::string FormatLocalTime(int64_t ms);
// "12:03:04" in the local time zone.
std::string FormatClockTime(int64_t ms);

// "3s ago", "5m07s ago", "just now" (under a second), "never" for 0.
std::string FormatAgo(int64_t then_ms, int64_t now_ms);

// Energy as people read it: "0.47 Wh" and "12 Wh" under a kWh, "3.41 kWh" above (the UI's form).
std::string FormatEnergy(double kwh);

// A count as short text: "1234", "0.5", "12.25" (integers without a fraction part, others
// with up to two decimals).
std::string FormatNumber(double v);
// GPU-hours with two decimals below 100 ("0.42", "12.50"), whole above ("1234").
std::string FormatGpuHours(double hours);
// A budget's GPU-hours to three significant digits, as longhauld's pause reasons write them:
// "500", "12.5", "0.0005".
std::string FormatBudgetHours(double hours);
// What early stopping saved (v1::EarlyStopSaving): "saved ~0.75 GPU-hours (38 % of the
// sweep), 2 items stopped early", or for CPU stages "saved ~35s of stage time (...)".
std::string EarlyStopSavingText(const v1::EarlyStopSaving& s);
// "mean 93% SM, peak 71.2 GiB of 139.8 GiB, 1.42 kWh, idle 0.3 of 2.0 GPU-h sampled".
std::string GpuUsageText(const v1::GpuUsage& u);

// "[=========>          ]" of `width` cells inside the brackets; full when done >= total.
// An unknown total (<= 0) gives a bar of spaces.
std::string FormatProgressBar(double done, double total, int width);

// "1234/10000 samples (12%)", "1234 samples" without a total, "" when nothing was reported.
std::string FormatProgress(double done, double total, std::string_view unit);

// "41.2 samples/s", "0.5/s"; "" for a rate <= 0.
std::string FormatRate(double per_second, std::string_view unit);

// "5m07s"; "-" when unknown (negative).
std::string FormatEta(double seconds);

// Shortens `s` to at most `width` characters (counting UTF-8 code points), ending with "…"
// when cut. width <= 0 leaves `s` as it is.
std::string Truncate(std::string_view s, int width);

// Number of UTF-8 code points: the width of `s` on a terminal, for the text the CLI prints.
int DisplayWidth(std::string_view s);

// The argv as one line a shell would read back: words with spaces or quotes in '…'.
std::string ShellJoin(const std::vector<std::string>& argv);

}  // namespace longhaul::cli
