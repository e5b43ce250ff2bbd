#include "daemon/scheduler/quota.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "core/duration.h"
#include "core/strings.h"
#include "daemon/scheduler/budget.h"

namespace longhaul::scheduler {
namespace {

bool QuotaNameOk(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' &&
        c != '@') {
      return false;
    }
  }
  return true;
}

std::string QuotaCount(int32_t n) { return StrCat(n, n == 1 ? " GPU" : " GPUs"); }

}  // namespace

Result<QuotaSpec> ParseQuotaItems(const std::string& account, std::string_view items) {
  auto bad = [](const std::string& why) { return absl::InvalidArgumentError(why); };
  QuotaSpec q;
  q.account = account;
  q.text = StrCat(account, "=", items);
  for (std::string_view item : StrSplit(items, ',')) {
    item = StripWhitespace(item);
    size_t colon = item.find(':');
    std::string_view key = item.substr(0, colon), value;
    if (colon != std::string_view::npos) value = item.substr(colon + 1);
    if (key == "gpus" || key == "borrow") {
      std::optional<int64_t> n = ParseInt64(value);
      if (!n || *n < 0 || *n > 1'000'000) {
        return bad(StrCat("'", item, "': expected ", key, ":N, N a number of GPUs"));
      }
      (key == "gpus" ? q.gpus : q.borrow) = static_cast<int32_t>(*n);
    } else if (key == "gpu_hours") {
      size_t slash = value.find('/');
      std::optional<double> hours = ParseDouble(value.substr(0, slash));
      if (slash == std::string_view::npos || !hours || !(*hours > 0) || !std::isfinite(*hours)) {
        return bad(StrCat("'", item, "': expected gpu_hours:H/PERIOD, as gpu_hours:500/7d"));
      }
      Result<int64_t> period = ParseDurationMs(value.substr(slash + 1));
      if (!period.ok() || *period <= 0) {
        return bad(StrCat("'", item, "': the period must be a duration > 0, as 7d"));
      }
      q.gpu_hours = *hours;
      q.period_ms = *period;
      q.period = std::string(value.substr(slash + 1));
    } else {
      return bad(StrCat("'", item, "' is not gpus:N, borrow:M or gpu_hours:H/PERIOD"));
    }
  }
  if (!q.gpus && !q.borrow && !q.gpu_hours) return bad("names no gpus, borrow or gpu_hours");
  if (q.gpus && q.borrow && *q.borrow < *q.gpus) {
    return bad(StrCat("borrow:", *q.borrow, " is less than gpus:", *q.gpus,
                      " (borrow is the most GPUs in all, the guaranteed ones included)"));
  }
  return q;
}

bool QuotaAccountOk(std::string_view account) {
  bool scoped = account.starts_with("team:") || account.starts_with("user:");
  return scoped && QuotaNameOk(account.substr(5));
}

Result<Quotas> Quotas::Parse(const std::vector<std::string>& rules) {
  Quotas out;
  for (const std::string& text : rules) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("--quota '", text, "': ", why));
    };
    size_t eq = text.find('=');
    if (eq == std::string::npos) return bad("expected team:NAME=ITEM[,ITEM...] or user:NAME=...");
    std::string account(StripWhitespace(text.substr(0, eq)));
    if (!QuotaAccountOk(account)) {
      return bad(StrCat("'", account, "' is not team:NAME or user:NAME"));
    }
    if (out.by_account_.count(account)) return bad(StrCat("a second quota for ", account));
    Result<QuotaSpec> q = ParseQuotaItems(account, std::string_view(text).substr(eq + 1));
    if (!q.ok()) return bad(ToStd(q.status().message()));
    q->text = text;
    out.by_account_.emplace(account, std::move(*q));
  }
  return out;
}

std::string QuotaItemsText(const QuotaSpec& q) {
  std::vector<std::string> items;
  if (q.gpus) items.push_back(StrCat("gpus:", *q.gpus));
  if (q.borrow) items.push_back(StrCat("borrow:", *q.borrow));
  if (q.gpu_hours) {
    char hours[32];  // exact enough to be read back as it was given
    std::snprintf(hours, sizeof hours, "%.12g", *q.gpu_hours);
    items.push_back(StrCat("gpu_hours:", hours, "/", q.period));
  }
  return StrJoin(items, ",");
}

void Quotas::Put(QuotaSpec spec) {
  std::string account = spec.account;
  by_account_[account] = std::move(spec);
}

void Quotas::Erase(const std::string& account) { by_account_.erase(account); }

const QuotaSpec* Quotas::Find(const std::string& account) const {
  auto it = by_account_.find(account);
  return it == by_account_.end() ? nullptr : &it->second;
}

int32_t Quotas::Guarantee(const std::string& account) const {
  const QuotaSpec* q = Find(account);
  return q != nullptr && q->gpus ? *q->gpus : 0;
}

double Quotas::Share(const std::string& account) const {
  int32_t g = Guarantee(account);
  return g > 0 ? g : 1;
}

int64_t Quotas::LongestPeriodMs() const {
  int64_t longest = 0;
  for (const auto& [name, q] : by_account_) longest = std::max(longest, q.period_ms);
  return longest;
}

Result<std::map<std::string, std::string>> ParseTeams(const std::vector<std::string>& lists) {
  std::map<std::string, std::string> out;
  for (const std::string& list : lists) {
    for (std::string_view pair : StrSplit(list, ',')) {
      pair = StripWhitespace(pair);
      if (pair.empty()) continue;
      size_t eq = pair.find('=');
      std::string user(StripWhitespace(pair.substr(0, eq)));
      std::string team(eq == std::string_view::npos ? "" : StripWhitespace(pair.substr(eq + 1)));
      if (!QuotaNameOk(user) || !QuotaNameOk(team)) {
        return absl::InvalidArgumentError(
            StrCat("--teams '", pair,
                   "': expected USER=TEAM, each a name of letters, digits "
                   "and -_.@"));
      }
      auto [it, added] = out.emplace(user, team);
      if (!added && it->second != team) {
        return absl::InvalidArgumentError(
            StrCat("--teams: user ", user, " has two teams, ", it->second, " and ", team));
      }
    }
  }
  return out;
}

std::vector<std::string> AccountsOf(const std::string& user, const std::string& team) {
  std::vector<std::string> out;
  if (!team.empty()) out.push_back("team:" + team);
  out.push_back("user:" + user);
  return out;
}

std::string ShareAccountOf(const std::string& user, const std::string& team) {
  return team.empty() ? "user:" + user : "team:" + team;
}

QuotaVerdict QuotaBlock(const Quotas& quotas, const UsageLedger& usage,
                        const std::vector<std::string>& accounts, const std::string& share_account,
                        int32_t gpus, const std::vector<std::string>& waiting_under,
                        int64_t now_ms) {
  if (gpus <= 0 || quotas.empty()) return {};  // quotas are of GPUs
  for (const std::string& account : accounts) {
    const QuotaSpec* q = quotas.Find(account);
    if (q == nullptr) continue;
    std::string who = AccountLabel(account);
    if (q->gpu_hours) {
      double used = usage.WindowGpuHours(account, q->period_ms, now_ms);
      if (used >= *q->gpu_hours) {
        return {StrCat(who, " used ", GpuHoursText(used), " of ", GpuHoursText(*q->gpu_hours),
                       " GPU-h in the last ", q->period),
                true};
      }
    }
    std::optional<int32_t> limit = q->Limit();
    if (!limit) continue;
    std::string what = q->gpus ? StrCat("quota of ", QuotaCount(*q->gpus))
                               : StrCat("borrowing limit of ", QuotaCount(*limit));
    if (gpus > *limit) {
      std::string cap = q->borrow ? StrCat("borrowing limit of ", QuotaCount(*limit)) : what;
      return {
          StrCat(who, "'s ", cap, " is less than the ", QuotaCount(gpus), " this stage asks for")};
    }
    int32_t in_use = usage.GpusInUse(account);
    if (in_use + gpus > *limit) {
      std::string detail = StrCat(in_use, " in use");
      if (in_use < *limit) detail += StrCat(", this stage asks for ", gpus);
      if (q->gpus && q->borrow) {
        detail += StrCat(", borrowing limit ", *limit, in_use >= *limit ? " reached" : "");
      }
      return {StrCat(who, " at its ", what, " (", detail, ")")};
    }
  }
  // Within the limits; beyond the guarantee it borrows, which waits for those under theirs.
  int32_t guarantee = quotas.Guarantee(share_account);
  int32_t in_use = usage.GpusInUse(share_account);
  if (in_use + gpus <= guarantee) return {};
  for (const std::string& other : waiting_under) {
    if (std::find(accounts.begin(), accounts.end(), other) != accounts.end()) continue;
    // Those that started since the list was made may have reached their guarantee.
    if (usage.GpusInUse(other) >= quotas.Guarantee(other)) continue;
    std::string who = AccountLabel(share_account);
    std::string head = guarantee > 0 ? StrCat(who, " at its quota of ", QuotaCount(guarantee), " (",
                                              in_use, " in use); it borrows idle GPUs")
                                     : StrCat(who, " has no guaranteed GPUs; it uses idle GPUs");
    return {
        StrCat(head, " only while no one under their guarantee waits, and ", AccountLabel(other),
               " does (", usage.GpusInUse(other), " of ", quotas.Guarantee(other), " in use)"),
        false, true};
  }
  return {};
}

std::vector<RunningShare> BorrowedAttempts(const Quotas& quotas,
                                           const std::vector<RunningShare>& running) {
  std::vector<RunningShare> sorted = running;
  std::sort(sorted.begin(), sorted.end(), [](const RunningShare& a, const RunningShare& b) {
    return std::tie(a.start_ms, a.attempt_id) < std::tie(b.start_ms, b.attempt_id);
  });
  std::map<std::string, int32_t> held;
  std::vector<RunningShare> out;
  for (const RunningShare& r : sorted) {
    int32_t& h = held[r.account];
    h += r.gpus;
    if (h > quotas.Guarantee(r.account)) out.push_back(r);
  }
  return out;
}

std::vector<RunningShare> ReclaimSet(const Quotas& quotas, const std::vector<RunningShare>& running,
                                     const std::string& owner, int32_t gpus) {
  int32_t owner_holds = 0;
  for (const RunningShare& r : running) {
    if (r.account == owner) owner_holds += r.gpus;
  }
  if (gpus <= 0 || owner_holds + gpus > quotas.Guarantee(owner)) return {};
  std::vector<RunningShare> borrowed = BorrowedAttempts(quotas, running);
  std::erase_if(borrowed, [&](const RunningShare& r) { return r.account == owner; });
  std::vector<RunningShare> out;
  int32_t freed = 0;
  for (auto it = borrowed.rbegin(); it != borrowed.rend() && freed < gpus; ++it) {
    out.push_back(*it);
    freed += it->gpus;
  }
  if (freed < gpus) return {};
  return out;
}

std::vector<RunningShare> SparedWithinGuarantee(const Quotas& quotas,
                                                const std::vector<RunningShare>& running,
                                                const std::string& owner, int32_t owner_in_use,
                                                int32_t gpus) {
  if (quotas.empty() || gpus <= 0 || owner_in_use + gpus <= quotas.Guarantee(owner)) return {};
  std::set<int64_t> borrowed;
  for (const RunningShare& r : BorrowedAttempts(quotas, running)) borrowed.insert(r.attempt_id);
  std::vector<RunningShare> out;
  for (const RunningShare& r : running) {
    if (r.account != owner && r.gpus > 0 && borrowed.count(r.attempt_id) == 0) out.push_back(r);
  }
  return out;
}

std::string SparedReason(const Quotas& quotas, const std::string& owner,
                         const std::string& spared) {
  int32_t guarantee = quotas.Guarantee(owner);
  std::string head = guarantee > 0 ? StrCat("; it would borrow beyond ", AccountLabel(owner),
                                            "'s quota of ", QuotaCount(guarantee))
                                   : StrCat("; ", AccountLabel(owner), " has no guaranteed GPUs");
  return StrCat(head, ", so it stops no attempt within ", AccountLabel(spared), "'s guarantee");
}

}  // namespace longhaul::scheduler
