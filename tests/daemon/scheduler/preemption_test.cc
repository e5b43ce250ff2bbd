// Preemption (docs/scheduling.md, "Preemption"): the victim rule alone (ChooseVictims), then
// the scheduler with a fake clock and agent link: who is stopped, the waiting stage holding the
// freed room, the stopped stage's way back with its checkpoint, and what is recorded.
#include "daemon/scheduler/preemption.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/daemon/scheduler/preemption_fixture.h"

namespace longhaul::scheduler {
namespace {

v1::Resources Room(double cpus, int gpus) {
  v1::Resources r;
  r.set_cpus(cpus);
  r.set_gpus(gpus);
  return r;
}

PreemptCandidate Cand(int64_t id, const std::string& agent, int rank, int64_t lost_gpu_ms,
                      int gpus) {
  PreemptCandidate c;
  c.attempt_id = id;
  c.agent_id = agent;
  c.rank = rank;
  c.lost_gpu_ms = lost_gpu_ms;
  c.lost_ms = gpus > 0 ? lost_gpu_ms / gpus : lost_gpu_ms;
  c.frees = Room(1, gpus);
  return c;
}

std::vector<int64_t> Ids(const PreemptChoice& c) {
  std::vector<int64_t> out;
  for (const PreemptCandidate& v : c.victims) out.push_back(v.attempt_id);
  return out;
}

TEST(ChooseVictimsTest, LowestClassFirstEvenWhenItLosesMore) {
  std::vector<AgentRoom> agents = {{"a1", Room(0, 0)}};
  auto choice =
      ChooseVictims({Cand(1, "a1", /*normal*/ 1, 1'000, 1), Cand(2, "a1", /*low*/ 2, 900'000, 1)},
                    agents, Room(1, 1));
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(Ids(*choice), (std::vector<int64_t>{2}));
  EXPECT_EQ(choice->agent_id, "a1");
  EXPECT_EQ(choice->lost_gpu_ms, 900'000);
}

TEST(ChooseVictimsTest, WithinAClassTheLeastProgressLostSinceItsCheckpoint) {
  std::vector<AgentRoom> agents = {{"a1", Room(0, 0)}};
  auto choice = ChooseVictims(
      {Cand(1, "a1", 2, 600'000, 1), Cand(2, "a1", 2, 60'000, 1), Cand(3, "a1", 2, 300'000, 1)},
      agents, Room(1, 1));
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(Ids(*choice), (std::vector<int64_t>{2}));
}

TEST(ChooseVictimsTest, OnlyAsManyAsTheRoomNeeds) {
  // 1 GPU free already; the stage needs 3: two of the four 1-GPU attempts, the cheapest.
  std::vector<AgentRoom> agents = {{"a1", Room(4, 1)}};
  auto choice = ChooseVictims({Cand(1, "a1", 2, 40, 1), Cand(2, "a1", 2, 10, 1),
                               Cand(3, "a1", 2, 30, 1), Cand(4, "a1", 2, 20, 1)},
                              agents, Room(1, 3));
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(Ids(*choice), (std::vector<int64_t>{2, 4}));
}

TEST(ChooseVictimsTest, AVictimThatFreesNothingNeededIsGivenBack) {
  // The CPU-only attempt loses least and is taken first, but the GPUs are what is missing.
  std::vector<AgentRoom> agents = {{"a1", Room(4, 0)}};
  auto choice =
      ChooseVictims({Cand(1, "a1", 2, 0, 0), Cand(2, "a1", 2, 50, 2)}, agents, Room(1, 2));
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(Ids(*choice), (std::vector<int64_t>{2}));
}

TEST(ChooseVictimsTest, OneAgentOnlyAndTheCheapestAgent) {
  // For 4 GPUs only a2's attempts free enough (a1's free 3).
  std::vector<AgentRoom> agents = {{"a1", Room(8, 0)}, {"a2", Room(8, 0)}};
  std::vector<PreemptCandidate> cands = {Cand(1, "a1", 2, 10, 2), Cand(2, "a1", 2, 10, 1),
                                         Cand(3, "a2", 2, 500, 2), Cand(4, "a2", 2, 500, 2)};
  auto four = ChooseVictims(cands, agents, Room(1, 4));
  ASSERT_TRUE(four.has_value());
  EXPECT_EQ(four->agent_id, "a2");
  EXPECT_EQ(Ids(*four), (std::vector<int64_t>{4, 3})) << "equal losses: the younger first";
  // For 2 GPUs either agent would do: a1 loses least.
  auto two = ChooseVictims(cands, agents, Room(1, 2));
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->agent_id, "a1");
  EXPECT_EQ(Ids(*two), (std::vector<int64_t>{1}));
  // An agent the stage may not go to is not in `agents`: its candidates do not count.
  auto only_a1 = ChooseVictims(cands, {{"a1", Room(8, 0)}}, Room(1, 4));
  EXPECT_FALSE(only_a1.has_value());
}

TEST(ChooseVictimsTest, NothingWhenTheRoomFitsAlreadyOrCannotBeMade) {
  EXPECT_FALSE(ChooseVictims({Cand(1, "a1", 2, 0, 1)}, {{"a1", Room(1, 1)}}, Room(1, 1)));
  EXPECT_FALSE(ChooseVictims({}, {{"a1", Room(0, 0)}}, Room(1, 1)));
}

TEST(GpuMinutesTextTest, OneDecimal) {
  EXPECT_EQ(GpuMinutesText(0), "0.0 GPU-min");
  EXPECT_EQ(GpuMinutesText(750'000), "12.5 GPU-min");
}

TEST(PreemptionBookTest, ARecordLastsWhileAVictimIsBeingStopped) {
  PreemptionBook book;
  book.Add({7, 0}, {.agent_id = "a1", .victims = {11, 12}, .text = "t"});
  ASSERT_NE(book.Find({7, 0}), nullptr);
  EXPECT_TRUE(book.IsVictim(11));
  book.Ended(11);
  ASSERT_NE(book.Find({7, 0}), nullptr);
  book.Ended(99);  // not a victim: nothing
  book.Ended(12);
  EXPECT_EQ(book.Find({7, 0}), nullptr);
  EXPECT_FALSE(book.IsVictim(12));
}

// --- the scheduler ---

TEST_F(PreemptionTest, AHighStageStopsALowAttemptWhichResumesFromItsCheckpointAfter) {
  metrics::CoordinatorMetrics metrics;
  scheduler_->set_metrics(&metrics);
  uint64_t sess = Connect("a1", 4, 1);
  int64_t low = SubmitClass(OneStage("train", 1, "    resume: true\n    grace: 30s\n"), "low");
  int64_t train1 = TakeStartedIds().at("train");
  Started(sess, train1);
  Pass(sess, 600'000);
  Events(sess, train1, {Checkpoint(10)});
  Pass(sess, 120'000);  // 2 GPU-min since the checkpoint

  int64_t high = SubmitClass(OneStage("eval", 1), "high");
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  EXPECT_TRUE(starts.empty()) << "the GPU is still held";
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), train1);
  EXPECT_EQ(cancels[0].reason(), "preempted");
  EXPECT_EQ(cancels[0].grace_ms(), 30'000) << "stopped as a cancel, with the stage's grace";
  EXPECT_EQ(Stage(high, "eval")->row.reason.str(),
            StrCat("waiting for an agent with 1 cpus, 1 GPUs free; preempting run ", low,
                   " stage train (low) on a1 for its room"));

  // More passes while it stops (another stage becomes ready): no second decision, and the
  // younger stage does not take what frees.
  Pass(sess, 5'000);
  int64_t other = SubmitClass(OneStage("other", 1), "low");
  Take(&starts, &cancels);
  EXPECT_EQ(cancels.size(), 1u);
  EXPECT_TRUE(starts.empty());

  // It checkpoints on SIGTERM and exits: the high stage takes the GPU.
  Events(sess, train1, {Checkpoint(11)}, 2);
  Exit(sess, train1, 143, 15);
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "eval");
  EXPECT_EQ(Stage(other, "other")->row.status, v1::STAGE_READY);
  const StageState* train = Stage(low, "train");
  EXPECT_EQ(train->row.status, v1::STAGE_READY) << "back in the queue, not failed";
  // Its wait says who took its room and when (the fake clock: 22:13:20 UTC plus 12 minutes).
  EXPECT_THAT(train->row.reason.str(),
              ::testing::StartsWith(
                  StrCat("preempted by run ", high,
                         " stage eval (high) at 22:25:20 UTC; waiting for an agent with 1 "
                         "cpus, 1 GPUs free")));
  EXPECT_EQ(train->row.infra_retries_used, 1);
  EXPECT_EQ(train->row.retries_used, 0);
  v1::Stage stored = GetStage(low, "train");
  ASSERT_EQ(stored.attempts_size(), 1);
  EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(stored.attempts(0).reason(),
            StrCat("preempted: room for run ", high,
                   " stage eval (high); 0.0 GPU-min after its last checkpoint"));
  auto preempted = metrics.preemptions.Read();
  EXPECT_EQ(preempted["low"], 1u);
  EXPECT_EQ(metrics.preemption_lost_gpu_ms.load(), 0u);

  v1::ListAuditRequest req;
  auto audit = store_->ListAudit(req);
  ASSERT_TRUE(audit.ok()) << audit.status();
  ASSERT_GE(audit->entries_size(), 1);
  const v1::AuditEntry& e = audit->entries(0);
  EXPECT_EQ(e.action(), "PreemptAttempt");
  EXPECT_EQ(e.principal(), "longhauld");
  EXPECT_EQ(e.target(), StrCat("run ", low, " stage train attempt 1"));
  EXPECT_EQ(e.detail(), StrCat("room for run ", high,
                               " stage eval (high) on agent a1; 2.0 GPU-min since its last "
                               "checkpoint"));

  // The high stage ends: the training resumes from its checkpoint.
  Started(sess, starts[0].attempt_id());
  Exit(sess, starts[0].attempt_id(), 0);
  starts.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "train");
  EXPECT_EQ(starts[0].attempt(), 2);
  EXPECT_TRUE(starts[0].resume());
  EXPECT_NE(starts[0].checkpoint().find("ckpt"), std::string::npos) << starts[0].checkpoint();
  ASSERT_NE(Stage(low, "train")->extras, nullptr);
  EXPECT_EQ(Stage(low, "train")->extras->preempted_by, "") << "placed: the note is dropped";
}

TEST_F(PreemptionTest, TheVictimIsTheLowestClassThenTheLeastLostAndNotAnUnpreemptibleStage) {
  uint64_t sess = Connect("a1", 8, 4);
  // Four 1-GPU attempts: normal (lost least), low with an old checkpoint, low with a recent
  // one, and low but `preemptible: false` (lost nothing since it started).
  int64_t normal = SubmitClass(OneStage("n", 1), "normal");
  std::map<std::string, int64_t> ids = TakeStartedIds();
  int64_t n_id = ids.at("n");
  int64_t old_ckpt = SubmitClass(OneStage("old", 1, "    resume: true\n"), "low");
  int64_t old_id = TakeStartedIds().at("old");
  int64_t recent = SubmitClass(OneStage("recent", 1, "    resume: true\n"), "low");
  int64_t recent_id = TakeStartedIds().at("recent");
  Pass(sess, 60'000);
  int64_t keep = SubmitClass(OneStage("keep", 1, "    preemptible: false\n"), "low");
  int64_t keep_id = TakeStartedIds().at("keep");
  for (int64_t id : {n_id, old_id, recent_id, keep_id}) Started(sess, id);
  Events(sess, old_id, {Checkpoint(1)});
  Pass(sess, 600'000);
  Events(sess, recent_id, {Checkpoint(1)});
  Pass(sess, 60'000);

  SubmitClass(OneStage("urgent", 1), "high");
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), recent_id) << "low, 1 GPU-min since its checkpoint";

  // A second high stage: the next low one with a checkpoint (old), not `keep`, not normal.
  SubmitClass(OneStage("urgent2", 1), "high");
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 2u);
  EXPECT_EQ(cancels[1].attempt_id(), old_id);

  // A third: only the normal one is left that may be stopped.
  SubmitClass(OneStage("urgent3", 1), "high");
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 3u);
  EXPECT_EQ(cancels[2].attempt_id(), n_id);
  // A fourth finds none: `keep` runs on.
  SubmitClass(OneStage("urgent4", 1), "high");
  Take(&starts, &cancels);
  EXPECT_EQ(cancels.size(), 3u);
  EXPECT_EQ(Stage(keep, "keep")->row.status, v1::STAGE_RUNNING);
  (void)normal;
  (void)old_ckpt;
  (void)recent;
}

TEST_F(PreemptionTest, OnlyAsManyAsNeededAndNoneForTheSameClass) {
  uint64_t sess = Connect("a1", 8, 2);
  SubmitClass(OneStage("a", 1), "low");
  SubmitClass(OneStage("b", 1), "low");
  std::map<std::string, int64_t> ids;
  for (const v1::StartAttempt& s : TakeStarts()) ids[s.stage()] = s.attempt_id();
  ASSERT_EQ(ids.size(), 2u);
  Started(sess, ids["a"]);
  Started(sess, ids["b"]);
  Pass(sess, 60'000);
  // A low stage waits behind them: the same class never preempts.
  int64_t same = SubmitClass(OneStage("c", 1), "low");
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  EXPECT_TRUE(cancels.empty());
  EXPECT_EQ(Stage(same, "c")->row.status, v1::STAGE_READY);
  // A normal stage needs one GPU: one of the two is stopped.
  int64_t normal = SubmitClass(OneStage("d", 1), "normal");
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 1u);
  Exit(sess, cancels[0].attempt_id(), 143, 15);
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u) << "the normal stage takes the freed GPU, not the older low one";
  EXPECT_EQ(starts[0].run_id(), normal);
}

TEST_F(PreemptionTest, AVictimWhoseInfrastructureRetriesAreSpentIsNotChosen) {
  uint64_t sess = Connect("a1", 4, 1);
  SubmitClass(OneStage("train", 1, "    retry: {infra_limit: 0}\n"), "low");
  Started(sess, TakeStartedIds().at("train"));
  SubmitClass(OneStage("eval", 1), "high");
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  Take(&starts, &cancels);
  EXPECT_TRUE(cancels.empty()) << "stopping it would fail it";
}

TEST_F(PreemptionTest, CancellingTheVictimsRunWhileItStopsCancelsIt) {
  uint64_t sess = Connect("a1", 4, 1);
  int64_t low = SubmitClass(OneStage("train", 1), "low");
  int64_t train1 = TakeStartedIds().at("train");
  Started(sess, train1);
  SubmitClass(OneStage("eval", 1), "high");
  ASSERT_EQ(TakeCancels().size(), 1u);
  Batch([&] { ASSERT_TRUE(scheduler_->Cancel(low).ok()); });
  Exit(sess, train1, 143, 15);
  EXPECT_EQ(GetRun(low).status(), v1::RUN_CANCELLED);
  EXPECT_EQ(TakeStarts().size(), 1u) << "the high stage runs";
}

constexpr char kLowService[] = R"(
name: served
stages:
  server:
    kind: service
    run: [serve]
    resources: {gpus: 1, cpus: 1}
  client:
    needs: [server]
    run: [client]
)";

TEST_F(PreemptionTest, AServiceIsPreemptedOnlyWithoutARunningConsumerAndStartsAgainWhenNeeded) {
  uint64_t sess = Connect("a1", 4, 1);
  int64_t low = SubmitClass(kLowService, "low");
  int64_t server1 = TakeStartedIds().at("server");
  Started(sess, server1);
  Events(sess, server1, {R"({"ready": {}})"});
  int64_t client = TakeStartedIds().at("client");
  Started(sess, client);
  // Its consumer runs: the service is not stopped (and the client frees no GPU).
  int64_t high = SubmitClass(OneStage("eval", 1), "high");
  EXPECT_TRUE(TakeCancels().empty());
  EXPECT_EQ(Stage(high, "eval")->row.status, v1::STAGE_READY);
  Pass(sess, 10'000);
  EXPECT_TRUE(TakeCancels().empty());
  Batch([&] { ASSERT_TRUE(scheduler_->Cancel(high).ok()); });

  // A second client run needing a service that starts and waits: now it may be stopped.
  int64_t low2 = SubmitClass(kLowService, "low");
  Exit(sess, client, 0);  // the first run's client ends: its server stops
  std::vector<v1::StartAttempt> starts;
  std::vector<v1::CancelAttempt> cancels;
  starts.clear();
  cancels.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].reason(), "stopped");
  Exit(sess, server1, 0, 15);
  EXPECT_EQ(GetRun(low).status(), v1::RUN_SUCCEEDED);
  starts.clear();
  cancels.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(starts[0].stage(), "server");
  int64_t server2 = starts[0].attempt_id();
  Started(sess, server2);  // starting, not ready: its client waits
  int64_t high2 = SubmitClass(OneStage("eval", 1), "high");
  starts.clear();
  cancels.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(cancels.size(), 1u);
  EXPECT_EQ(cancels[0].attempt_id(), server2);
  EXPECT_EQ(cancels[0].reason(), "preempted");
  Exit(sess, server2, 143, 15);
  starts.clear();
  cancels.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].run_id(), high2);
  const StageState* server = Stage(low2, "server");
  EXPECT_EQ(server->row.status, v1::STAGE_READY) << server->row.reason.str();
  EXPECT_EQ(server->row.infra_retries_used, 1);
  // The high stage ends: the service starts again for its client.
  Started(sess, starts[0].attempt_id());
  Exit(sess, starts[0].attempt_id(), 0);
  starts.clear();
  cancels.clear();
  Take(&starts, &cancels);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "server");
  EXPECT_EQ(starts[0].attempt(), 2);
}

}  // namespace
}  // namespace longhaul::scheduler
