// The real longhaul-agent against a fake coordinator on loopback, running real stages.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/fs.h"
#include "core/strings.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/cgroup_test_util.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

class AgentIntegrationTest : public AgentHarnessTest {};

TEST_F(AgentIntegrationTest, HelloCarriesResourcesLabelsAndDetectedGpus) {
  std::string bin = h_.tmp().Join("fakebin");
  ::mkdir(bin.c_str(), 0755);
  // Answers the agent's --query-gpu (docs/gpus.md) as an idle H200 does; NVML is not loaded.
  WriteTextFile(bin + "/nvidia-smi",
                "#!/bin/sh\n"
                "for i in 0 1; do echo \"$i, GPU-$i, NVIDIA H200, 0, 0, 0, 143771, 81.44, 38, "
                "345, 0x0000000000000001, 0, 0, 0, 0, No, No\"; done\n");
  ::chmod((bin + "/nvidia-smi").c_str(), 0755);
  h_.StartAgent({"--cpus", "4", "--memory", "8G", "--label", "zone=a", "--label", "disk=nvme",
                 "--nvml-library", h_.tmp().Join("no-libnvidia-ml.so.1")},
                {{"PATH", bin + ":/usr/bin:/bin"}});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  v1::Hello hello = *coord().last_hello();
  EXPECT_EQ(hello.agent_id(), "test-agent");
  EXPECT_EQ(hello.resources().cpus(), 4);
  EXPECT_EQ(hello.resources().memory_bytes(), 8LL << 30);
  EXPECT_EQ(hello.resources().gpus(), 2);
  ASSERT_EQ(hello.gpus_size(), 2);
  EXPECT_EQ(hello.gpus(1).name(), "NVIDIA H200");
  EXPECT_EQ(hello.gpus(1).memory_bytes(), 143771LL << 20);
  EXPECT_EQ(hello.labels().at("zone"), "a");
  EXPECT_EQ(hello.labels().at("disk"), "nvme");
  EXPECT_EQ(hello.executor(), "local");
  EXPECT_EQ(hello.data_dir(), h_.state_dir() + "/data");
  EXPECT_EQ(ReadTextFile(h_.state_dir() + "/agent_id"), "test-agent\n");
  EXPECT_TRUE(WaitFor([&] { return coord().heartbeats() >= 2; }, 10'000));
}

TEST_F(AgentIntegrationTest, RunsAnAttemptAndReportsEveryEventOnceThenTheExit) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(11, {"lh-testjob", "--progress", "20", "--sleep", "0.2",
                                         "--print", "hello", "--exit", "3"})));
  ASSERT_TRUE(h_.WaitExited(11)) << h_.AgentLog();
  v1::AttemptExited exit = *coord().exited(11);
  EXPECT_EQ(exit.exit_code(), 3);
  EXPECT_EQ(exit.signal(), 0);
  EXPECT_FALSE(exit.start_failed());
  EXPECT_EQ(exit.last_seq(), 20);
  EXPECT_FALSE(coord().saw_event_after_exit());
  ExpectEventsMatchFile(coord().events(11), h_.AttemptFile(11, "events.jsonl"));
  EXPECT_EQ(coord().events_received(11), 20);  // no re-sends on a healthy stream
  auto started = coord().started(11);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].pid(),
            json::parse(ReadTextFile(h_.AttemptFile(11, "pid.json")))["stage_pid"]);
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(11, "stdout.log")), "hello\n");
  // Written once the shim was started, for people.
  EXPECT_EQ(json::parse(ReadTextFile(h_.AttemptFile(11, "spec.json")))["attempt_id"], "11");
  // The fake coordinator acknowledged the exit: the agent lets go of the attempt.
  EXPECT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(11, "done")); }, 10'000));
}

TEST_F(AgentIntegrationTest, StageGetsTheProtocolEnvironment) {
  h_.StartAgent({"--gpus", "2"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  v1::StartAttempt spec = h_.Spec(12, {"/bin/sh", "-c",
                                       "echo $LONGHAUL_RUN_ID $LONGHAUL_STAGE $LONGHAUL_ATTEMPT "
                                       "$LONGHAUL_RESUME $CUDA_VISIBLE_DEVICES $MY_VAR; pwd; "
                                       "echo $PATH; echo $LONGHAUL_EVENTS"});
  spec.add_gpus(1);
  spec.mutable_env()->insert({"MY_VAR", "mine"});
  spec.set_resume(true);
  ASSERT_TRUE(coord().Start(spec));
  ASSERT_TRUE(h_.WaitExited(12)) << h_.AgentLog();
  auto out = SplitLines(ReadTextFile(h_.AttemptFile(12, "stdout.log")));
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], "7 train 1 1 1 mine");
  EXPECT_EQ(out[1], spec.output_dir());
  EXPECT_TRUE(StartsWith(out[2], BinDir() + ":")) << out[2];
  EXPECT_EQ(out[3], h_.AttemptFile(12, "events.jsonl"));
}

TEST_F(AgentIntegrationTest, MissingProgramIsReportedAndTheAgentCarriesOn) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(13, {"lh-no-such-stage", "--x"})));
  ASSERT_TRUE(h_.WaitExited(13)) << h_.AgentLog();
  v1::AttemptExited exit = *coord().exited(13);
  EXPECT_TRUE(exit.start_failed());
  EXPECT_EQ(exit.exit_code(), 127);
  EXPECT_EQ(exit.reason(), "not found: lh-no-such-stage");
  EXPECT_TRUE(h_.AgentRunning());
  ASSERT_TRUE(coord().Start(h_.Spec(14, {"lh-testjob"})));
  ASSERT_TRUE(h_.WaitExited(14)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(14)->exit_code(), 0);
}

TEST_F(AgentIntegrationTest, ShimThatCannotBeStartedIsAStartFailureNotACrash) {
  h_.StartAgent({"--shim", h_.tmp().Join("no-such-shim")});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(19, {"lh-testjob"})));
  ASSERT_TRUE(h_.WaitExited(19)) << h_.AgentLog();
  EXPECT_TRUE(coord().exited(19)->start_failed());
  EXPECT_NE(coord().exited(19)->reason().find("cannot start " + h_.tmp().Join("no-such-shim")),
            std::string::npos)
      << coord().exited(19)->reason();
  EXPECT_TRUE(h_.AgentRunning());
  EXPECT_TRUE(PathExists(h_.AttemptFile(19, "spec.json")));  // an attempt that failed has one too
}

TEST_F(AgentIntegrationTest, StartAttemptIsIdempotent) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  v1::StartAttempt spec = h_.Spec(15, {"lh-testjob", "--print", "once", "--sleep", "0.3"});
  ASSERT_TRUE(coord().Start(spec));
  ASSERT_TRUE(coord().Start(spec));
  ASSERT_TRUE(h_.WaitExited(15)) << h_.AgentLog();
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(15, "done")); }, 10'000));
  // Even after it is done, a repeated start reports the old exit and runs nothing.
  ASSERT_TRUE(coord().Start(spec));
  ASSERT_TRUE(WaitFor([&] { return coord().exits_received(15) >= 2; }, 10'000));
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(15, "stdout.log")), "once\n");
}

TEST_F(AgentIntegrationTest, CancelKillsTheStagesWholeProcessGroup) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(16, {"lh-testjob", "--spawn-children", "3", "--sleep", "60"})));
  std::string pids_file = h_.AttemptFile(16, "work/children.pids");
  ASSERT_TRUE(WaitFor([&] { return SplitLines(ReadTextFile(pids_file)).size() == 3; }, 10'000));
  ASSERT_TRUE(WaitFor([&] { return !coord().started(16).empty(); }, 10'000));
  std::vector<pid_t> pids;
  for (const auto& l : SplitLines(ReadTextFile(pids_file))) pids.push_back(std::stoi(l));
  pids.push_back(static_cast<pid_t>(coord().started(16)[0].pid()));
  for (pid_t p : pids) ASSERT_TRUE(ProcessAlive(p)) << p;
  ASSERT_TRUE(coord().Cancel(16, "cancelled", 5000));
  ASSERT_TRUE(h_.WaitExited(16)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(16)->reason(), "cancelled");
  EXPECT_EQ(coord().exited(16)->signal(), SIGTERM);
  for (pid_t p : pids) EXPECT_FALSE(ProcessAlive(p)) << p;
}

TEST_F(AgentIntegrationTest, APreemptNoticeIsAControlLineAndSigusr1ToTheStage) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  // The stage answers SIGUSR1 by copying its control file and exiting 7: a stage killed by the
  // signal, or a shim that took it for Slurm's time limit, would end otherwise.
  ASSERT_TRUE(coord().Start(
      h_.Spec(21, {"/bin/sh", "-c",
                   "trap 'cp \"$LONGHAUL_CONTROL\" \"$LONGHAUL_WORK_DIR/got\"; exit 7' USR1; "
                   "touch \"$LONGHAUL_WORK_DIR/ready\"; while :; do sleep 0.05; done"})));
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(21, "work/ready")); }, 10'000));
  ASSERT_TRUE(WaitFor([&] { return !coord().started(21).empty(); }, 10'000));
  v1::CoordinatorMessage m;
  m.mutable_preempt_notice()->set_attempt_id(21);
  m.mutable_preempt_notice()->set_deadline_ms(1'700'000'120'000);
  m.mutable_preempt_notice()->set_reason("preempted: room for run 9 stage eval (high)");
  ASSERT_TRUE(coord().Send(m));
  ASSERT_TRUE(h_.WaitExited(21)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(21)->exit_code(), 7) << h_.AgentLog();
  EXPECT_EQ(coord().exited(21)->signal(), 0);
  EXPECT_EQ(coord().exited(21)->reason(), "");
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(21, "work/got")),
            "{\"preempt\":{\"deadline_ms\":1700000120000,\"reason\":\"preempted: room for run "
            "9 stage eval (high)\"}}\n");
}

TEST_F(AgentIntegrationTest, DetachedProcessesEndWithTheAttemptAndTheExitSaysSo) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  // A `setsid` helper and a double-forked daemon, each in a session of its own; then success.
  std::string work = h_.AttemptFile(17, "work");
  ASSERT_TRUE(
      coord().Start(h_.Spec(17, {"/bin/sh", "-c", LeaveDetachedProcessesScript(work, "exit 0")})));
  ASSERT_TRUE(h_.WaitExited(17)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(17)->exit_code(), 0);
  EXPECT_EQ(coord().exited(17)->leftovers_killed(), 2);
  ExpectDetachedProcessesGone(work);
}

TEST_F(AgentIntegrationTest, WithCgroupRootNoneTheProcWalkStillEndsThem) {
  h_.StartAgent({"--cgroup-root", "none"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  EXPECT_NE(h_.AgentLog().find("no cgroups (--cgroup-root none)"), std::string::npos)
      << h_.AgentLog();
  std::string work = h_.AttemptFile(18, "work");
  ASSERT_TRUE(
      coord().Start(h_.Spec(18, {"/bin/sh", "-c", LeaveDetachedProcessesScript(work, "exit 3")})));
  ASSERT_TRUE(h_.WaitExited(18)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(18)->exit_code(), 3);
  EXPECT_EQ(coord().exited(18)->leftovers_killed(), 2);
  ExpectDetachedProcessesGone(work);
  EXPECT_FALSE(json::parse(ReadTextFile(h_.AttemptFile(18, "pid.json"))).contains("cgroup"));
}

TEST_F(AgentIntegrationTest, WithACgroupRootEachAttemptRunsInACgroupRemovedAtItsEnd) {
  TestCgroup cg;
  if (!cg.ok()) GTEST_SKIP() << cg.skip_reason();
  h_.StartAgent({"--cgroup-root", cg.dir()});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  EXPECT_NE(h_.AgentLog().find("attempts run in cgroups under " + cg.dir()), std::string::npos)
      << h_.AgentLog();
  std::string work = h_.AttemptFile(20, "work");
  ASSERT_TRUE(
      coord().Start(h_.Spec(20, {"/bin/sh", "-c", LeaveDetachedProcessesScript(work, "exit 0")})));
  ASSERT_TRUE(h_.WaitExited(20)) << h_.AgentLog();
  EXPECT_EQ(coord().exited(20)->exit_code(), 0);
  EXPECT_EQ(coord().exited(20)->leftovers_killed(), 2);
  ExpectDetachedProcessesGone(work);
  std::string attempt_cg = json::parse(ReadTextFile(h_.AttemptFile(20, "pid.json")))["cgroup"];
  EXPECT_TRUE(StartsWith(attempt_cg, cg.dir() + "/attempt-20-")) << attempt_cg;
  EXPECT_FALSE(PathExists(attempt_cg));
  EXPECT_TRUE(json::parse(ReadTextFile(h_.AttemptFile(20, "exit.json"))).contains("cpu_usec"));
}

TEST_F(AgentIntegrationTest, ReadLogAndCheckArtifactsAnswerFromTheNode) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(
      17, {"lh-testjob", "--print", "hello", "--stderr", "oops", "--artifact", "a=data/a.txt"})));
  ASSERT_TRUE(h_.WaitExited(17)) << h_.AgentLog();
  auto read_log = [&](int64_t req, const std::string& stream, int64_t offset) {
    v1::CoordinatorMessage m;
    m.mutable_read_log()->set_request_id(req);
    m.mutable_read_log()->set_attempt_id(17);
    m.mutable_read_log()->set_stream(stream);
    m.mutable_read_log()->set_offset(offset);
    m.mutable_read_log()->set_max_bytes(1000);
    EXPECT_TRUE(coord().Send(m));
    EXPECT_TRUE(WaitFor([&] { return coord().log(req).has_value(); }, 10'000));
    return coord().log(req).value_or(v1::LogData());
  };
  v1::LogData all = read_log(1, "stdout", 0);
  EXPECT_EQ(all.data(), "hello\n");
  EXPECT_EQ(all.size(), 6);
  v1::LogData tail = read_log(2, "stdout", -3);
  EXPECT_EQ(tail.data(), "lo\n");
  EXPECT_EQ(tail.offset(), 3);
  EXPECT_EQ(read_log(3, "stderr", 0).data(), "oops\n");
  EXPECT_NE(read_log(4, "other", 0).error(), "");

  v1::CoordinatorMessage m;
  m.mutable_check_artifacts()->set_request_id(5);
  std::string present = h_.Spec(17, {}).output_dir() + "/data/a.txt";
  m.mutable_check_artifacts()->add_paths(present);
  m.mutable_check_artifacts()->add_paths(present + ".missing");
  ASSERT_TRUE(coord().Send(m));
  ASSERT_TRUE(WaitFor([&] { return coord().artifacts(5).has_value(); }, 10'000));
  ASSERT_EQ(coord().artifacts(5)->missing_size(), 1);
  EXPECT_EQ(coord().artifacts(5)->missing(0), present + ".missing");
}

TEST_F(AgentIntegrationTest, FlowControlKeepsAtMostTheWindowUnacknowledged) {
  coord().set_auto_ack(false);
  h_.StartAgent({"--event-window", "100"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(18, {"lh-testjob", "--events", "1000"})));
  ASSERT_TRUE(WaitFor([&] { return coord().events_received(18) == 100; }, 10'000));
  // The stage ends, but the exit waits behind the 900 events the window holds back.
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(18, "exit.json")); }, 10'000));
  EXPECT_LE(coord().events_received(18), 100);
  EXPECT_FALSE(coord().exited(18).has_value());
  ASSERT_TRUE(coord().AckEvents(18, 100));
  ASSERT_TRUE(WaitFor([&] { return coord().events_received(18) == 200; }, 10'000));
  coord().set_auto_ack(true);
  ASSERT_TRUE(coord().AckEvents(18, 200));
  ASSERT_TRUE(h_.WaitExited(18)) << h_.AgentLog();
  EXPECT_EQ(coord().events_received(18), 1000);
  EXPECT_EQ(coord().exited(18)->last_seq(), 1000);
  ExpectEventsMatchFile(coord().events(18), h_.AttemptFile(18, "events.jsonl"));
}

// --max-event-rate: a stage that writes events faster than the limit is slowed, not cut. The
// agent stamps each event with the time it read it, so the stamps show the pace it kept.
TEST_F(AgentIntegrationTest, EventRateLimitSlowsAFastStageAndLosesNothing) {
  h_.StartAgent({"--max-event-rate", "500"});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(19, {"lh-testjob", "--events", "1500"})));
  ASSERT_TRUE(h_.WaitExited(19, 30'000)) << h_.AgentLog();
  auto events = coord().events(19);
  ASSERT_EQ(events.size(), 1500u);
  EXPECT_EQ(coord().exited(19)->last_seq(), 1500);
  ExpectEventsMatchFile(events, h_.AttemptFile(19, "events.jsonl"));
  // 1,500 events at 500 per one-second window take three windows: two seconds at least from
  // the first event read to the last (without the limit they are read within milliseconds).
  std::vector<int64_t> stamps = coord().event_stamps(19);
  ASSERT_EQ(stamps.size(), 1500u);
  auto [lo, hi] = std::minmax_element(stamps.begin(), stamps.end());
  EXPECT_GE(*hi - *lo, 2000);
  EXPECT_NE(h_.AgentLog().find("faster than 500/s"), std::string::npos);
}

// A StartAttempt whose id the agent holds for another attempt (a coordinator's store restored
// from a backup older than that id): nothing runs, the other attempt's files stay as they are,
// and the answer is a lost exit marked id_collision. Hello names the highest id held.
TEST_F(AgentIntegrationTest, AnIdHeldByAnotherAttemptIsAnsweredAsACollisionAndLeftAlone) {
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  ASSERT_TRUE(coord().Start(h_.Spec(21, {"lh-testjob", "--print", "first"})));
  ASSERT_TRUE(h_.WaitExited(21)) << h_.AgentLog();
  ASSERT_TRUE(WaitFor([&] { return PathExists(h_.AttemptFile(21, "done")); }, 10'000));
  std::string exit_before = ReadTextFile(h_.AttemptFile(21, "exit.json"));
  std::string spec_before = ReadTextFile(h_.AttemptFile(21, "spec.json"));
  int exits = coord().exits_received(21);

  v1::StartAttempt other = h_.Spec(21, {"lh-testjob", "--print", "second"});
  other.set_run_id(8);
  other.set_stage("eval");
  ASSERT_TRUE(coord().Start(other));
  ASSERT_TRUE(WaitFor([&] { return coord().exits_received(21) > exits; }, 10'000)) << h_.AgentLog();
  v1::AttemptExited answer = *coord().exited(21);
  EXPECT_TRUE(answer.id_collision());
  EXPECT_EQ(answer.exit_code(), -1);
  EXPECT_EQ(answer.reason(),
            "lost: attempt id 21 is already used on agent test-agent by run 7 stage train "
            "attempt 1; nothing was started");
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(21, "exit.json")), exit_before);
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(21, "spec.json")), spec_before);
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(21, "stdout.log")), "first\n");

  // The same attempt sent again is still the same attempt (reported, not a collision).
  ASSERT_TRUE(coord().Start(h_.Spec(21, {"lh-testjob", "--print", "first"})));
  ASSERT_TRUE(WaitFor([&] { return coord().exits_received(21) > exits + 1; }, 10'000))
      << h_.AgentLog();
  EXPECT_FALSE(coord().exited(21)->id_collision());
  EXPECT_EQ(coord().exited(21)->exit_code(), 0) << h_.AgentLog();
  EXPECT_EQ(ReadTextFile(h_.AttemptFile(21, "exit.json")), exit_before);

  h_.KillAgent();
  h_.StartAgent();
  ASSERT_TRUE(h_.WaitConnected(2)) << h_.AgentLog();
  EXPECT_EQ(coord().last_hello()->highest_attempt_id(), 21);
}

}  // namespace
}  // namespace longhaul::testing
