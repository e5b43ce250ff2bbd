#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kOne[] = R"(
name: one
stages:
  gen: {run: [prog]}
)";

TEST_F(SchedulerTest, EventsAreStoredOnceAndAcknowledged) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kOne);
  int64_t id = TakeStarts()[0].attempt_id();
  std::vector<std::string> lines = {
      R"({"metric": {"name": "loss", "value": 2.5, "step": 1}})",
      R"({"artifact": {"name": "samples", "path": "samples.jsonl", "bytes": 10}})",
      R"({"checkpoint": {"path": "ckpt/1", "step": 1}})",
      R"({"message": {"level": "warn", "text": "429, backing off"}})"};
  Events(n1, id, lines);
  auto msgs = TakeAll();
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].ack_events().up_to_seq(), 4);
  Events(n1, id, lines);  // the agent re-sends after a reconnect
  Events(n1, id, {R"({"metric": {"name": "loss", "value": 1.5, "step": 2}})"}, 5);
  v1::ListEventsRequest req;
  req.set_run_id(run);
  req.set_stage("gen");
  EXPECT_EQ(store_->ListEvents(req)->events_size(), 5);
  req.set_type("metric");
  EXPECT_EQ(store_->ListEvents(req)->events_size(), 2);
  v1::Stage s = GetStage(run, "gen");
  ASSERT_EQ(s.metrics_size(), 1);
  EXPECT_DOUBLE_EQ(s.metrics(0).value(), 1.5);
  ASSERT_EQ(s.artifacts_size(), 1);  // not twice
  EXPECT_EQ(s.artifacts(0).path(), "/data/n1/runs/" + std::to_string(run) + "/gen/attempt-1/samples.jsonl");
  EXPECT_EQ(s.last_message(), "429, backing off");
  EXPECT_EQ(s.last_message_level(), "warn");
}

TEST_F(SchedulerTest, AMalformedLineIsAWarningWithItsLineNumber) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kOne);
  int64_t id = TakeStarts()[0].attempt_id();
  Events(n1, id, {R"({"progress": {"done": 1}})", "{oops", R"({"progress": {"done": 2}})"});
  v1::Stage s = GetStage(run, "gen");
  EXPECT_EQ(s.malformed_events(), 1);
  EXPECT_EQ(s.last_malformed(), "line 2: not valid JSON");
  EXPECT_EQ(s.progress().done(), 2);
  EXPECT_EQ(s.status(), v1::STAGE_RUNNING);
  Exit(n1, id, 0);
  EXPECT_EQ(GetStage(run, "gen").status(), v1::STAGE_SUCCEEDED);
}

TEST_F(SchedulerTest, AnEventLineOverOneMebibyteIsDroppedAndCountedMalformed) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kOne);
  int64_t id = TakeStarts()[0].attempt_id();
  std::string huge = R"({"message": ")" + std::string(1 << 20, 'x') + R"("})";
  Events(n1, id, {huge, R"({"progress": {"done": 2}})"});
  v1::Stage s = GetStage(run, "gen");
  EXPECT_EQ(s.malformed_events(), 1);
  EXPECT_EQ(s.last_malformed(), StrCat("line 1: an event line of ", huge.size(),
                                       " bytes, over the limit of 1048576 bytes"));
  EXPECT_EQ(s.progress().done(), 2);
}

TEST_F(SchedulerTest, ProgressGivesARateAndAnEta) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kOne);
  int64_t id = TakeStarts()[0].attempt_id();
  for (int i = 0; i <= 10; ++i) {
    Events(n1, id,
           {R"({"progress": {"done": )" + std::to_string(i * 20) +
            R"(, "total": 1000, "unit": "samples"}})"},
           i + 1);
    clock_.AdvanceMs(10'000);  // 2 samples/s
  }
  v1::Progress p = GetStage(run, "gen").progress();
  EXPECT_EQ(p.unit(), "samples");
  EXPECT_NEAR(p.rate(), 2.0, 1e-6);
  EXPECT_NEAR(p.eta_seconds(), (1000 - 200) / 2.0, 1e-3);
}

TEST_F(SchedulerTest, OutputsOfAResumableStageGoToOneDirAndTheCheckpointIsPassedOn) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: resume
stages:
  train: {run: [prog], resume: true, retry: {limit: 1, backoff: 1s}}
)");
  auto first = TakeStarts()[0];
  EXPECT_FALSE(first.resume());
  EXPECT_EQ(first.output_dir(), "/data/n1/runs/" + std::to_string(run) + "/train");
  Events(n1, first.attempt_id(), {R"({"checkpoint": {"path": "ckpt/epoch-2", "step": 2}})"});
  Exit(n1, first.attempt_id(), 0, 9);
  clock_.AdvanceMs(1'000);
  Batch();
  auto second = TakeStarts()[0];
  EXPECT_TRUE(second.resume());
  EXPECT_EQ(second.output_dir(), first.output_dir());
  EXPECT_EQ(second.checkpoint(), first.output_dir() + "/ckpt/epoch-2");
}

TEST_F(SchedulerTest, WatchersGetASnapshotThenChangesThenTheEnd) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(kOne);
  auto w = std::make_shared<Watcher>();
  Batch([&] { ASSERT_TRUE(scheduler_->Watch(run, w).ok()); });
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w->Next(&u, &final, 0));
  EXPECT_TRUE(u.snapshot());
  EXPECT_FALSE(final);
  int64_t id = TakeStarts()[0].attempt_id();
  Events(n1, id, {R"({"progress": {"done": 5, "total": 10}})"});
  ASSERT_TRUE(w->Next(&u, &final, 0));
  ASSERT_EQ(u.run().stages_size(), 1);
  EXPECT_EQ(u.run().stages(0).progress().done(), 5);
  Exit(n1, id, 0);
  ASSERT_TRUE(w->Next(&u, &final, 0));
  EXPECT_TRUE(final);
  EXPECT_EQ(u.run().status(), v1::RUN_SUCCEEDED);
  // A watcher of an ended run gets one final snapshot from the store.
  auto late = std::make_shared<Watcher>();
  Batch([&] { ASSERT_TRUE(scheduler_->Watch(run, late).ok()); });
  ASSERT_TRUE(late->Next(&u, &final, 0));
  EXPECT_TRUE(final);
}

}  // namespace
}  // namespace longhaul::scheduler
