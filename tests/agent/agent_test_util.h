// Helpers for tests that run the real longhaul-agent against a FakeCoordinator.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "longhaul/v1/agent.pb.h"
#include "tests/agent/fake_coordinator.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

// A state dir, a fake coordinator and the agent process; stages left running at the end are
// killed (they outlive the agent by design, so Subprocess's group kill does not reach them).
class AgentHarness {
 public:
  AgentHarness();
  ~AgentHarness();

  // Starts longhaul-agent (again, after a kill) with the usual test flags plus `extra`.
  void StartAgent(const std::vector<std::string>& extra = {},
                  const std::map<std::string, std::string>& env = {});
  void KillAgent();  // SIGKILL, as a crash
  // The agent dials this instead of the fake coordinator (a proxy in front of it).
  void set_agent_target(const std::string& host_port) { agent_target_ = host_port; }
  bool AgentRunning();
  pid_t agent_pid() const;  // 0 when no agent was started
  std::string AgentLog() const { return ReadTextFile(agent_log_); }

  FakeCoordinator& coordinator() { return *coordinator_; }
  // Stops the coordinator; RestartCoordinator brings one back on the same port.
  void StopCoordinator();
  void RestartCoordinator();

  const std::string& state_dir() const { return state_; }
  std::string AttemptFile(int64_t id, const std::string& name) const;
  TempDir& tmp() { return tmp_; }

  v1::StartAttempt Spec(int64_t id, const std::vector<std::string>& argv) const;

  // Waits for the agent to say Hello (count: how many Hellos so far, at least).
  bool WaitConnected(int hellos = 1, int64_t timeout_ms = 20'000);
  bool WaitExited(int64_t id, int64_t timeout_ms = 20'000);

 private:
  TempDir tmp_;
  std::string state_;
  std::string agent_log_;
  int port_ = 0;
  std::unique_ptr<FakeCoordinator> coordinator_;
  std::unique_ptr<Subprocess> agent_;
  std::string agent_target_;
};

// A fixture with one harness: the agent tests' usual start.
class AgentHarnessTest : public ::testing::Test {
 protected:
  FakeCoordinator& coord() { return h_.coordinator(); }
  AgentHarness h_;
};

// A shell script that leaves a `setsid` helper and a double-forked daemon, each in a session
// of its own, with their pids in WORK/a.pid and WORK/b.pid, then runs `then`.
std::string LeaveDetachedProcessesScript(const std::string& work, const std::string& then);
// Both processes of LeaveDetachedProcessesScript ran and neither is alive now.
void ExpectDetachedProcessesGone(const std::string& work);

// Every seq from 1 to n stored exactly once, each equal to the file's line.
void ExpectEventsMatchFile(const std::map<int64_t, std::string>& events, const std::string& file);

}  // namespace longhaul::testing
