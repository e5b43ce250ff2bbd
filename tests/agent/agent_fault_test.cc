// What a long job meets: the agent SIGKILLed and restarted, the coordinator going away and
// coming back, an agent that died while starting a stage. Nothing may be lost or done twice.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "agent/shim/attempt_cgroup.h"
#include "core/fs.h"
#include "core/strings.h"
#include "proto/agent_protocol.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/blackhole_proxy.h"
#include "tests/agent/cgroup_test_util.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

class AgentFaultTest : public AgentHarnessTest {
 protected:
  // Starts an agent with --cgroup-root `cg` and in it attempt `id`, whose stage leaves a
  // `setsid` helper and a daemon (LeaveDetachedProcessesScript) and then sleeps; returns its
  // pid.json once both detached processes run.
  json StartLeavingDetachedProcesses(const TestCgroup& cg, int64_t id) {
    h_.StartAgent({"--cgroup-root", cg.dir()});
    EXPECT_TRUE(h_.WaitConnected()) << h_.AgentLog();
    std::string work = h_.AttemptFile(id, "work");
    EXPECT_TRUE(coord().Start(
        h_.Spec(id, {"/bin/sh", "-c", LeaveDetachedProcessesScript(work, "exec sleep 60")})));
    EXPECT_TRUE(WaitFor([&] { return PathExists(work + "/b.pid"); }, 10'000));
    EXPECT_TRUE(WaitFor([&] { return !coord().started(id).empty(); }, 10'000));
    std::string text = ReadTextFile(h_.AttemptFile(id, "pid.json"));
    return text.empty() ? json() : json::parse(text, nullptr, /*allow_exceptions=*/false);
  }
};

TEST_F(AgentFaultTest, SigkilledAgentReadoptsTheRunningStageWithoutRestartingIt) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  // 30 items of 60 ms: about 2 s of resumable work, a checkpoint and a progress event each.
  ASSERT_TRUE(coord().Start(h_.Spec(21, {"lh-testjob", "--work", "30", "--step-ms", "60"})));
  ASSERT_TRUE(WaitFor([&] { return coord().max_seq_received(21) >= 6; }, 10'000));
  ASSERT_FALSE(coord().exited(21).has_value());
  json pid = json::parse(ReadTextFile(h_.AttemptFile(21, "pid.json")));
  pid_t stage = pid["stage_pid"];

  h_.KillAgent();
  EXPECT_TRUE(ProcessAlive(stage));
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected(2)) << h_.AgentLog();
  v1::Hello hello = *coord().last_hello();
  ASSERT_EQ(hello.attempts_size(), 1);
  EXPECT_EQ(hello.attempts(0).attempt_id(), 21);
  if (!hello.attempts(0).exited()) {  // on a slow machine the stage may have finished already
    EXPECT_TRUE(hello.attempts(0).running());
    EXPECT_EQ(hello.attempts(0).pid(), stage);
  }
  EXPECT_GE(hello.attempts(0).acked_seq(), 1);

  ASSERT_TRUE(h_.WaitExited(21, 30'000)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(21)->exit_code(), 0);
  EXPECT_EQ(coord().exited(21)->last_seq(), 60);
  ExpectEventsMatchFile(coord().events(21), h_.AttemptFile(21, "events.jsonl"));
  // Same process throughout: the pid file was written once, and no item was done twice.
  EXPECT_EQ(json::parse(ReadTextFile(h_.AttemptFile(21, "pid.json")))["stage_pid"], stage);
  std::vector<std::string> done =
      SplitLines(ReadTextFile(h_.Spec(21, {}).output_dir() + "/done.txt"));
  ASSERT_EQ(done.size(), 30u);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(done[i], std::to_string(i + 1));
}

TEST_F(AgentFaultTest, ExitWhileTheAgentIsDownIsReportedAfterRestart) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(22, {"lh-testjob", "--ready"})));
  ASSERT_TRUE(WaitFor([&] { return coord().events(22).size() == 1; }, 10'000));
  h_.KillAgent();
  // The stage ends while no agent watches: the shim records it.
  pid_t stage = json::parse(ReadTextFile(h_.AttemptFile(22, "pid.json")))["stage_pid"];
  ::kill(stage, SIGTERM);
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(22, "exit.json")); }, 10'000));
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitExited(22)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(22)->signal(), SIGTERM);
  EXPECT_EQ(coord().exited(22)->last_seq(), 1);
  EXPECT_EQ(coord().events(22).size(), 1u);
}

TEST_F(AgentFaultTest, CoordinatorAwayAndBackGetsEveryUnacknowledgedEventAndTheExit) {
  coord().set_auto_ack(false);
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(23, {"lh-testjob", "--events", "300"})));
  ASSERT_TRUE(h_.WaitExited(23)) << h_.AgentLog();
  ASSERT_EQ(coord().events_received(23), 300);
  ASSERT_TRUE(coord().AckEvents(23, 120));  // part acknowledged, the rest and the exit not
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadTextFile(h_.AttemptFile(23, "acked.json")).find("120") != std::string::npos;
      },
      10'000));

  h_.StopCoordinator();
  h_.RestartCoordinator();  // same port, empty memory, acknowledges everything
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  v1::Hello hello = *coord().last_hello();
  ASSERT_EQ(hello.attempts_size(), 1);
  EXPECT_TRUE(hello.attempts(0).exited());
  EXPECT_EQ(hello.attempts(0).acked_seq(), 120);
  ASSERT_TRUE(h_.WaitExited(23)) << h_.AgentLog();
  // Only the unacknowledged events came again, then the exit.
  auto events = coord().events(23);
  EXPECT_EQ(events.size(), 180u);
  EXPECT_EQ(events.begin()->first, 121);
  EXPECT_EQ(coord().events_received(23), 180);
  EXPECT_EQ(coord().exited(23)->last_seq(), 300);
  EXPECT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(23, "done")); }, 10'000));
}

TEST_F(AgentFaultTest, AgentKeepsRetryingWhileTheCoordinatorIsAway) {
  h_.StopCoordinator();
  h_.StartAgent();
  // Let it fail a few dials, then bring the coordinator up.
  ASSERT_TRUE(
      WaitFor([&] { return h_.AgentLog().find("cannot reach") != std::string::npos; }, 10'000));
  h_.RestartCoordinator();
  ASSERT_TRUE(h_.WaitConnected(1, 15'000)) << h_.AgentLog();
  EXPECT_TRUE(h_.AgentRunning());
}

TEST_F(AgentFaultTest, AttemptThatNeverStartedIsReportedAsSuch) {
  // An agent that died between writing spec.json and starting the shim leaves only this.
  std::string dir = h_.state_dir() + "/attempts/24";
  ASSERT_TRUE(MakeDirs(dir + "/work").ok());
  WriteTextFile(dir + "/spec.json", R"({"attempt_id": "24", "argv": ["lh-testjob"]})");
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitExited(24)) << h_.AgentLog();
  EXPECT_TRUE(coord().exited(24)->start_failed());
  EXPECT_EQ(coord().exited(24)->reason(), "agent restarted before the stage started");
  // A shim that only now gets going must refuse: the attempt has been declared ended.
  EXPECT_TRUE(PathExists(dir + "/exit.json"));
}

TEST_F(AgentFaultTest, ShimKilledWhileTheStageRunsIsStillCancellable) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(25, {"lh-testjob", "--sleep", "60"})));
  ASSERT_TRUE(WaitFor([&] { return !coord().started(25).empty(); }, 10'000));
  json pid = json::parse(ReadTextFile(h_.AttemptFile(25, "pid.json")));
  ::kill(pid["shim_pid"].get<pid_t>(), SIGKILL);
  pid_t stage = pid["stage_pid"];
  ASSERT_TRUE(WaitFor([&] { return h_.AgentLog().find("watching the stage") != std::string::npos; },
                      10'000))
      << h_.AgentLog();
  EXPECT_TRUE(ProcessAlive(stage));
  ASSERT_TRUE(coord().Cancel(25, "timeout", 1000));
  ASSERT_TRUE(h_.WaitExited(25)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(25)->reason(), "timeout");
  EXPECT_FALSE(ProcessAlive(stage));
}

// A shim SIGKILLed mid-stage kills nothing at the stage's end: the agent sweeps the attempt's
// cgroup instead, once it sees the attempt end (here: the stage, which it then watches).
TEST_F(AgentFaultTest, ShimKilledMidStageTheAgentSweepsTheCgroupWhenTheStageEnds) {
  TestCgroup cg;
  if (!cg.ok()) GTEST_SKIP() << cg.skip_reason();
  std::string work = h_.AttemptFile(26, "work");
  json pid = StartLeavingDetachedProcesses(cg, 26);
  ASSERT_FALSE(HasFailure()) << h_.AgentLog();
  ASSERT_TRUE(pid.contains("cgroup")) << pid.dump();
  std::string attempt_cg = pid["cgroup"];
  ::kill(pid["shim_pid"].get<pid_t>(), SIGKILL);
  ASSERT_TRUE(WaitFor([&] { return h_.AgentLog().find("watching the stage") != std::string::npos; },
                      10'000))
      << h_.AgentLog();
  ::kill(pid["stage_pid"].get<pid_t>(), SIGKILL);
  ASSERT_TRUE(h_.WaitExited(26)) << h_.AgentLog();
  ExpectDetachedProcessesGone(work);
  EXPECT_EQ(coord().exited(26)->leftovers_killed(), 2);
  EXPECT_FALSE(PathExists(attempt_cg));
  EXPECT_NE(h_.AgentLog().find("killed 2 processes left in its cgroup " + attempt_cg),
            std::string::npos)
      << h_.AgentLog();
}

// The same while no agent runs: the next one finds the attempt dead and sweeps its cgroup.
TEST_F(AgentFaultTest, ShimAndStageKilledWhileTheAgentIsDownTheNextAgentSweepsTheCgroup) {
  TestCgroup cg;
  if (!cg.ok()) GTEST_SKIP() << cg.skip_reason();
  std::string work = h_.AttemptFile(27, "work");
  json pid = StartLeavingDetachedProcesses(cg, 27);
  ASSERT_FALSE(HasFailure()) << h_.AgentLog();
  ASSERT_TRUE(pid.contains("cgroup")) << pid.dump();
  std::string attempt_cg = pid["cgroup"];
  h_.KillAgent();
  ::kill(pid["shim_pid"].get<pid_t>(), SIGKILL);
  ::kill(pid["stage_pid"].get<pid_t>(), SIGKILL);
  ASSERT_TRUE(WaitFor(
      [&] { return !ProcessAlive(pid["shim_pid"]) && !ProcessAlive(pid["stage_pid"]); }, 10'000));
  // Nothing swept them yet: both detached processes outlived the shim, in the cgroup.
  EXPECT_EQ(shim::CgroupProcesses(attempt_cg).size(), 2u);
  h_.StartAgent({"--cgroup-root", cg.dir()});
  ASSERT_TRUE(h_.WaitExited(27)) << h_.AgentLog();
  ExpectDetachedProcessesGone(work);
  EXPECT_EQ(coord().exited(27)->leftovers_killed(), 2);
  EXPECT_FALSE(PathExists(attempt_cg));
}

TEST_F(AgentFaultTest, NetworkThatDropsEverythingForAWhileLosesNothing) {
  // The minute-long drop of production, scaled to seconds: keepalive pings every second.
  BlackholeProxy proxy(coord().port());
  h_.set_agent_target(proxy.address());
  h_.StartAgent({"--keepalive", "1s"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(26, {"lh-testjob", "--progress", "30", "--sleep", "3"})));
  ASSERT_TRUE(WaitFor([&] { return coord().max_seq_received(26) >= 3; }, 10'000));
  proxy.set_blackholed(true);
  // The agent notices the silence by itself (no RST ever comes) and keeps re-dialing.
  ASSERT_TRUE(WaitFor(
      [&] { return h_.AgentLog().find("lost the coordinator") != std::string::npos; }, 20'000))
      << h_.AgentLog();
  // Meanwhile the stage finishes its work.
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(26, "exit.json")); }, 20'000));
  EXPECT_FALSE(coord().exited(26).has_value());
  proxy.set_blackholed(false);
  ASSERT_TRUE(h_.WaitExited(26, 30'000)) << h_.AgentLog();
  EXPECT_GE(coord().hello_count(), 2);
  EXPECT_EQ(coord().exited(26)->last_seq(), 30);
  ExpectEventsMatchFile(coord().events(26), h_.AttemptFile(26, "events.jsonl"));
}

TEST_F(AgentFaultTest, StalledCoordinatorNeverBlocksTheAgentsLoop) {
  h_.StartAgent({"--event-window", "1000000", "--max-event-rate", "0"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(31, {"lh-testjob", "--sleep", "60"})));
  ASSERT_TRUE(WaitFor([&] { return !coord().started(31).empty(); }, 10'000));
  pid_t sleeper = static_cast<pid_t>(coord().started(31)[0].pid());

  // The coordinator stops reading; 12 MB of events back up in the agent's writer.
  coord().set_stalled(true);
  ASSERT_TRUE(coord().Start(h_.Spec(32, {"lh-testjob", "--events", "200000"})));
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(32, "exit.json")); }, 20'000));
  // Messages still flow the other way, and the loop still acts on them.
  ASSERT_TRUE(coord().Cancel(31, "cancelled", 1000));
  EXPECT_TRUE(WaitFor([&] { return !ProcessAlive(sleeper); }, 10'000)) << h_.AgentLog();
  EXPECT_LT(coord().events_received(32), 200000);  // the stall was real

  coord().set_stalled(false);
  ASSERT_TRUE(h_.WaitExited(32, 60'000)) << h_.AgentLog();
  ASSERT_TRUE(h_.WaitExited(31)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(31)->reason(), "cancelled");
  auto events = coord().events(32);
  ASSERT_EQ(events.size(), 200000u);
  EXPECT_EQ(events.begin()->first, 1);
  EXPECT_EQ(events.rbegin()->first, 200000);
  EXPECT_EQ(coord().exited(32)->last_seq(), 200000);
}

TEST_F(AgentFaultTest, RefusedForItsProtocolVersionTheAgentLogsItAndRetriesUntilAccepted) {
  const std::string why =
      "agent 'a' speaks agent protocol version 1 but this longhauld speaks version 0";
  coord().set_refusal(grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, why));
  h_.StartAgent();
  // Refused, then dialed again after its back-off: it neither crashed nor gave up.
  ASSERT_TRUE(WaitFor([&] { return coord().refused_count() >= 2; }, 30'000)) << h_.AgentLog();
  EXPECT_TRUE(h_.AgentRunning());
  EXPECT_EQ(coord().hello_count(), 0) << "a refused Hello was taken";
  ASSERT_TRUE(coord().last_hello().has_value());
  EXPECT_EQ(coord().last_hello()->protocol_version(), kAgentProtocolVersion);
  std::string log = h_.AgentLog();
  EXPECT_NE(log.find("refused this agent: " + why), std::string::npos) << log;

  coord().set_refusal(std::nullopt);
  ASSERT_TRUE(h_.WaitConnected(1, 30'000)) << h_.AgentLog();
  EXPECT_TRUE(h_.AgentRunning());
}

}  // namespace
}  // namespace longhaul::testing
