// What early stopping saved a run (docs/sweeps.md, "What stopping saved"): stopped items' steps
// left, priced at the finished items' time per step, on sweeps whose figures are known.
#include "daemon/rpc/early_stop_saving.h"

#include <gtest/gtest.h>

#include "core/strings.h"

namespace longhaul::rpc {
namespace {

workflow::Workflow Sweep(const std::string& extra = "") {
  Result<workflow::Workflow> wf = workflow::ParseWorkflow(
      StrCat("name: w\nstages:\n  train:\n    foreach: [a, b, c, d]\n",
             "    early_stop: {metric: loss, rule: asha, rungs: [1], eta: 2}\n",
             "    run: [train, \"${item}\"]\n  report: {needs: [train], run: [report]}\n", extra),
      "wf.yaml");
  EXPECT_TRUE(wf.ok()) << wf.status();
  return *wf;
}

v1::Stage Item(const std::string& name, v1::StageStatus status, double done, double total,
               double wall, double gpu_hours = 0) {
  v1::Stage s;
  s.set_name(name);
  s.set_status(status);
  s.mutable_progress()->set_done(done);
  s.mutable_progress()->set_total(total);
  s.set_wall_seconds(wall);
  s.set_gpu_hours(gpu_hours);
  return s;
}

google::protobuf::RepeatedPtrField<v1::Stage> Stages(std::vector<v1::Stage> list) {
  google::protobuf::RepeatedPtrField<v1::Stage> out;
  for (v1::Stage& s : list) *out.Add() = std::move(s);
  return out;
}

TEST(EarlyStopSavingTest, CpuSweepStepsLeftAtTheFinishedItemsTimePerStep) {
  // a and c finished 10 steps in 20 s and 30 s: 2.5 s a step. b stopped after 2 of 10 (8 left),
  // d after 4 with no total (the finished mean, 10: 6 left). Saved 14 steps, 35 s; spent 20 +
  // 30 + 5 + 10 = 65 s, so 35 of 100 s.
  auto stages = Stages({Item("train-a", v1::STAGE_SUCCEEDED, 10, 10, 20),
                        Item("train-b", v1::STAGE_STOPPED_EARLY, 2, 10, 5),
                        Item("train-c", v1::STAGE_SUCCEEDED, 10, 10, 30),
                        Item("train-d", v1::STAGE_STOPPED_EARLY, 4, 0, 10),
                        Item("report", v1::STAGE_SUCCEEDED, 0, 0, 100)});
  std::optional<v1::EarlyStopSaving> s = EstimateEarlyStopSaving(Sweep(), stages);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->stopped_items(), 2);
  EXPECT_DOUBLE_EQ(s->wall_seconds(), 35);
  EXPECT_DOUBLE_EQ(s->gpu_hours(), 0);
  EXPECT_DOUBLE_EQ(s->percent(), 35);
}

TEST(EarlyStopSavingTest, GpuSweepIsMeasuredInGpuHours) {
  // a finished 100 steps on 1 GPU-hour: 0.01 a step. b stopped at step 25 of 100: 0.75 saved;
  // spent 1 + 0.25, so 0.75 of 2.
  auto stages = Stages({Item("train-a", v1::STAGE_SUCCEEDED, 100, 100, 3600, 1),
                        Item("train-b", v1::STAGE_STOPPED_EARLY, 25, 100, 900, 0.25)});
  std::optional<v1::EarlyStopSaving> s = EstimateEarlyStopSaving(Sweep(), stages);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->gpu_hours(), 0.75);
  EXPECT_DOUBLE_EQ(s->wall_seconds(), 2700);
  EXPECT_DOUBLE_EQ(s->percent(), 37.5);
}

TEST(EarlyStopSavingTest, NothingToEstimateFromOrNothingStopped) {
  // Every item stopped: no finished item to price a step with.
  EXPECT_FALSE(
      EstimateEarlyStopSaving(Sweep(), Stages({Item("train-a", v1::STAGE_STOPPED_EARLY, 2, 10, 5)}))
          .has_value());
  // A finished item reused from another run (no wall time of its own) does not price a step.
  EXPECT_FALSE(
      EstimateEarlyStopSaving(Sweep(), Stages({Item("train-a", v1::STAGE_SUCCEEDED, 10, 10, 0),
                                               Item("train-b", v1::STAGE_STOPPED_EARLY, 2, 10, 5)}))
          .has_value());
  // No item stopped.
  EXPECT_FALSE(
      EstimateEarlyStopSaving(Sweep(), Stages({Item("train-a", v1::STAGE_SUCCEEDED, 10, 10, 20)}))
          .has_value());
}

TEST(EarlyStopSavingTest, AnItemStoppedAtSubmissionSavedItsWholeLength) {
  // A changed rule stopped b before it ran (docs/sweeps.md, "Changing the rule"): no steps,
  // no time; the whole of the finished items' length is saved.
  auto stages = Stages({Item("train-a", v1::STAGE_SUCCEEDED, 10, 10, 20),
                        Item("train-b", v1::STAGE_STOPPED_EARLY, 0, 0, 0)});
  std::optional<v1::EarlyStopSaving> s = EstimateEarlyStopSaving(Sweep(), stages);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->wall_seconds(), 20);
  EXPECT_DOUBLE_EQ(s->percent(), 50);
}

}  // namespace
}  // namespace longhaul::rpc
