#include "cli/run_view.h"

#include <algorithm>
#include <vector>

#include "cli/format.h"
#include "core/strings.h"
#include "proto/state_names.h"

namespace longhaul::cli {

std::map<std::string, int> StageCounts(const v1::Run& run) {
  std::map<std::string, int> counts(run.stage_counts().begin(), run.stage_counts().end());
  if (counts.empty()) {
    for (const v1::Stage& s : run.stages()) ++counts[std::string(StageStatusName(s.status()))];
  }
  return counts;
}

std::string StageCountsSummary(const v1::Run& run) { return StageCountsSummary(StageCounts(run)); }

std::string StageCountsSummary(const std::map<std::string, int>& counts) {
  int total = 0;
  for (const auto& [name, n] : counts) total += n;
  if (total == 0) return "-";
  int ok = 0;
  for (const char* name : {"succeeded", "cached", "stopped"}) {
    auto it = counts.find(name);
    if (it != counts.end()) ok += it->second;
  }
  std::vector<std::string> parts = {StrCat(ok, "/", total, " ok")};
  // Most telling first; anything not listed (unknown to this CLI) comes last.
  const std::vector<std::string> order = {"running", "serving",   "starting",
                                          "failed",  "cancelled", "stopped_early",
                                          "skipped", "ready",     "waiting"};
  for (const std::string& name : order) {
    auto it = counts.find(name);
    if (it == counts.end() || it->second == 0) continue;
    parts.push_back(StrCat(it->second, " ", name == "stopped_early" ? "stopped early" : name));
  }
  for (const auto& [name, n] : counts) {
    bool known = name == "succeeded" || name == "cached" || name == "stopped" ||
                 std::find(order.begin(), order.end(), name) != order.end();
    if (!known && n > 0) parts.push_back(StrCat(n, " ", name));
  }
  return StrJoin(parts, ", ");
}

int64_t RunElapsedMs(const v1::Run& run, int64_t now_ms) {
  if (run.started_at_ms() <= 0) return -1;
  int64_t end = run.ended_at_ms() > 0 ? run.ended_at_ms() : now_ms;
  return std::max<int64_t>(0, end - run.started_at_ms());
}

int64_t StageElapsedMs(const v1::Stage& stage, int64_t now_ms) {
  if (stage.started_at_ms() <= 0) return -1;
  int64_t end = stage.ended_at_ms() > 0 ? stage.ended_at_ms() : now_ms;
  return std::max<int64_t>(0, end - stage.started_at_ms());
}

std::string StageReason(const v1::Stage& stage, int64_t now_ms) {
  if (stage.status() == v1::STAGE_CACHED && stage.cached_from_run_id() > 0) {
    std::string text = StrCat("cached from run ", stage.cached_from_run_id());
    if (!stage.cached_from_stage().empty() && stage.cached_from_stage() != stage.name()) {
      text += StrCat(", stage ", stage.cached_from_stage());
    }
    return text;
  }
  if (stage.next_retry_at_ms() > now_ms && !IsTerminal(stage.status())) {
    std::string text = StrCat("retry in ", FormatDuration(stage.next_retry_at_ms() - now_ms));
    if (!stage.reason().empty()) text += StrCat(": ", stage.reason());
    return text;
  }
  return stage.reason();
}

std::string StageProgress(const v1::Stage& stage) {
  if (!stage.has_progress()) return "";
  const v1::Progress& p = stage.progress();
  return FormatProgress(p.done(), p.total(), p.unit());
}

std::string ParamsText(const google::protobuf::Map<std::string, std::string>& params) {
  std::map<std::string, std::string> sorted(params.begin(), params.end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(StrCat(k, "=", v));
  return parts.empty() ? "-" : StrJoin(parts, ", ");
}

std::string AttemptText(const v1::Stage& stage) {
  return stage.attempt_count() > 0 ? std::to_string(stage.attempt_count()) : "-";
}

std::string LastAttemptEndText(const v1::Stage& stage) {
  const v1::Attempt* last = nullptr;
  for (const v1::Attempt& a : stage.attempts()) {
    if (last == nullptr || a.number() > last->number()) last = &a;
  }
  if (last == nullptr || !IsTerminal(last->state())) return "";
  return StrCat("attempt ", last->number(), " ", AttemptStateName(last->state()),
                last->reason().empty() ? "" : StrCat(" ", last->reason()));
}

std::string MalformedWarning(const v1::Stage& stage) {
  if (stage.malformed_events() <= 0) return "";
  std::string out = StrCat("warning: ", stage.malformed_events(), " malformed event line",
                           stage.malformed_events() == 1 ? "" : "s");
  if (!stage.last_malformed().empty()) out += StrCat(" (last: ", stage.last_malformed(), ")");
  return out;
}

}  // namespace longhaul::cli
