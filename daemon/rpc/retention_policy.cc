#include "daemon/rpc/retention_policy.h"

#include "core/duration.h"
#include "core/strings.h"

namespace longhaul::rpc {
namespace {

std::string RuleText(const RetentionRule& rule) {
  std::vector<std::string> parts;
  if (rule.older_than_ms > 0) {
    parts.push_back(StrCat("runs that ended over ", FormatDurationMs(rule.older_than_ms), " ago"));
  }
  if (rule.keep_last > 0) {
    parts.push_back(StrCat("runs beyond the newest ", rule.keep_last, " of their workflow"));
  }
  if (parts.empty()) return "none (keep every run)";
  return StrJoin(parts, ", and ");
}

std::string SpecText(const workflow::RetentionSpec& spec) {
  std::vector<std::string> parts;
  if (spec.keep) parts.push_back(StrCat("keep ", *spec.keep));
  if (spec.age_ms) parts.push_back(StrCat("age ", FormatDurationMs(*spec.age_ms)));
  return StrJoin(parts, ", ");
}

}  // namespace

RetentionRule RuleFor(const RetentionRule& daemon, const RetentionRule& request,
                      const workflow::RetentionSpec& declared) {
  RetentionRule rule = daemon;
  if (declared.age_ms) rule.older_than_ms = *declared.age_ms;
  if (declared.keep) rule.keep_last = *declared.keep;
  if (request.older_than_ms > 0) rule.older_than_ms = request.older_than_ms;
  if (request.keep_last > 0) rule.keep_last = request.keep_last;
  return rule;
}

std::vector<RetentionChoice> ChooseRunsToCollect(
    const std::vector<store::SqliteStore::EndedRun>& ended, const RetentionRule& daemon,
    const RetentionRule& request, const std::map<std::string, workflow::RetentionSpec>& declared,
    int64_t now_ms) {
  static const workflow::RetentionSpec kNone;
  std::vector<RetentionChoice> chosen;
  std::map<std::string, int> rank;  // newest first within a workflow
  for (const auto& r : ended) {
    auto it = declared.find(r.workflow_name);
    const workflow::RetentionSpec& spec = it == declared.end() ? kNone : it->second;
    RetentionRule rule = RuleFor(daemon, request, spec);
    // Says so when the workflow's block set the limit that chose the run.
    std::string own = " (its retention block)";
    int n = ++rank[r.workflow_name];
    std::string why;
    if (rule.keep_last > 0 && n > rule.keep_last) {
      bool declared_keep = spec.keep && request.keep_last <= 0;
      why = StrCat("beyond the newest ", rule.keep_last, " of ", r.workflow_name,
                   declared_keep ? own : "");
    } else if (rule.older_than_ms > 0 && now_ms - r.ended_at_ms > rule.older_than_ms) {
      bool declared_age = spec.age_ms && request.older_than_ms <= 0;
      why = StrCat("ended ", FormatDurationMs(now_ms - r.ended_at_ms), " ago (over ",
                   FormatDurationMs(rule.older_than_ms), ")", declared_age ? own : "");
    }
    if (why.empty()) continue;
    chosen.push_back({r.id, r.workflow_name, why});
  }
  return chosen;
}

std::string RetentionPolicyText(const RetentionRule& daemon, const RetentionRule& request,
                                const std::map<std::string, workflow::RetentionSpec>& declared) {
  std::string text = RuleText(RuleFor(daemon, request, workflow::RetentionSpec()));
  for (const auto& [name, declared_spec] : declared) {
    workflow::RetentionSpec spec = declared_spec;  // less what the request's flags override
    if (request.keep_last > 0) spec.keep.reset();
    if (request.older_than_ms > 0) spec.age_ms.reset();
    if (!spec.empty()) text += StrCat("; ", name, "'s own: ", SpecText(spec));
  }
  return text;
}

}  // namespace longhaul::rpc
