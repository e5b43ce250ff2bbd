// Quotas seen and changed at run time on the scheduler's side (docs/scheduling.md, "Seeing
// quotas" and "Changing quotas at run time"): the stored quotas over --quota's at recovery, a
// change applied at the next dispatch pass, and `longhaul quotas`' table from the scheduler's
// figures. The book and the table are in quota_admin.cc.
#include <set>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/quota_admin.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/workflow/yaml_reader.h"

namespace longhaul::scheduler {

Status Scheduler::LoadStoredQuotas() {
  ASSIGN_OR_RETURN(std::vector<store::QuotaRow> rows, store_->LoadQuotas());
  quota_book_.Load(rows);
  options_.quotas = quota_book_.Effective();
  // The ledger keeps ended attempts as long as the longest GPU-hour period asks.
  usage_ = UsageLedger(options_.fair_share_half_life_ms, options_.quotas.LongestPeriodMs());
  return OkStatus();
}

Status Scheduler::ApplyQuotaBook() {
  RETURN_IF_ERROR(LoadStoredQuotas());
  RETURN_IF_ERROR(LoadUsage());
  // Stages of the team may start, or wait, from the next pass on; nothing running is stopped.
  dispatch_needed_ = true;
  return OkStatus();
}

Result<v1::Quota> Scheduler::SetQuota(const v1::SetQuotaRequest& req) {
  ASSIGN_OR_RETURN(QuotaSpec spec, QuotaOfRequest(req));
  store::QuotaRow row{spec.account, QuotaItemsText(spec), req.by(), clock_->NowMs()};
  RETURN_IF_ERROR(store_->PutQuota(row));
  RETURN_IF_ERROR(ApplyQuotaBook());
  GetLogger("scheduler")
      ->info("quota of {} set to {} by {}", AccountLabel(row.account), row.rule, row.set_by);
  v1::ListQuotasResponse all = ListQuotas();
  for (const v1::Quota& q : all.quotas()) {
    if (q.account() == row.account) return q;
  }
  return absl::InternalError(StrCat("quota of ", AccountLabel(row.account), " not kept"));
}

Result<v1::Quota> Scheduler::RemoveQuota(const v1::RemoveQuotaRequest& req) {
  std::string account = "team:" + req.team();
  if (req.team().empty() || !QuotaAccountOk(account)) {
    return absl::InvalidArgumentError(
        StrCat("--team '", req.team(), "': expected a name of letters, digits and -_.@"));
  }
  std::optional<v1::Quota> was;
  std::vector<std::string> teams;
  v1::ListQuotasResponse all = ListQuotas();
  for (const v1::Quota& q : all.quotas()) {
    if (q.account() == account && q.has_quota()) was = q;
    if (q.has_quota() && q.account().starts_with("team:")) teams.push_back(q.account().substr(5));
  }
  if (!was) {
    return absl::NotFoundError(
        StrCat("team ", req.team(), " has no quota", workflow::DidYouMean(req.team(), teams)));
  }
  RETURN_IF_ERROR(store_->PutQuota({account, "", req.by(), clock_->NowMs()}));
  RETURN_IF_ERROR(ApplyQuotaBook());
  GetLogger("scheduler")
      ->info("quota of {} ({}) removed by {}", AccountLabel(account), was->rule(), req.by());
  return *was;
}

v1::ListQuotasResponse Scheduler::ListQuotas() const {
  QuotaTableInput in;
  in.quotas = &options_.quotas;
  in.book = &quota_book_;
  in.usage = QuotasOn() ? &usage_ : nullptr;
  in.now_ms = clock_->NowMs();
  std::set<std::string> shares;
  for (const auto& [id, a] : runs_.live_attempts()) {
    if (!a->holds_resources || a->stage == nullptr || a->held.gpus() <= 0) continue;
    const store::RunRow& run = a->stage->run->row;
    for (const std::string& account : AccountsOf(run.user, run.team)) {
      in.in_use[account] += a->held.gpus();
    }
    shares.insert(ShareAccountOf(run.user, run.team));
  }
  in.share_accounts.assign(shares.begin(), shares.end());
  for (const auto& [run_id, count] : ready_.gpu_runs()) {
    const RunState* run = runs_.Find(run_id);
    if (run == nullptr) continue;
    for (const std::string& account : AccountsOf(run->row.user, run->row.team)) {
      in.waiting[account] += static_cast<int32_t>(count);
    }
  }
  v1::ListQuotasResponse out;
  for (v1::Quota& q : QuotaTable(in)) *out.add_quotas() = std::move(q);
  out.set_fair_share_half_life_ms(options_.fair_share_half_life_ms);
  return out;
}

}  // namespace longhaul::scheduler
