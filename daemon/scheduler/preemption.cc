#include "daemon/scheduler/preemption.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "absl/time/time.h"
#include "core/strings.h"
#include "daemon/scheduler/resources.h"

namespace longhaul::scheduler {
namespace {

// As Scheduler::Fits: every field of `need` within `room` (CPUs with a little slack for sums).
bool PreemptRoomFits(const v1::Resources& room, const v1::Resources& need) {
  return room.cpus() + 1e-9 >= need.cpus() && room.memory_bytes() >= need.memory_bytes() &&
         room.gpus() >= need.gpus();
}

// The order victims are taken in on one agent: lowest class, least lost, youngest.
bool TakenBefore(const PreemptCandidate& a, const PreemptCandidate& b) {
  return std::make_tuple(-a.rank, a.lost_gpu_ms, a.lost_ms, -a.attempt_id) <
         std::make_tuple(-b.rank, b.lost_gpu_ms, b.lost_ms, -b.attempt_id);
}

// The victims on one agent (candidates in TakenBefore order), or nullopt.
std::optional<PreemptChoice> ChooseOnAgent(const AgentRoom& agent,
                                           const std::vector<PreemptCandidate>& sorted,
                                           const v1::Resources& need) {
  PreemptChoice choice;
  choice.agent_id = agent.agent_id;
  v1::Resources room = agent.free;
  for (const PreemptCandidate& c : sorted) {
    if (PreemptRoomFits(room, need)) break;
    AddResources(&room, c.frees);
    choice.victims.push_back(c);
  }
  if (choice.victims.empty() || !PreemptRoomFits(room, need)) return std::nullopt;
  // Give back each victim the room fits without, the costliest (last taken) first.
  for (size_t i = choice.victims.size(); i-- > 0;) {
    v1::Resources without = room;
    SubtractResources(&without, choice.victims[i].frees);
    if (!PreemptRoomFits(without, need)) continue;
    room = without;
    choice.victims.erase(choice.victims.begin() + static_cast<std::ptrdiff_t>(i));
  }
  for (const PreemptCandidate& v : choice.victims) choice.lost_gpu_ms += v.lost_gpu_ms;
  return choice;
}

// The cost of a choice, lower is better (see ChooseVictims).
auto ChoiceCost(const PreemptChoice& c) {
  int most_important = 3;
  for (const PreemptCandidate& v : c.victims) most_important = std::min(most_important, v.rank);
  return std::make_tuple(-most_important, c.lost_gpu_ms, c.victims.size(), c.agent_id);
}

}  // namespace

std::optional<PreemptChoice> ChooseVictims(std::vector<PreemptCandidate> candidates,
                                           const std::vector<AgentRoom>& agents,
                                           const v1::Resources& need) {
  std::sort(candidates.begin(), candidates.end(), TakenBefore);
  std::optional<PreemptChoice> best;
  for (const AgentRoom& agent : agents) {
    std::vector<PreemptCandidate> here;
    for (const PreemptCandidate& c : candidates) {
      if (c.agent_id == agent.agent_id) here.push_back(c);
    }
    std::optional<PreemptChoice> choice = ChooseOnAgent(agent, here, need);
    if (choice && (!best || ChoiceCost(*choice) < ChoiceCost(*best))) best = std::move(choice);
  }
  return best;
}

std::string GpuMinutesText(int64_t gpu_ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GPU-min", static_cast<double>(gpu_ms) / 60'000.0);
  return buf;
}

std::string PreemptedByText(const std::string& by, int64_t at_ms) {
  return StrCat("preempted by ", by, " at ",
                absl::FormatTime("%H:%M:%S UTC", absl::FromUnixMillis(at_ms), absl::UTCTimeZone()));
}

const PreemptionBook::Pending* PreemptionBook::Find(const StageKey& stage) const {
  auto it = by_stage_.find(stage);
  return it == by_stage_.end() ? nullptr : &it->second;
}

void PreemptionBook::Add(const StageKey& stage, Pending pending) {
  for (int64_t id : pending.victims) by_victim_[id] = stage;
  by_stage_[stage] = std::move(pending);
}

void PreemptionBook::Ended(int64_t attempt_id) {
  auto it = by_victim_.find(attempt_id);
  if (it == by_victim_.end()) return;
  auto rec = by_stage_.find(it->second);
  by_victim_.erase(it);
  if (rec == by_stage_.end()) return;
  rec->second.victims.erase(attempt_id);
  if (rec->second.victims.empty()) by_stage_.erase(rec);
}

void PreemptionBook::Clear() {
  by_stage_.clear();
  by_victim_.clear();
}

}  // namespace longhaul::scheduler
