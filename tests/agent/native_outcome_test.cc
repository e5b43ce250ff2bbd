// DecideNativeExit: how a Slurm attempt's end is reported, case by case (docs/slurm.md).
#include "agent/lib/native_outcome.h"

#include <gtest/gtest.h>

#include "agent/lib/slurm_runner.h"
#include "agent/shim/shim.h"
#include "core/strings.h"

namespace longhaul::agent {
namespace {

NativeState State(NativePhase phase, const std::string& state) {
  return {phase, state, "", ""};
}

ExitInfo ShimExit(int code, int signal, const std::string& reason) {
  ExitInfo e;
  e.exit_code = code;
  e.signal = signal;
  e.reason = reason;
  e.ended_at_ms = 1000;
  return e;
}

NativeOutcomeInput Input(NativeState st) {
  NativeOutcomeInput in;
  in.native_id = "42";
  in.state = std::move(st);
  in.stage_started = true;
  in.now_ms = 5000;
  return in;
}

TEST(NativeOutcomeTest, StageExitIsReportedAtOnceWhateverSlurmSays) {
  auto in = Input(State(NativePhase::kRunning, "RUNNING"));
  in.shim_exit = ShimExit(3, 0, "");
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, 3);
  EXPECT_EQ(e->failure_kind, "");
}

TEST(NativeOutcomeTest, LonghaulCancelKeepsTheShimsReason) {
  auto in = Input(State(NativePhase::kEnded, "CANCELLED"));
  in.shim_exit = ShimExit(143, 15, "cancelled");
  in.cancel = CancelInfo{"cancelled", 1000};
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reason, "cancelled");
  EXPECT_EQ(e->failure_kind, "");
}

TEST(NativeOutcomeTest, PreemptedWaitsForTheFinalStateThenSaysPreempted) {
  auto in = Input(State(NativePhase::kRunning, "COMPLETING"));
  in.shim_exit = ShimExit(143, 15, "shim got Terminated");
  EXPECT_FALSE(DecideNativeExit(in)) << "the job is not over: Slurm's word is still to come";
  in.state = State(NativePhase::kEnded, "PREEMPTED");
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->failure_kind, "preempted");
  EXPECT_EQ(e->exit_code, 143);
  EXPECT_EQ(e->reason, "preempted (Slurm job 42 PREEMPTED)");
}

TEST(NativeOutcomeTest, NodeFailNamesTheNodeWithOrWithoutExitJson) {
  auto in = Input(NativeState{NativePhase::kEnded, "NODE_FAIL", "", "gpu-a1"});
  in.shim_exit = ShimExit(137, 9, "shim got Killed");
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->failure_kind, "node_fail");
  EXPECT_EQ(e->node, "gpu-a1");
  in.shim_exit.reset();
  in.ambiguous_for_ms = kNativeSettleMs;
  e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->node, "gpu-a1");
}

TEST(NativeOutcomeTest, ScancelOutsideLonghaulIsSaidSo) {
  auto in = Input(State(NativePhase::kEnded, "CANCELLED"));
  in.shim_exit = ShimExit(143, 15, "shim got Terminated");
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->failure_kind, "cancelled_outside");
  EXPECT_EQ(e->reason, "cancelled outside longhaul (Slurm job 42 CANCELLED)");
}

TEST(NativeOutcomeTest, TimeLimitSignalIsATimeout) {
  auto in = Input(State(NativePhase::kEnded, "FAILED"));
  in.shim_exit = ShimExit(143, 15, shim::kTimeLimitReason);
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->failure_kind, "timeout");
  in.state = State(NativePhase::kEnded, "TIMEOUT");
  EXPECT_EQ(DecideNativeExit(in)->failure_kind, "timeout");
}

TEST(NativeOutcomeTest, KindsWithoutExitJsonAfterTheSettleTime) {
  for (auto [state, kind] : {std::pair{"NODE_FAIL", "node_fail"},
                             {"OUT_OF_MEMORY", "oom"},
                             {"PREEMPTED", "preempted"},
                             {"TIMEOUT", "timeout"}}) {
    auto in = Input(State(NativePhase::kEnded, state));
    EXPECT_FALSE(DecideNativeExit(in)) << state << ": exit.json may still come";
    in.ambiguous_for_ms = kNativeSettleMs;
    auto e = DecideNativeExit(in);
    ASSERT_TRUE(e) << state;
    EXPECT_EQ(e->failure_kind, kind) << state;
    EXPECT_EQ(e->exit_code, -1) << state;
  }
}

TEST(NativeOutcomeTest, QueuedJobCancelledByLonghaulNeverStarted) {
  auto in = Input(State(NativePhase::kEnded, "CANCELLED"));
  in.stage_started = false;
  in.cancel = CancelInfo{"cancelled", 1000};
  in.ambiguous_for_ms = kNativeSettleMs;
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->start_failed);
  EXPECT_EQ(e->reason, "cancelled");
}

TEST(NativeOutcomeTest, JobGoneWithoutExitJsonIsUnknown) {
  auto in = Input(State(NativePhase::kGone, ""));
  in.ambiguous_for_ms = kNativeSettleMs;
  auto e = DecideNativeExit(in);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->exit_code, -1);
  EXPECT_EQ(e->reason,
            "exit status unknown: Slurm job 42 is no longer known to Slurm without an exit report");
}

TEST(NativeOutcomeTest, PendingOrUnknownWaits) {
  EXPECT_FALSE(DecideNativeExit(Input(State(NativePhase::kPending, "PENDING"))));
  EXPECT_FALSE(DecideNativeExit(Input(State(NativePhase::kUnknown, ""))));
}

TEST(NativeOutcomeTest, PendingForAReasonThatNeverClearsFailsTheStartWithIt) {
  // squeue -h -t all -o '%i|%T|%r|%N' lines; 51's as the local cluster showed `sbatch -p short
  // --time=5`.
  auto states = ParseSqueue(
      "51|PENDING|PartitionTimeLimit|\n52|PENDING|BadConstraints|\n53|PENDING|Resources|\n"
      "54|PENDING|ReqNodeNotAvail, UnavailableNodes:vm|\n");
  for (const char* id : {"51", "52"}) {
    auto in = Input(states[id]);
    in.native_id = id;
    in.stage_started = false;
    auto e = DecideNativeExit(in);
    ASSERT_TRUE(e) << id;
    EXPECT_TRUE(e->start_failed);
    EXPECT_EQ(e->reason, StrCat("Slurm job ", id, " cannot run: PENDING (", states[id].reason,
                                "), a reason that does not clear by itself"));
  }
  for (const char* id : {"53", "54"}) {
    auto in = Input(states[id]);
    in.stage_started = false;
    EXPECT_FALSE(DecideNativeExit(in)) << id << ": may still run";
  }
  // Cancelled by longhaul meanwhile: the cancel's reason, once Slurm says it is over.
  auto in = Input(states["51"]);
  in.stage_started = false;
  in.cancel = CancelInfo{};
  EXPECT_FALSE(DecideNativeExit(in));
}

}  // namespace
}  // namespace longhaul::agent
