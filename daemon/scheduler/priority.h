// Priority classes on a shared coordinator (docs/scheduling.md).
//
// PriorityPolicy says who may submit runs of which class (longhauld's --priority-allow);
// ReadyEntryOf gives a stage its place in the ReadyQueue (class first, then age); WaitLine
// words where a waiting stage stands when stages of a higher class are ahead of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "daemon/scheduler/model.h"
#include "daemon/scheduler/ready_queue.h"
#include "longhaul/v1/client.pb.h"

namespace longhaul::scheduler {

// Who may use each class. A rule is "CLASS=WHO[,WHO...]", WHO being `role:R` (that role or
// above), `team:T`, `user:U` or `*` (anyone who may submit). A class without a rule is open
// to anyone, except `high`, which is `role:admin` unless a rule says otherwise.
class PriorityPolicy {
 public:
  PriorityPolicy();  // the defaults: high for admins, normal and low for anyone
  // InvalidArgument naming the rule and what is wrong with it.
  static Result<PriorityPolicy> Parse(const std::vector<std::string>& rules);

  // The class a submission gets: `requested` (--priority), else the workflow's `priority:`,
  // else normal. PermissionDenied naming the class and the rule when `who` may not use it.
  Result<std::string> Resolve(std::string_view requested, std::string_view workflow_class,
                              const v1::Submitter& who) const;

 private:
  struct Rule {
    std::string klass;
    std::vector<std::string> who;  // "role:admin", "team:vision", "user:ada", "*"
    std::string text;              // as given, for messages
  };
  const Rule* RuleFor(std::string_view klass) const;
  static bool Matches(const Rule& rule, const v1::Submitter& who);
  std::vector<Rule> rules_;
};

// The stage's entry in the ready queue: its run's class rank, its fair-share position, then
// (run id, stage index).
ReadyQueue::Entry ReadyEntryOf(const StageState* s);

// During one dispatch pass, the stages that found no room, in the order the pass visited them
// (class, fair share, then age). For a stage that waits behind stages of a higher class, or of
// its class and an account further under its fair share:
// "; 2nd in line for 8 GPUs; ahead: run 41 (high), run 39 (team vision, under its share)".
// "" otherwise.
class WaitLine {
 public:
  std::string Place(const StageState* s);

 private:
  struct Ahead {
    int64_t run_id;
    int rank;
    int32_t gpus;
    int share;
    std::string account;  // "team vision"
  };
  std::vector<Ahead> waiting_;
};

// "1st", "2nd", "3rd", "4th", ..., "11th", "12th", "13th", "21st".
std::string Ordinal(int64_t n);

}  // namespace longhaul::scheduler
