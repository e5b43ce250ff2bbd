// How runs and stages read in the CLI's tables: summaries shared by `runs`, `show` and
// `watch`. Pure functions of the proto and the current time.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "longhaul/v1/types.pb.h"

namespace longhaul::cli {

// Runs of up to this many stages are shown stage by stage by `show` and `watch`; bigger ones
// are summarised: counts per state, then at most kSummaryStages stages each of those running,
// failed and most recently changed.
inline constexpr int kSmallRunStages = 50;
inline constexpr int kSummaryStages = 20;

// Stages per state name: run.stage_counts, or counted from run.stages when that is empty.
std::map<std::string, int> StageCounts(const v1::Run& run);

// "7/9 ok, 1 failed, 1 skipped": ok counts succeeded, cached and stopped stages; then every
// other non-zero state. Uses StageCounts(run).
std::string StageCountsSummary(const v1::Run& run);
// The same from counts already made.
std::string StageCountsSummary(const std::map<std::string, int>& counts);

// Wall time from start to end (or to `now_ms` while running); -1 when not started.
int64_t RunElapsedMs(const v1::Run& run, int64_t now_ms);
int64_t StageElapsedMs(const v1::Stage& stage, int64_t now_ms);

// What to say about a stage beside its status: "cached from run 12" (", stage X" when it
// had another name), "retry in 25s: exit 3" while waiting out a backoff, else its reason.
std::string StageReason(const v1::Stage& stage, int64_t now_ms);

// The stage's progress as "1234/10000 samples (12%)", or "" when it reported none.
std::string StageProgress(const v1::Stage& stage);

// "a=1, b=2" (sorted by name); "-" when empty.
std::string ParamsText(const google::protobuf::Map<std::string, std::string>& params);

// "warning: 3 malformed event lines (last: line 17: not valid JSON)"; "" when none.
std::string MalformedWarning(const v1::Stage& stage);

// The number of the current (or last) attempt; "-" before the first.
std::string AttemptText(const v1::Stage& stage);

// How the stage's latest attempt ended, as `show --attempts` lists it: "attempt 3 killed
// preempted: room for run 41 stage eval (high); ..."; "" when its attempts are not in `stage`
// or the latest has not ended.
std::string LastAttemptEndText(const v1::Stage& stage);

}  // namespace longhaul::cli
