#include "daemon/store/reader.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kDiamond[] = R"(
name: diamond
params: {word: hi}
stages:
  a: {run: [prog, a, "${params.word}"]}
  b: {needs: [a], run: [prog, b, "${a.outputs.token}"]}
  c: {needs: [a], run: [prog, c]}
  d: {needs: [b, c], run: [prog, d, "${output_dir}", "${run.id}"]}
)";

std::vector<std::string> Names(const std::vector<v1::StartAttempt>& starts) {
  std::vector<std::string> out;
  for (const auto& s : starts) out.push_back(s.stage());
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(SchedulerTest, DiamondRunsEachStageOnceInDependencyOrder) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kDiamond);
  auto starts = TakeStarts();
  ASSERT_EQ(Names(starts), std::vector<std::string>{"a"});
  EXPECT_EQ(starts[0].argv(2), "hi");
  Started(n1, starts[0].attempt_id());
  Events(n1, starts[0].attempt_id(), {R"({"output": {"name": "token", "value": "t 1"}})"});
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(Names(starts), (std::vector<std::string>{"b", "c"}));
  for (const auto& s : starts) {
    if (s.stage() == "b") {
      EXPECT_EQ(s.argv(2), "t 1");  // one argv element, spaces and all
    }
    Exit(n1, s.attempt_id(), 0);
  }
  starts = TakeStarts();
  ASSERT_EQ(Names(starts), std::vector<std::string>{"d"});
  EXPECT_EQ(starts[0].argv(2), "/data/n1/runs/" + std::to_string(run) + "/d/attempt-1");
  EXPECT_EQ(starts[0].output_dir(), starts[0].argv(2));
  EXPECT_EQ(starts[0].argv(3), std::to_string(run));
  EXPECT_EQ(GetRun(run).status(), v1::RUN_RUNNING);
  Exit(n1, starts[0].attempt_id(), 0);
  v1::Run r = GetRun(run);
  EXPECT_EQ(r.status(), v1::RUN_SUCCEEDED);
  for (const auto& s : r.stages()) {
    EXPECT_EQ(s.status(), v1::STAGE_SUCCEEDED) << s.name();
    EXPECT_EQ(s.attempt_count(), 1) << s.name();
  }
  EXPECT_EQ(scheduler_->active_runs(), 0u);  // ended runs leave memory; the store keeps them
}

TEST_F(SchedulerTest, AFailedStageSkipsOnlyItsDependents) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: partial
stages:
  a: {run: [prog]}
  b: {needs: [a], run: [prog]}
  c: {needs: [b], run: [prog]}
  other: {run: [prog]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(Names(starts), (std::vector<std::string>{"a", "other"}));
  for (const auto& s : starts) Exit(n1, s.attempt_id(), s.stage() == "a" ? 3 : 0);
  EXPECT_TRUE(TakeStarts().empty());
  v1::Run r = GetRun(run);
  EXPECT_EQ(r.status(), v1::RUN_FAILED);
  EXPECT_EQ(GetStage(run, "a").status(), v1::STAGE_FAILED);
  EXPECT_EQ(GetStage(run, "a").reason(), "exit 3");
  EXPECT_EQ(GetStage(run, "b").status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(GetStage(run, "b").reason(), "needs 'a', which failed");
  EXPECT_EQ(GetStage(run, "c").status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(GetStage(run, "other").status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(r.reason(), "a failed");
}

TEST_F(SchedulerTest, StagesWaitForRoomAndSayWhy) {
  // The GPU agent is registered (a workflow no registered agent could hold is refused at
  // submission) but away for now.
  uint64_t away = Connect("gpu", 8, 4);
  Batch([&] { scheduler_->OnAgentDisconnected(away); });
  uint64_t n1 = Connect("n1", /*cpus=*/2, /*gpus=*/0);
  int64_t run = Submit(R"(
name: room
stages:
  big: {run: [prog], resources: {gpus: 2}}
  s1: {run: [prog], resources: {cpus: 2}}
  s2: {run: [prog], resources: {cpus: 2}}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);  // one 2-cpu stage fits at a time
  EXPECT_EQ(GetStage(run, "big").status(), v1::STAGE_READY);
  EXPECT_EQ(GetStage(run, "big").reason(), "waiting for an agent with 1 cpus, 2 GPUs free");
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(n1, starts[0].attempt_id(), 0);
  uint64_t g = Connect("gpu", 8, 4);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "big");
  EXPECT_EQ(starts[0].gpus_size(), 2);
  Exit(g, starts[0].attempt_id(), 0);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

// The totals the scheduler keeps in the run's row (what ListRuns and GetRun show) against what
// the run's stages and attempts say, read on a connection of its own at the same instant.
void ExpectTotalsAsStored(const std::string& db_path, int64_t run_id, int64_t now_ms) {
  auto db = store::Db::Open(db_path, false, true);
  ASSERT_TRUE(db.ok()) << db.status();
  v1::Run kept, counted;
  std::optional<store::RunTotals> totals;
  ASSERT_TRUE(store::internal::ReadRunFields(db->get(), run_id, &kept, &totals).ok());
  ASSERT_TRUE(totals.has_value()) << "run " << run_id << " has no totals kept";
  ASSERT_TRUE(store::internal::FillRunTotals(db->get(), run_id, totals, now_ms, &kept).ok());
  ASSERT_TRUE(
      store::internal::FillRunTotals(db->get(), run_id, std::nullopt, now_ms, &counted).ok());
  using Counts = std::map<std::string, int32_t>;
  EXPECT_EQ(Counts(kept.stage_counts().begin(), kept.stage_counts().end()),
            Counts(counted.stage_counts().begin(), counted.stage_counts().end()));
  EXPECT_DOUBLE_EQ(kept.gpu_hours(), counted.gpu_hours());
}

TEST_F(SchedulerTest, RunTotalsFollowStagesAndAttemptsThroughARestart) {
  uint64_t g = Connect("g", 8, 4);
  int64_t run = Submit(R"(
name: totals
stages:
  train: {run: [prog], resources: {gpus: 3}}
  eval: {needs: [train], run: [prog], resources: {gpus: 1}}
  cpu: {run: [prog]}
  broken: {run: [prog]}
  after: {needs: [broken], run: [prog]}
)");
  std::string db = dir_.Join("longhaul.db");
  auto pass = [&](int64_t ms) {  // time goes by, the agent heartbeating
    for (; ms > 0; ms -= 10'000) {
      clock_.AdvanceMs(std::min<int64_t>(ms, 10'000));
      Heartbeat(g);
    }
  };
  ExpectTotalsAsStored(db, run, clock_.NowMs());
  std::map<std::string, int64_t> ids;
  for (const auto& s : TakeStarts()) ids[s.stage()] = s.attempt_id();
  ASSERT_EQ(ids.size(), 3u);
  for (const auto& [name, id] : ids) Started(g, id);
  pass(60'000);
  ExpectTotalsAsStored(db, run, clock_.NowMs());  // three running, one of them on 3 GPUs
  Exit(g, ids["broken"], 1);
  Exit(g, ids["cpu"], 0);
  pass(30'000);
  Exit(g, ids["train"], 0);
  auto eval = TakeStarts();
  ASSERT_EQ(eval.size(), 1u);
  Started(g, eval[0].attempt_id());
  pass(5'000);
  ExpectTotalsAsStored(db, run, clock_.NowMs());
  // A restart rebuilds the totals from the rows: the running attempt counts on from its start.
  NewScheduler();
  g = Connect("g", 8, 4, {[&] {
                v1::OwnedAttempt o;
                o.set_attempt_id(eval[0].attempt_id());
                o.set_running(true);
                return o;
              }()});
  pass(7'000);
  ExpectTotalsAsStored(db, run, clock_.NowMs());
  Exit(g, eval[0].attempt_id(), 0);
  v1::Run done = GetRun(run);
  EXPECT_EQ(done.status(), v1::RUN_FAILED);
  ExpectTotalsAsStored(db, run, clock_.NowMs());
  // 90 s on 3 GPUs, 12 s on 1.
  v1::ListRunsRequest one;
  one.set_id(run);
  auto listed = store_->ListRuns(one);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->runs_size(), 1);
  EXPECT_NEAR(listed->runs(0).gpu_hours(), (90.0 * 3 + 12.0) / 3600.0, 1e-9);
  EXPECT_EQ(listed->runs(0).stage_counts().at("succeeded"), 3);
  EXPECT_EQ(listed->runs(0).stage_counts().at("failed"), 1);
  EXPECT_EQ(listed->runs(0).stage_counts().at("skipped"), 1);
}

TEST_F(SchedulerTest, AMissingOutputFailsTheStageWithTheReason) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: outputs
stages:
  a: {run: [prog]}
  b: {needs: [a], run: [prog, "${a.outputs.endpoint}"]}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  EXPECT_TRUE(TakeStarts().empty());
  v1::Stage b = GetStage(run, "b");
  EXPECT_EQ(b.status(), v1::STAGE_FAILED);
  EXPECT_NE(b.reason().find("endpoint"), std::string::npos) << b.reason();
}

TEST_F(SchedulerTest, CancelStopsRunningAttemptsAndNeverRetries) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: cancel
defaults: {retry: {limit: 3, backoff: 1s}}
stages:
  long: {run: [prog]}
  after: {needs: [long], run: [prog]}
)");
  auto starts = TakeStarts();
  Started(n1, starts[0].attempt_id());
  Batch([&] { ASSERT_TRUE(scheduler_->Cancel(run).ok()); });
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "cancelled");
  EXPECT_EQ(GetRun(run).status(), v1::RUN_RUNNING);  // until the stage has really stopped
  EXPECT_EQ(GetStage(run, "after").status(), v1::STAGE_CANCELLED);
  Exit(n1, starts[0].attempt_id(), 0, /*signal=*/15);
  clock_.AdvanceMs(60'000);
  Batch();
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetRun(run).status(), v1::RUN_CANCELLED);
  EXPECT_EQ(GetStage(run, "long").status(), v1::STAGE_CANCELLED);
  EXPECT_EQ(GetStage(run, "long").attempts(0).state(), v1::ATTEMPT_KILLED);
}

TEST_F(SchedulerTest, ManualRetryRerunsTheStageAndItsSkippedDependentsOnly) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: manual
stages:
  ok: {run: [prog]}
  bad: {needs: [ok], run: [prog]}
  after: {needs: [bad], run: [prog]}
  side: {needs: [ok], run: [prog]}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  for (const auto& s : TakeStarts()) Exit(n1, s.attempt_id(), s.stage() == "bad" ? 1 : 0);
  ASSERT_EQ(GetRun(run).status(), v1::RUN_FAILED);
  ASSERT_EQ(scheduler_->active_runs(), 0u);

  Batch([&] {
    auto r = scheduler_->Retry(run, "after");  // its dependency has not succeeded
    EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  });
  Batch([&] { ASSERT_TRUE(scheduler_->Retry(run, "bad").ok()); });
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "bad");
  EXPECT_EQ(starts[0].attempt(), 2);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_RUNNING);
  EXPECT_EQ(GetStage(run, "after").status(), v1::STAGE_WAITING);
  Exit(n1, starts[0].attempt_id(), 0);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "after");
  Exit(n1, starts[0].attempt_id(), 0);
  v1::Run r = GetRun(run);
  EXPECT_EQ(r.status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(GetStage(run, "ok").attempt_count(), 1);
  EXPECT_EQ(GetStage(run, "side").attempt_count(), 1);
}

TEST_F(SchedulerTest, DryRunAndBadParamsStoreNothing) {
  auto wf = workflow::ParseWorkflow(kDiamond, "d.yaml");
  ASSERT_TRUE(wf.ok());
  SubmitInput in;
  in.workflow = *wf;
  in.text = kDiamond;
  in.hash = "h";
  in.dry_run = true;
  Batch([&] {
    auto out = scheduler_->Submit(in);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->run.id(), 0);
  });
  in.dry_run = false;
  in.overrides = {{"nope", "1"}};
  Batch([&] { EXPECT_FALSE(scheduler_->Submit(in).ok()); });
  v1::ListRunsRequest req;
  EXPECT_EQ(store_->ListRuns(req)->runs_size(), 0);
}

}  // namespace
}  // namespace longhaul::scheduler
