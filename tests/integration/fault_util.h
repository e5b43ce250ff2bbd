// What every fault test checks when it ends, and the small helpers the fault tests share for
// looking at attempts from the node's side (the agents' attempt dirs) rather than the
// coordinator's.
//
// FaultTest's TearDown waits until every attempt dir of every agent has `done` (the
// coordinator acknowledged its exit, so every event before the exit has been committed), then
// compares each attempt's events.jsonl with what ListEvents returns for that attempt: the same
// lines, under seq = line number (blank lines skipped), each exactly once; then ClusterTest's
// `PRAGMA integrity_check`.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/integration/cluster.h"

namespace longhaul::testing {

// An attempt as the agent's state dir holds it.
struct AttemptOnDisk {
  int agent = 0;           // index in the cluster
  int64_t attempt_id = 0;  // from the directory name
  int64_t run_id = 0;      // from spec.json
  std::string stage;
  int number = 0;
  std::string dir;  // STATE/attempts/ID
};

// Every attempt dir of every agent, by agent then attempt id. A dir whose spec.json cannot be
// read yet is left out.
std::vector<AttemptOnDisk> AttemptsOnDisk(const Cluster& c);

// STATE/attempts/ID of the agent that ran `a` (by its agent id), or "" for an unknown agent.
std::string AttemptDirOf(const Cluster& c, const v1::Attempt& a);

// The non-blank lines of a file; `numbers` gets each one's 1-based line number.
std::vector<std::string> NonBlankLines(const std::string& path, std::vector<int64_t>* numbers);

// Every event ListEvents holds for one attempt (paging through it).
Result<std::vector<v1::EventRecord>> StoredEvents(Cluster& c, int64_t run_id,
                                                  const std::string& stage, int attempt);

// Waits up to `timeout_ms` for every attempt dir to have `done`, then compares every attempt's
// events.jsonl with the store, as described above.
::testing::AssertionResult EventsStoredExactlyOnce(Cluster& c, int64_t timeout_ms = 30'000);

// The stage's attempt `number` (1-based), or nullptr.
const v1::Attempt* FindAttempt(const v1::Run& run, const std::string& stage, int number);

// A fixture for fault tests: ClusterTest plus the events check above after every test.
class FaultTest : public ClusterTest {
 protected:
  void TearDown() override;
  // Small timeouts for quick fault tests: agent_timeout 1 s, heartbeat 200 ms. Tests that
  // take the coordinator down give a lost_after above the agents' longest reconnect backoff
  // (5 s), so that a restart never loses an attempt only because an agent was slow to dial.
  static ClusterOptions FaultOptions(int agents = 1, const std::string& lost_after = "4s");
};

}  // namespace longhaul::testing
