// Which ended runs retention collects (docs/operations.md, "Retention"): longhauld's policy
// (--retention-age, --retention-keep), a workflow's own `retention:` block over it for that
// workflow's runs, and `longhaul gc`'s flags over both. Pure: no store, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::rpc {

struct RetentionRule {
  int64_t older_than_ms = 0;  // runs that ended longer ago; 0: not by age
  int keep_last = 0;          // runs beyond the newest N of their workflow; 0: not by count
  bool any() const { return older_than_ms > 0 || keep_last > 0; }
};

// The rule for one workflow: each field from `request` when it is set (> 0: a gc flag), else
// from the workflow's block when it names it, else the daemon's.
RetentionRule RuleFor(const RetentionRule& daemon, const RetentionRule& request,
                      const workflow::RetentionSpec& declared);

struct RetentionChoice {
  int64_t run_id = 0;
  std::string workflow_name;
  std::string why;  // "beyond the newest 1 of walk", "... (its retention block)"
};

// `ended`: the ended, uncollected runs, grouped by workflow and newest first within each
// (SqliteStore::ListEndedRuns). `declared`: the retention block of each workflow that has one.
// A run is chosen when its workflow's rule (RuleFor) chooses it by count or by age.
std::vector<RetentionChoice> ChooseRunsToCollect(
    const std::vector<store::SqliteStore::EndedRun>& ended, const RetentionRule& daemon,
    const RetentionRule& request, const std::map<std::string, workflow::RetentionSpec>& declared,
    int64_t now_ms);

// The policy in words for GcResponse.policy: "runs beyond the newest 1 of their workflow;
// walk's own: keep 5, age 30d", "none (keep every run)".
std::string RetentionPolicyText(const RetentionRule& daemon, const RetentionRule& request,
                                const std::map<std::string, workflow::RetentionSpec>& declared);

}  // namespace longhaul::rpc
