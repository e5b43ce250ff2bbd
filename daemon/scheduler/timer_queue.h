// Deadlines for the scheduler loop: one entry per armed timer, popped in deadline order.
// Entries are never removed early; a popped entry whose generation no longer matches its
// owner's is stale and ignored by the caller.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

namespace longhaul::scheduler {

enum class TimerKind {
  kRetry,         // id: stage id; backoff over, the stage may run again
  kTimeout,       // id: attempt id; wall-time limit
  kStall,         // id: attempt id; no progress for stall_timeout
  kReadyTimeout,  // id: attempt id; a service did not report ready
  kAgentSilent,   // key: agent id; no heartbeat for agent_timeout
  kAgentLost,     // key: agent id; silent for lost_after
  kBudget,        // id: run id; its GPU use may have reached a budget threshold
  kDrain,         // key: agent id; its maintenance window begins (maintenance_sched.cc)
  kQuota,         // a GPU-hour quota's window has moved on: dispatch again
  kScopeBudget,   // key: "team/NAME" or "workflow/NAME"; a threshold or the period's end
  kReservation,   // id: reservation id; key: "start" or "end" of its window (reservation_sched.cc)
  kStopNotice,    // id: attempt id; its notice before a stop ends (stop_notice_sched.cc)
};

struct Timer {
  int64_t deadline_ms = 0;
  TimerKind kind = TimerKind::kRetry;
  int64_t id = 0;
  std::string key;
  uint64_t generation = 0;
  bool operator>(const Timer& o) const { return deadline_ms > o.deadline_ms; }
};

class TimerQueue {
 public:
  void Push(Timer t) { heap_.push(std::move(t)); }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // The earliest deadline; only when !empty().
  int64_t next_deadline() const { return heap_.top().deadline_ms; }
  // Removes and returns the earliest timer if it is due at `now_ms`.
  bool PopDue(int64_t now_ms, Timer* out) {
    if (heap_.empty() || heap_.top().deadline_ms > now_ms) return false;
    *out = heap_.top();
    heap_.pop();
    return true;
  }

 private:
  std::priority_queue<Timer, std::vector<Timer>, std::greater<Timer>> heap_;
};

}  // namespace longhaul::scheduler
