// Per-team figures for /metrics (docs/operations.md, "Metrics"; docs/scheduling.md, "Quotas"
// and "Fair share"): the GPUs each team's attempts hold, those of them it borrows beyond its
// guarantee (as quota.h counts borrowing), and the decayed GPU-hours fair share orders it by.
#include <map>
#include <string>
#include <string_view>

#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

constexpr std::string_view kTeamGaugePrefix = "team:";

// "vision" for "team:vision"; "" for a user's account.
std::string TeamOfAccount(const std::string& account) {
  return StartsWith(account, kTeamGaugePrefix) ? account.substr(kTeamGaugePrefix.size()) : "";
}

}  // namespace

std::vector<SchedulerGauges::Team> Scheduler::TeamGauges() const {
  std::map<std::string, SchedulerGauges::Team> by_team;
  auto team = [&](const std::string& name) -> SchedulerGauges::Team& {
    SchedulerGauges::Team& t = by_team[name];
    t.team = name;
    return t;
  };
  // A team with a quota is shown idle too: a guarantee nobody uses is worth seeing.
  for (const auto& [account, spec] : options_.quotas.all()) {
    if (std::string name = TeamOfAccount(account); !name.empty()) team(name);
  }
  for (const auto& [id, a] : runs_.live_attempts()) {
    if (!a->holds_resources || a->stage == nullptr || a->held.gpus() <= 0) continue;
    const std::string& name = a->stage->run->row.team;
    if (!name.empty()) team(name).gpus_in_use += a->held.gpus();
  }
  if (!options_.quotas.empty()) {
    for (const RunningShare& r : BorrowedAttempts(options_.quotas, RunningShares())) {
      if (std::string name = TeamOfAccount(r.account); !name.empty()) {
        team(name).gpus_borrowed += r.gpus;
      }
    }
  }
  if (options_.fair_share_half_life_ms > 0) {
    int64_t now = clock_->NowMs();
    for (const std::string& account : usage_.Accounts()) {
      if (std::string name = TeamOfAccount(account); !name.empty()) team(name);
    }
    for (auto& [name, t] : by_team) {
      t.decayed_gpu_hours = usage_.DecayedGpuHours(StrCat(kTeamGaugePrefix, name), now);
    }
  }
  std::vector<SchedulerGauges::Team> out;
  for (auto& [name, t] : by_team) out.push_back(std::move(t));
  return out;
}

}  // namespace longhaul::scheduler
