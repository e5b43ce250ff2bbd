// Quotas of teams and users on shared GPU nodes (docs/scheduling.md, "Quotas"): longhauld's
// `--quota` rules, and the decisions made from them, apart from the scheduler so that they
// can be tested on their own. The use they judge comes from UsageLedger (fair_share.h).
//
// An account is "team:NAME" or "user:NAME". A quota gives it
//  - `gpus:N`: N GPUs guaranteed at once. Beyond N it only borrows: up to `borrow:M` GPUs in
//    all, and only while no other account under its own guarantee waits for GPUs. Without
//    `borrow`, N is also the most it may hold.
//  - `gpu_hours:H/PERIOD`: at most H GPU-hours in any PERIOD (a rolling window, `7d`).
// An account without a `gpus:` quota is guaranteed nothing and has no limit: everything it
// holds is borrowed, so it starts GPU stages only while no account under its guarantee waits.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/fair_share.h"

namespace longhaul::scheduler {

struct QuotaSpec {
  std::string account;            // "team:vision" or "user:olga"
  std::optional<int32_t> gpus;    // guaranteed concurrent GPUs
  std::optional<int32_t> borrow;  // the most concurrent GPUs with borrowing (>= gpus)
  std::optional<double> gpu_hours;
  int64_t period_ms = 0;  // of gpu_hours
  std::string period;     // as given ("7d")
  std::string text;       // as given, for messages

  // The most GPUs it may hold at once; nullopt: no limit.
  std::optional<int32_t> Limit() const { return borrow ? borrow : gpus; }
};

class Quotas {
 public:
  // Rules "team:NAME=ITEM[,ITEM...]" or "user:NAME=...", ITEM one of gpus:N, borrow:M,
  // gpu_hours:H/PERIOD. InvalidArgument naming the rule and what is wrong with it; a second
  // rule for one account is refused too.
  static Result<Quotas> Parse(const std::vector<std::string>& rules);

  // A quota set at run time (longhaul quota) replaces the account's whole quota; Erase removes
  // it (quota_admin.cc keeps which came from where).
  void Put(QuotaSpec spec);
  void Erase(const std::string& account);

  bool empty() const { return by_account_.empty(); }
  const QuotaSpec* Find(const std::string& account) const;
  const std::map<std::string, QuotaSpec>& all() const { return by_account_; }
  // The GPUs guaranteed to `account` (0 without a gpus: quota).
  int32_t Guarantee(const std::string& account) const;
  // Its fair share: the guaranteed GPUs, 1 without them.
  double Share(const std::string& account) const;
  // The longest gpu_hours period (how long the usage ledger keeps ended attempts).
  int64_t LongestPeriodMs() const;

 private:
  std::map<std::string, QuotaSpec> by_account_;
};

// The items of one rule, what follows "ACCOUNT=" ("gpus:4,borrow:8,gpu_hours:500/7d"), for
// `account`. InvalidArgument naming the item that is wrong, without the rule (callers add
// where it came from).
Result<QuotaSpec> ParseQuotaItems(const std::string& account, std::string_view items);
// "team:NAME" or "user:NAME", NAME of letters, digits and -_.@.
bool QuotaAccountOk(std::string_view account);
// The items of `q` as ParseQuotaItems reads them back: "gpus:4,borrow:8,gpu_hours:500/7d".
std::string QuotaItemsText(const QuotaSpec& q);

// longhauld's --teams: "USER=TEAM[,USER=TEAM...]" each, into user -> team. InvalidArgument
// naming the pair that is wrong (no '=', a bad name, a user given two teams).
Result<std::map<std::string, std::string>> ParseTeams(const std::vector<std::string>& lists);

// The accounts a run counts for: "team:T" when it has a team, and "user:U".
std::vector<std::string> AccountsOf(const std::string& user, const std::string& team);
// The account whose guarantee a run uses and whose fair share orders it: its team's when the
// run has a team, else its user's.
std::string ShareAccountOf(const std::string& user, const std::string& team);

// Why a stage of a run with `accounts` that asks for `gpus` GPUs may not start now ("" when it
// may): a limit, a used-up GPU-hour window, or borrowing while one of `waiting_under` (accounts
// with a GPU stage waiting; the run's own are ignored) is still under its guarantee.
// `share_account` is the run's ShareAccountOf.
struct QuotaVerdict {
  std::string why;         // "" when it may start
  bool window = false;     // a GPU-hour window: it lifts as time passes
  bool borrowing = false;  // it would borrow while one of `waiting_under` waits
};
QuotaVerdict QuotaBlock(const Quotas& quotas, const UsageLedger& usage,
                        const std::vector<std::string>& accounts, const std::string& share_account,
                        int32_t gpus, const std::vector<std::string>& waiting_under,
                        int64_t now_ms);

// The running attempts on borrowed GPUs: for each account, its GPU attempts newest last; those
// beyond its guarantee (all of them, without one) are borrowed. Attempts are keyed by id.
// `share_of` gives an attempt's share account (UsageLedger::Running.accounts holds them all).
struct RunningShare {
  int64_t attempt_id = 0;
  std::string account;  // its share account
  int32_t gpus = 0;
  int64_t start_ms = 0;
};
std::vector<RunningShare> BorrowedAttempts(const Quotas& quotas,
                                           const std::vector<RunningShare>& running);

// The attempts to reclaim so that `owner`, under its guarantee, can start `gpus` GPUs within
// it: borrowed attempts of other accounts, the newest first, until they free `gpus` GPUs.
// Empty when `owner` would not be within its guarantee with them, or when the borrowed GPUs
// are fewer than `gpus` (reclaiming part would free nothing usable).
std::vector<RunningShare> ReclaimSet(const Quotas& quotas, const std::vector<RunningShare>& running,
                                     const std::string& owner, int32_t gpus);

// The attempts of `running` that a preemption for a stage of `owner` asking for `gpus` GPUs
// must leave running: when the stage would borrow (`owner_in_use` + `gpus` beyond its
// guarantee), every GPU attempt of another account that is not on borrowed GPUs. Stopping one
// would leave its account under its guarantee with the stopped stage waiting, and a stage that
// borrows waits for such an account (QuotaBlock): the room made would go back to it. Empty
// when the stage stays within its guarantee.
std::vector<RunningShare> SparedWithinGuarantee(const Quotas& quotas,
                                                const std::vector<RunningShare>& running,
                                                const std::string& owner, int32_t owner_in_use,
                                                int32_t gpus);

// The end of the wait reason of such a stage when only attempts within `spared`'s guarantee
// could make its room: "; it would borrow beyond team speech's quota of 1 GPU, so it stops no
// attempt within team vision's guarantee".
std::string SparedReason(const Quotas& quotas, const std::string& owner, const std::string& spared);

}  // namespace longhaul::scheduler
