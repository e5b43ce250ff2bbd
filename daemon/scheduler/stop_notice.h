// Notices before a stop (docs/scheduling.md, "A notice before the stop"): a running attempt
// whose stage has `preempt_notice` is asked to write a checkpoint before a preemption, a drain
// or a hard budget stops it, and stopped at the first of its next checkpoint and the notice's
// end. StopNotices is the scheduler's record of the notices sent and not yet acted on; the
// scheduler side is stop_notice_sched.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace longhaul::scheduler {

struct StopNotice {
  int64_t at_ms = 0;        // when the notice was sent
  int64_t deadline_ms = 0;  // when the attempt is stopped if it has written no checkpoint
  std::string kind;         // the stop's kind when it comes: "preempted", "drained", "budget"
  std::string detail;       // the stop's detail
  std::string text;         // for a waiting stage's reason: "run 12 stage train (low)"
};

class StopNotices {
 public:
  // The pending notice of `attempt_id`; null when none.
  const StopNotice* Find(int64_t attempt_id) const;
  void Add(int64_t attempt_id, StopNotice notice);
  // Removes the notice of `attempt_id` and returns it (nullopt when none): its stop is due.
  std::optional<StopNotice> Take(int64_t attempt_id);
  // Attempt `attempt_id` ended (however): nothing is left to stop.
  void Ended(int64_t attempt_id) { by_attempt_.erase(attempt_id); }
  void Clear() { by_attempt_.clear(); }

 private:
  std::map<int64_t, StopNotice> by_attempt_;
};

// "10:52:03 UTC": when a notice ends, for reasons.
std::string NoticeClockText(int64_t ms);

}  // namespace longhaul::scheduler
