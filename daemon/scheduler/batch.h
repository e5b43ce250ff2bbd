// What one batch of the scheduler loop has decided and not yet written or let out: the rows to
// write at its end, and what goes out once its commit succeeded (agent messages, watch
// updates, callbacks, notifications, runs to evict).
//
// It lives from one batch boundary to the next: FlushToStore writes the rows (inside the
// transaction), AfterCommit lets the rest out (after the commit). When the commit fails the
// batch is dropped whole (Scheduler::Recover: `batch_ = Batch{}`): its rows went with the
// transaction, and nothing it decided may reach an agent, a watcher or a notifier.
//
// The pointers point into the scheduler's model, which a reload drops together with the batch.
// Each model object's `dirty` (`totals_dirty`) flag says it is in its list, so it is listed
// once.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "daemon/scheduler/model.h"
#include "daemon/store/rows.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::scheduler {

struct Batch {
  // Rows to write (FlushToStore).
  std::vector<RunState*> dirty_runs;
  std::vector<RunState*> dirty_totals;  // after the attempts: their GPU use goes into these
  std::vector<StageState*> dirty_stages;
  std::vector<AttemptState*> dirty_attempts;
  std::vector<AgentState*> dirty_agents;
  std::vector<store::NotificationRow> notices;  // decided; written with the rows
  // Attempt environments reported by agents (AttemptStarted), by attempt id.
  std::vector<std::pair<int64_t, v1::AttemptEnvironment>> environments;
  // Engine versions agents reported in Hello, by agent id.
  std::vector<std::pair<std::string, v1::EngineVersionReport>> engine_versions;
  // After the commit (AfterCommit).
  std::vector<store::NotificationRow> recorded;  // written; handed to the notifier
  std::vector<std::pair<uint64_t, v1::CoordinatorMessage>> outbox;  // (session, message)
  std::vector<std::function<void()>> after_commit;                  // e.g. a new watch's snapshot
  std::set<int64_t> changed_runs;                                   // runs whose watchers hear
  std::vector<AttemptState*> ended_attempts;  // leave memory (ReleaseEndedAttempts)
  std::set<int64_t> ended_runs;               // leave memory when still ended
};

}  // namespace longhaul::scheduler
