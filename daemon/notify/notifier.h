// Delivers notifications on a thread of its own, so that no webhook or command ever holds up
// the scheduler's thread or its commit. At least once: a notification is recorded (by the
// scheduler, in the commit of the change that caused it) before it is handed here, and every
// try's result goes to `record`; one still pending when longhauld stops is sent again after a
// restart.
//
// Thread-safety: Enqueue, NextDueMs and Stop from any thread. DeliverDue runs on the
// notifier's thread once Start() was called; tests that never call Start() call it themselves.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "daemon/metrics/metrics.h"
#include "daemon/notify/outbox.h"
#include "daemon/notify/sink.h"
#include "daemon/store/rows.h"

namespace longhaul::notify {

class Notifier {
 public:
  // Called after each try with the row as it now is (on the thread that tried it).
  using Recorder = std::function<void(const store::NotificationRow&)>;

  // `deliverer` and `clock` are not owned and must outlive the Notifier; `metrics` may be null.
  Notifier(Deliverer* deliverer, Clock* clock, RetryPolicy policy, Recorder record,
           metrics::CoordinatorMetrics* metrics = nullptr);
  ~Notifier();

  // Starts the delivery thread.
  void Start();
  // Stops it after the try in progress; what is pending stays pending (in the store).
  void Stop();

  // Hands over notifications already recorded as pending; each is tried when due.
  void Enqueue(std::vector<store::NotificationRow> rows);
  // Tries every notification due now once; returns how many it tried.
  int DeliverDue();
  std::optional<int64_t> NextDueMs() const;
  size_t pending() const;

 private:
  void Run();
  // One log line per failed try, at most kLogBurst per sink a minute (docs/operations.md).
  void LogFailure(const store::NotificationRow& row, const std::string& sink_label);

  Deliverer* deliverer_;
  Clock* clock_;
  const RetryPolicy policy_;
  Recorder record_;
  metrics::CoordinatorMetrics* metrics_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Outbox outbox_;  // guarded by mu_
  bool stopping_ = false;
  std::thread thread_;

  struct LogWindow {
    int64_t start_ms = 0;
    int lines = 0;
    int suppressed = 0;
  };
  std::map<std::string, LogWindow> log_windows_;  // by sink; the delivering thread only
};

}  // namespace longhaul::notify
