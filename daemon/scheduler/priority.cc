#include "daemon/scheduler/priority.h"

#include "core/strings.h"
#include "daemon/scheduler/quota.h"
#include "daemon/workflow/run_policy.h"

namespace longhaul::scheduler {
namespace {

// The roles in order (daemon/auth/action.h's Role), without a dependency on the auth library.
int PriorityRoleRank(std::string_view role) {
  if (role == "viewer") return 1;
  if (role == "operator") return 2;
  if (role == "admin") return 3;
  return 0;
}

}  // namespace

PriorityPolicy::PriorityPolicy() { rules_.push_back({"high", {"role:admin"}, "high=role:admin"}); }

Result<PriorityPolicy> PriorityPolicy::Parse(const std::vector<std::string>& rules) {
  PriorityPolicy policy;
  for (const std::string& text : rules) {
    auto bad = [&](std::string_view why) {
      return absl::InvalidArgumentError(StrCat("--priority-allow '", text, "': ", why));
    };
    size_t eq = text.find('=');
    if (eq == std::string::npos) return bad("expected CLASS=WHO[,WHO...]");
    std::string klass = text.substr(0, eq);
    RETURN_IF_ERROR(workflow::CheckPriorityClass(klass, StrCat("--priority-allow '", text, "'")));
    Rule rule{klass, {}, text};
    for (std::string_view who : StrSplit(text.substr(eq + 1), ',')) {
      who = StripWhitespace(who);
      bool ok = who == "*" || (who.starts_with("team:") && who.size() > 5) ||
                (who.starts_with("user:") && who.size() > 5) ||
                (who.starts_with("role:") && PriorityRoleRank(who.substr(5)) > 0);
      if (!ok) {
        return bad(
            StrCat("'", who, "' is not role:viewer|operator|admin, team:NAME, user:NAME or *"));
      }
      rule.who.emplace_back(who);
    }
    std::erase_if(policy.rules_, [&](const Rule& r) { return r.klass == klass; });
    policy.rules_.push_back(std::move(rule));
  }
  return policy;
}

const PriorityPolicy::Rule* PriorityPolicy::RuleFor(std::string_view klass) const {
  for (const Rule& r : rules_) {
    if (r.klass == klass) return &r;
  }
  return nullptr;
}

bool PriorityPolicy::Matches(const Rule& rule, const v1::Submitter& who) {
  for (const std::string& w : rule.who) {
    if (w == "*") return true;
    std::string_view name = std::string_view(w).substr(5);
    if (w.starts_with("user:") && name == who.user()) return true;
    if (w.starts_with("team:") && !who.team().empty() && name == who.team()) return true;
    if (w.starts_with("role:") && PriorityRoleRank(who.role()) >= PriorityRoleRank(name)) {
      return true;
    }
  }
  return false;
}

Result<std::string> PriorityPolicy::Resolve(std::string_view requested,
                                            std::string_view workflow_class,
                                            const v1::Submitter& who) const {
  std::string klass(!requested.empty()        ? requested
                    : !workflow_class.empty() ? workflow_class
                                              : workflow::kDefaultPriority);
  RETURN_IF_ERROR(workflow::CheckPriorityClass(klass, "priority"));
  const Rule* rule = RuleFor(klass);
  if (rule == nullptr || Matches(*rule, who)) return klass;
  std::string whom = StrCat(who.user(), " (", who.role().empty() ? "no role" : who.role(),
                            who.team().empty() ? "" : StrCat(", team ", who.team()), ")");
  return absl::PermissionDeniedError(
      StrCat("priority class '", klass, "' is not allowed for ", whom, ": longhauld allows it ",
             "only to ", rule->text.substr(rule->text.find('=') + 1), " (--priority-allow ",
             rule->text, ")", requested.empty() ? "; the workflow asks for it" : ""));
}

ReadyQueue::Entry ReadyEntryOf(const StageState* s) {
  return {.run_id = s->run->row.id,
          .index = s->index,
          .rank = workflow::PriorityRankOrNormal(s->run->row.priority),
          .share = s->run->share_pos};
}

std::string Ordinal(int64_t n) {
  std::string_view suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return StrCat(n, suffix);
}

std::string WaitLine::Place(const StageState* s) {
  int rank = workflow::PriorityRankOrNormal(s->run->row.priority);
  int share = s->run->share_pos;
  int32_t gpus = s->row.resources.gpus();
  // Those ahead that compete for the same kind of room: GPU stages with GPU stages.
  int64_t position = 1;
  std::vector<Ahead> higher;
  for (const Ahead& a : waiting_) {
    if ((a.gpus > 0) != (gpus > 0)) continue;
    ++position;
    if (a.rank < rank || (a.rank == rank && a.share < share)) higher.push_back(a);
  }
  waiting_.push_back({s->run->row.id, rank, gpus, share,
                      AccountLabel(ShareAccountOf(s->run->row.user, s->run->row.team))});
  if (higher.empty()) return "";
  std::vector<std::string> names;
  for (size_t i = 0; i < higher.size() && i < 3; ++i) {
    // Ahead by class, or (same class) by fair share: "run 39 (team vision, under its share)".
    std::string why =
        higher[i].rank < rank
            ? std::string(workflow::kPriorityClasses[static_cast<size_t>(higher[i].rank)])
            : StrCat(higher[i].account, ", under its share");
    names.push_back(StrCat("run ", higher[i].run_id, " (", why, ")"));
  }
  if (higher.size() > 3) names.push_back(StrCat("and ", higher.size() - 3, " more"));
  std::string what = gpus > 0 ? StrCat(gpus, " GPUs") : std::string("room");
  return StrCat("; ", Ordinal(position), " in line for ", what, "; ahead: ", StrJoin(names, ", "));
}

}  // namespace longhaul::scheduler
