// DecideNativeExit: how a Slurm attempt's end is reported, case by case (docs/slurm.md).
#include "agent/lib/native_outcome.h"

#include <gtest/gtest.h>

#include "agent/shim/shim.h"

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

}  // namespace
}  // namespace longhaul::agent
