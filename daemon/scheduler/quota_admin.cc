#include "daemon/scheduler/quota_admin.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"

namespace longhaul::scheduler {

void QuotaBook::Load(const std::vector<store::QuotaRow>& rows) {
  stored_.clear();
  for (const store::QuotaRow& row : rows) {
    if (!row.rule.empty()) {
      if (Result<QuotaSpec> q = ParseQuotaItems(row.account, row.rule); !q.ok()) {
        GetLogger("scheduler")
            ->error("stored quota of {} '{}': {}; --quota's applies", AccountLabel(row.account),
                    row.rule, ToStd(q.status().message()));
        continue;
      }
    }
    stored_[row.account] = row;
  }
}

const store::QuotaRow* QuotaBook::Stored(const std::string& account) const {
  auto it = stored_.find(account);
  return it == stored_.end() ? nullptr : &it->second;
}

Quotas QuotaBook::Effective() const {
  Quotas out = flags_;
  for (const auto& [account, row] : stored_) {
    if (row.rule.empty()) {
      out.Erase(account);
    } else if (Result<QuotaSpec> q = ParseQuotaItems(account, row.rule); q.ok()) {
      out.Put(std::move(*q));
    }
  }
  return out;
}

std::string QuotaBook::SetBy(const std::string& account) const {
  if (const store::QuotaRow* row = Stored(account)) return row->rule.empty() ? "" : row->set_by;
  return flags_.Find(account) != nullptr ? kQuotaFromFlags : "";
}

Result<QuotaSpec> QuotaOfRequest(const v1::SetQuotaRequest& req) {
  std::string account = "team:" + req.team();
  if (req.team().empty() || !QuotaAccountOk(account)) {
    return absl::InvalidArgumentError(
        StrCat("--team '", req.team(), "': expected a name of letters, digits and -_.@"));
  }
  std::string who = AccountLabel(account);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("quota of ", who, ": ", why));
  };
  if (req.has_gpus() && req.gpus() < 0) {
    return bad(StrCat("--gpus ", req.gpus(), ": expected 0 or more GPUs"));
  }
  if (req.has_borrow() && req.borrow() < 0) {
    return bad(StrCat("--borrow ", req.borrow(), ": expected 0 or more GPUs"));
  }
  if (req.has_gpu_hours() && (!(req.gpu_hours() > 0) || !std::isfinite(req.gpu_hours()))) {
    return bad(StrCat("--gpu-hours ", req.gpu_hours(), ": expected a number > 0"));
  }
  if (req.has_gpu_hours() != !req.period().empty()) {
    return bad("--gpu-hours and --period go together (at most H GPU-hours in any PERIOD)");
  }
  std::vector<std::string> items;
  if (req.has_gpus()) items.push_back(StrCat("gpus:", req.gpus()));
  if (req.has_borrow()) items.push_back(StrCat("borrow:", req.borrow()));
  if (req.has_gpu_hours()) {
    QuotaSpec hours;  // formats the figure as the stored rule keeps it
    hours.gpu_hours = req.gpu_hours();
    hours.period = req.period();
    items.push_back(QuotaItemsText(hours));
  }
  if (items.empty()) return bad("give --gpus, --borrow or --gpu-hours with --period");
  Result<QuotaSpec> q = ParseQuotaItems(account, StrJoin(items, ","));
  if (!q.ok()) return bad(ToStd(q.status().message()));
  return q;
}

std::vector<v1::Quota> QuotaTable(const QuotaTableInput& in) {
  const Quotas& quotas = *in.quotas;
  std::set<std::string> accounts;
  for (const auto& [account, q] : quotas.all()) accounts.insert(account);
  for (const auto& [account, n] : in.in_use) {
    if (n > 0) accounts.insert(account);
  }
  for (const auto& [account, n] : in.waiting) {
    if (n > 0) accounts.insert(account);
  }
  auto in_use = [&](const std::string& account) {
    auto it = in.in_use.find(account);
    return it == in.in_use.end() ? 0 : it->second;
  };
  // The GPUs held beyond a guarantee, by those whose guarantee counts (share accounts), and
  // so the pool that the unused guarantees lend.
  std::set<std::string> shares(in.share_accounts.begin(), in.share_accounts.end());
  int32_t borrowed_total = 0;
  for (const std::string& account : shares) {
    borrowed_total += std::max(0, in_use(account) - quotas.Guarantee(account));
  }
  std::vector<v1::Quota> out;
  for (const std::string& account : accounts) {
    v1::Quota row;
    row.set_account(account);
    int32_t guarantee = quotas.Guarantee(account);
    if (const QuotaSpec* q = quotas.Find(account)) {
      row.set_has_quota(true);
      if (q->gpus) row.set_gpus(*q->gpus);
      if (q->borrow) row.set_borrow(*q->borrow);
      if (q->gpu_hours) {
        row.set_gpu_hours(*q->gpu_hours);
        row.set_period(q->period);
        row.set_period_ms(q->period_ms);
        if (in.usage != nullptr) {
          row.set_window_gpu_hours(in.usage->WindowGpuHours(account, q->period_ms, in.now_ms));
        }
      }
      row.set_rule(QuotaItemsText(*q));
      row.set_set_by(in.book->SetBy(account));
      if (const store::QuotaRow* stored = in.book->Stored(account)) {
        row.set_set_at_ms(stored->set_at_ms);
      }
    }
    int32_t held = in_use(account);
    row.set_in_use(held);
    row.set_borrowed(std::max(0, held - guarantee));
    // Unused guarantees lend the borrowed GPUs, in account order, each up to what it leaves.
    bool lends = shares.count(account) > 0 || account.starts_with("team:");
    if (lends && held < guarantee && borrowed_total > 0) {
      int32_t lent = std::min(guarantee - held, borrowed_total);
      row.set_lent(lent);
      borrowed_total -= lent;
    }
    if (in.usage != nullptr) {
      row.set_decayed_gpu_hours(in.usage->DecayedGpuHours(account, in.now_ms));
    }
    auto waiting = in.waiting.find(account);
    if (waiting != in.waiting.end()) row.set_stages_waiting(waiting->second);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace longhaul::scheduler
