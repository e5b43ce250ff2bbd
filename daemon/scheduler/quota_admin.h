// Quotas changed at run time and shown (docs/scheduling.md, "Seeing quotas" and "Changing
// quotas at run time"), apart from the scheduler so that they can be tested on their own.
//
// longhauld's --quota rules are the starting configuration. `longhaul quota` stores a team's
// whole quota (the quotas table), which wins over --quota for that team from then on, across
// restarts; removing one stores an empty rule, so that a --quota rule of that team stays
// removed too. QuotaBook keeps both and gives the quotas in force.
//
// Thread-safety: none (the scheduler's loop thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/fair_share.h"
#include "daemon/scheduler/quota.h"
#include "daemon/store/rows.h"
#include "longhaul/v1/client.pb.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::scheduler {

// What `set_by` says of a quota from longhauld's flags.
inline constexpr char kQuotaFromFlags[] = "--quota";

class QuotaBook {
 public:
  explicit QuotaBook(Quotas flags = {}) : flags_(std::move(flags)) {}

  // The stored rows, at recovery. A row whose rule no longer parses is left out (logged): the
  // account keeps --quota's.
  void Load(const std::vector<store::QuotaRow>& rows);
  // A quota set (rule != "") or removed (rule == "") at run time.
  void Put(const store::QuotaRow& row) { stored_[row.account] = row; }
  // The stored row of `account`, nullptr when none.
  const store::QuotaRow* Stored(const std::string& account) const;
  // The quotas in force: --quota's, each account with a stored row replaced by it.
  Quotas Effective() const;
  // Who set `account`'s quota in force: kQuotaFromFlags, the admin, or "" with no quota.
  std::string SetBy(const std::string& account) const;
  const Quotas& flags() const { return flags_; }

 private:
  Quotas flags_;
  std::map<std::string, store::QuotaRow> stored_;
};

// Checks a SetQuotaRequest and gives its quota of "team:TEAM". InvalidArgument naming the team
// and what is wrong: a bad name, a negative number, borrow below gpus, gpu_hours without a
// period (or a period without gpu_hours), nothing given.
Result<QuotaSpec> QuotaOfRequest(const v1::SetQuotaRequest& req);

// The rows of `longhaul quotas`: every account with a quota in `quotas`, GPUs in `in_use` or
// GPU stages in `waiting`, by account. `in_use` and `waiting` are by account ("team:T",
// "user:U"); `share_accounts` those whose guarantee is used (ShareAccountOf): the GPUs others
// borrow are counted as lent by them, in account order, each up to its unused guarantee.
struct QuotaTableInput {
  const Quotas* quotas = nullptr;
  const QuotaBook* book = nullptr;
  const UsageLedger* usage = nullptr;  // windows and decayed use; may be empty
  std::map<std::string, int32_t> in_use;
  std::map<std::string, int32_t> waiting;
  std::vector<std::string> share_accounts;
  int64_t now_ms = 0;
};
std::vector<v1::Quota> QuotaTable(const QuotaTableInput& in);

}  // namespace longhaul::scheduler
