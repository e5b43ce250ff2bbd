// Quotas and fair share on the scheduler's side (docs/scheduling.md, "Quotas" and "Fair
// share"): the usage ledger fed as attempts take and give back GPUs, the fair-share position of
// each run in the ready queue, and the quota check of each stage a dispatch pass offers. The
// rules and arithmetic are in quota.cc and fair_share.cc.
#include <algorithm>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {
namespace {

// How often the fair-share order is computed again when no attempt started or ended (running
// attempts add to their accounts' use, and past use decays, as time passes).
constexpr int64_t kFairShareRefreshMs = 60'000;
// How often stages held by a GPU-hour quota are offered again (its window moves on).
constexpr int64_t kQuotaRecheckMs = 60'000;

}  // namespace

bool Scheduler::QuotasOn() const {
  return !options_.quotas.empty() || options_.fair_share_half_life_ms > 0;
}

bool Scheduler::UsageStarted(const AttemptState* a) {
  if (!QuotasOn() || a->stage == nullptr || a->held.gpus() <= 0) return false;
  const store::RunRow& run = a->stage->run->row;
  usage_.Start(a->row.id, AccountsOf(run.user, run.team), a->held.gpus(), clock_->NowMs());
  usage_changed_ = true;
  quota_memo_.clear();
  // A stage held earlier in this pass may name this account as under its guarantee: judged
  // again at the next pass (its reason would be stale, or it may borrow now).
  if (held_for_guarantee_) dispatch_needed_ = true;
  std::string account = ShareAccountOf(run.user, run.team);
  int32_t held = usage_.GpusInUse(account), guarantee = options_.quotas.Guarantee(account);
  if (!options_.quotas.empty() && held > guarantee) {
    GetLogger("scheduler")
        ->info("run {} stage {}: on borrowed GPUs ({} holds {}, {} guaranteed)", run.id,
               a->stage->row.name, AccountLabel(account), held, guarantee);
    return true;
  }
  return false;
}

void Scheduler::UsageEnded(const AttemptState* a) {
  if (!QuotasOn()) return;
  usage_.End(a->row.id, clock_->NowMs());
  usage_changed_ = true;
  quota_memo_.clear();
}

Status Scheduler::LoadUsage() {
  usage_.Clear();
  usage_changed_ = true;
  fair_share_at_ms_ = -1;
  quota_recheck_at_ms_ = 0;  // the timers went with the old model
  quota_memo_.clear();
  if (!QuotasOn()) return OkStatus();
  int64_t now = clock_->NowMs();
  // Decay after ten half-lives leaves less than a thousandth: older attempts are not read.
  int64_t horizon =
      std::max(options_.quotas.LongestPeriodMs(), 10 * options_.fair_share_half_life_ms);
  ASSIGN_OR_RETURN(std::vector<store::GpuUsageRow> ended, store_->LoadGpuUsage(now - horizon));
  for (const store::GpuUsageRow& u : ended) {
    usage_.AddEnded(AccountsOf(u.user, u.team), u.gpus, u.start_ms, u.end_ms);
  }
  for (const auto& [id, a] : runs_.live_attempts()) {
    if (!a->holds_resources || a->stage == nullptr || a->held.gpus() <= 0) continue;
    const store::RunRow& run = a->stage->run->row;
    usage_.Start(id, AccountsOf(run.user, run.team), a->held.gpus(), a->row.created_at_ms);
  }
  RefreshFairShare(/*force=*/true);
  return OkStatus();
}

void Scheduler::AssignSharePos(RunState* run) {
  if (run->share_pos_set) return;
  run->share_pos_set = true;
  if (options_.fair_share_half_life_ms <= 0) return;
  auto it = share_pos_.find(ShareAccountOf(run->row.user, run->row.team));
  run->share_pos = it == share_pos_.end() ? 0 : it->second;
  if (it == share_pos_.end()) usage_changed_ = true;  // a new account: placed at the next pass
}

void Scheduler::RefreshFairShare(bool force) {
  if (options_.fair_share_half_life_ms <= 0) return;
  int64_t now = clock_->NowMs();
  if (!force && !usage_changed_ && now - fair_share_at_ms_ < kFairShareRefreshMs) return;
  usage_changed_ = false;
  fair_share_at_ms_ = now;
  usage_.Prune(now);
  std::set<std::string> accounts;
  for (const auto& [id, run] : runs_) {
    accounts.insert(ShareAccountOf(run->row.user, run->row.team));
  }
  std::vector<FairShareEntry> entries;
  for (const std::string& account : accounts) {
    entries.push_back(
        {account, usage_.DecayedGpuHours(account, now), options_.quotas.Share(account)});
  }
  share_pos_ = FairSharePositions(std::move(entries));
  bool moved = false;
  for (const auto& [id, run] : runs_) {
    int pos = share_pos_[ShareAccountOf(run->row.user, run->row.team)];
    if (run->share_pos != pos) moved = true;
    run->share_pos = pos;
    run->share_pos_set = true;
  }
  // The queue's entries carry the position they were added with: they move with it.
  if (moved) {
    ready_.Rekey([this](const ReadyQueue::Entry& e) {
      const RunState* run = runs_.Find(e.run_id);
      return run != nullptr ? run->share_pos : e.share;
    });
  }
}

void Scheduler::PrepareQuotas() {
  waiting_under_.clear();
  held_for_guarantee_ = false;
  quota_memo_.clear();
  if (!QuotasOn()) return;
  RefreshFairShare(/*force=*/false);
  if (options_.quotas.empty()) return;
  // Accounts under their guarantee with a GPU stage waiting: no one borrows while they do
  // (their own limits aside: one whose GPU-hours are used up waits anyway).
  int64_t now = clock_->NowMs();
  std::set<std::string> under;
  for (const auto& [run_id, count] : ready_.gpu_runs()) {
    RunState* run = runs_.Find(run_id);
    if (run == nullptr) continue;
    std::string account = ShareAccountOf(run->row.user, run->row.team);
    if (under.count(account) || usage_.GpusInUse(account) >= options_.quotas.Guarantee(account)) {
      continue;
    }
    if (QuotaBlock(options_.quotas, usage_, AccountsOf(run->row.user, run->row.team), account, 1,
                   {}, now)
            .why.empty()) {
      under.insert(account);
    }
  }
  waiting_under_.assign(under.begin(), under.end());
}

bool Scheduler::QuotaHolds(StageState* s) {
  if (options_.quotas.empty()) return false;
  const store::RunRow& run = s->run->row;
  int64_t now = clock_->NowMs();
  // Stages alike (same user, team and GPUs) get the same answer until some use changes: a pass
  // that walks many held stages of one team computes it once.
  int32_t gpus = s->row.resources.gpus();
  auto [memo, fresh] = quota_memo_.try_emplace(StrCat(run.user, "\n", run.team, "\n", gpus));
  if (fresh) {
    memo->second = QuotaBlock(options_.quotas, usage_, AccountsOf(run.user, run.team),
                              ShareAccountOf(run.user, run.team), gpus, waiting_under_, now);
  }
  const QuotaVerdict& verdict = memo->second;
  if (verdict.why.empty()) return false;
  if (verdict.borrowing) held_for_guarantee_ = true;
  if (verdict.window && quota_recheck_at_ms_ <= now) {
    quota_recheck_at_ms_ = now + kQuotaRecheckMs;
    timers_.Push({quota_recheck_at_ms_, TimerKind::kQuota, 0, "", 0});
  }
  std::string reason = StrCat("waiting: ", verdict.why);
  if (reason != s->row.reason) {
    s->row.reason = std::move(reason);
    MarkChanged(s);
  }
  return true;
}

std::vector<RunningShare> Scheduler::RunningShares() const {
  std::vector<RunningShare> out;
  for (const auto& [id, r] : usage_.running()) {
    // AccountsOf puts the share account (the team's, else the user's) first.
    out.push_back({id, r.accounts.front(), r.gpus, r.start_ms});
  }
  return out;
}

std::map<int64_t, std::string> Scheduler::SparedFor(const StageState* s) const {
  std::map<int64_t, std::string> out;
  if (options_.quotas.empty()) return out;
  std::string owner = ShareAccountOf(s->run->row.user, s->run->row.team);
  for (const RunningShare& r :
       SparedWithinGuarantee(options_.quotas, RunningShares(), owner, usage_.GpusInUse(owner),
                             s->row.resources.gpus())) {
    out.emplace(r.attempt_id, r.account);
  }
  return out;
}

std::vector<int64_t> Scheduler::BorrowedAttemptIds() const {
  std::vector<int64_t> out;
  for (const RunningShare& r : BorrowedAttempts(options_.quotas, RunningShares())) {
    out.push_back(r.attempt_id);
  }
  return out;
}

std::vector<int64_t> Scheduler::ReclaimFor(const std::string& account, int32_t gpus) const {
  std::vector<int64_t> out;
  for (const RunningShare& r : ReclaimSet(options_.quotas, RunningShares(), account, gpus)) {
    out.push_back(r.attempt_id);
  }
  return out;
}

}  // namespace longhaul::scheduler
