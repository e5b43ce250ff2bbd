// A scheduler driven by hand: fake clock, fake agent link, real SQLite in a temp dir. Each
// Batch() does what the loop does (transaction, tick, handlers, dispatch, flush, commit,
// after-commit), so tests see exactly what a batch decides.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace longhaul::scheduler {

class FakeAgentLink : public AgentLink {
 public:
  void Send(uint64_t session, const v1::CoordinatorMessage& msg) override {
    sent.push_back({session, msg});
  }
  void Close(uint64_t session) override { closed.push_back(session); }
  std::vector<std::pair<uint64_t, v1::CoordinatorMessage>> sent;
  std::vector<uint64_t> closed;
};

// A metric event line with a step, as a trainer of a sweep writes it.
std::string MetricAtStep(const std::string& name, int64_t step, double value);

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest();
  // A fresh scheduler over the same store: a coordinator restart. `before_recover` sets it up
  // (its notifications, say) before it loads the store.
  void NewScheduler(const std::function<void(Scheduler&)>& before_recover = {});

  void Batch(const std::function<void()>& fn = [] {});
  // As Batch(), but returns what the flush or the commit returned, as the loop's RunBatch: on
  // an error the transaction is rolled back and no after-commit work runs.
  Status TryBatch(const std::function<void()>& fn);
  // What the loop does after a failed batch (loop.cc): reloads the model from the store
  // (Recover) and commits that, without running the after-commit work.
  void RecoverAfterFailedCommit();
  // `priority`: the class the API's policy resolved ("" is normal).
  int64_t Submit(const std::string& yaml, std::map<std::string, std::string> overrides = {},
                 const std::string& priority = "");
  // Submit, with `adjust` setting more of the input (who submits, the class) first.
  int64_t SubmitWith(const std::string& yaml, const std::function<void(SubmitInput*)>& adjust);
  // Connects agent `id` on a new session; returns the session id.
  uint64_t Connect(const std::string& id, double cpus = 4, int gpus = 0,
                   std::vector<v1::OwnedAttempt> owned = {});
  // Connects agent `id` with labels and an executor ("local", "slurm").
  uint64_t ConnectLabeled(const std::string& id, double cpus, int gpus,
                          std::map<std::string, std::string> labels,
                          const std::string& executor = "local");
  void Heartbeat(uint64_t session);
  void Started(uint64_t session, int64_t attempt_id);
  void Exit(uint64_t session, int64_t attempt_id, int code, int signal = 0);
  // The executor ended it: failure kind "preempted", "node_fail", ... on `node`.
  void ExecutorEnded(uint64_t session, int64_t attempt_id, const std::string& kind,
                     const std::string& node = "");
  void Events(uint64_t session, int64_t attempt_id, const std::vector<std::string>& lines,
              int64_t first_seq = 1);

  // Messages sent since the last call, then forgotten.
  std::vector<v1::StartAttempt> TakeStarts();
  // The attempt ids of the stages started since the last call, by stage name.
  std::map<std::string, int64_t> TakeStartedIds();
  std::vector<v1::CancelAttempt> TakeCancels();
  std::vector<v1::CoordinatorMessage> TakeAll();

  v1::Run GetRun(int64_t id);
  v1::Stage GetStage(int64_t run, const std::string& name);

  // Connects agent `id` with --shared-path prefixes.
  uint64_t ConnectShared(const std::string& id, double cpus, std::vector<std::string> shared);

  uint64_t ConnectHello(const std::string& id, double cpus, int gpus,
                        std::vector<v1::OwnedAttempt> owned,
                        std::map<std::string, std::string> labels, const std::string& executor,
                        std::vector<std::string> shared_paths = {});

  testing::TempDir dir_;
  testing::FakeClock clock_;
  FakeAgentLink link_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
  SchedulerOptions options_;
  uint64_t next_session_ = 1;
  std::map<uint64_t, std::string> session_agent_;
};

}  // namespace longhaul::scheduler
