// A notice before a preemption (docs/scheduling.md, "A notice before the stop"): a victim whose
// stage has `preempt_notice` is sent a PreemptNotice, not a cancel, and is stopped at its first
// checkpoint after it or when the notice ends; one that ends by itself meanwhile ends as it
// ended; a drain sends one too. The scheduler with a fake clock and agent link.
#include "daemon/scheduler/stop_notice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/daemon/scheduler/preemption_fixture.h"

namespace longhaul::scheduler {
namespace {

class StopNoticeTest : public PreemptionTest {
 protected:
  // A low `resume` training with a 2-minute notice, 10 minutes in with a checkpoint at step 10
  // and 2 minutes past it; then a high stage for its GPU. Returns the low run's id.
  int64_t NoticedTraining() {
    sess_ = Connect("a1", 4, 1);
    int64_t low = SubmitClass(
        OneStage("train", 1, "    resume: true\n    grace: 30s\n    preempt_notice: 2m\n"), "low");
    train1_ = TakeStartedIds().at("train");
    Started(sess_, train1_);
    Pass(sess_, 600'000);
    Events(sess_, train1_, {Checkpoint(10)});
    Pass(sess_, 120'000);
    high_ = SubmitClass(OneStage("eval", 1), "high");
    return low;
  }
  // What was sent since the last call: notices, starts and cancels.
  struct Sent {
    std::vector<v1::PreemptNotice> notices;
    std::vector<v1::StartAttempt> starts;
    std::vector<v1::CancelAttempt> cancels;
  };
  Sent TakeSent() {
    Sent out;
    for (const v1::CoordinatorMessage& m : TakeAll()) {
      if (m.has_preempt_notice()) out.notices.push_back(m.preempt_notice());
      if (m.has_start()) out.starts.push_back(m.start());
      if (m.has_cancel()) out.cancels.push_back(m.cancel());
    }
    return out;
  }
  uint64_t sess_ = 0;
  int64_t train1_ = 0;
  int64_t high_ = 0;
};

TEST_F(StopNoticeTest, TheVictimIsNoticedThenStoppedAtTheCheckpointItWrites) {
  metrics::CoordinatorMetrics metrics;
  scheduler_->set_metrics(&metrics);
  int64_t low = NoticedTraining();
  int64_t noticed_at = clock_.NowMs();  // 2023-11-14 22:25:20 UTC
  Sent sent = TakeSent();
  EXPECT_TRUE(sent.cancels.empty()) << "a notice, not a stop";
  EXPECT_TRUE(sent.starts.empty()) << "the GPU is still held";
  ASSERT_EQ(sent.notices.size(), 1u);
  EXPECT_EQ(sent.notices[0].attempt_id(), train1_);
  EXPECT_EQ(sent.notices[0].deadline_ms(), noticed_at + 120'000);
  EXPECT_EQ(sent.notices[0].reason(),
            StrCat("preempted: room for run ", high_, " stage eval (high)"));
  std::string asked = StrCat("waiting for an agent with 1 cpus, 1 GPUs free; asked run ", low,
                             " stage train (low) on a1 to checkpoint (notice until 22:27:20 UTC)");
  EXPECT_EQ(Stage(high_, "eval")->row.reason.str(), asked);

  // Time passes within the notice, another low stage waits: no second decision, no stop.
  Pass(sess_, 30'000);
  int64_t other = SubmitClass(OneStage("other", 1), "low");
  sent = TakeSent();
  EXPECT_TRUE(sent.notices.empty()) << "one notice";
  EXPECT_TRUE(sent.cancels.empty());
  EXPECT_TRUE(sent.starts.empty());
  EXPECT_EQ(Stage(high_, "eval")->row.reason.str(), asked);

  // It checkpoints on the notice: stopped now, as a preemption, with the stage's grace.
  Events(sess_, train1_, {Checkpoint(13)}, 2);
  sent = TakeSent();
  ASSERT_EQ(sent.cancels.size(), 1u);
  EXPECT_EQ(sent.cancels[0].attempt_id(), train1_);
  EXPECT_EQ(sent.cancels[0].reason(), "preempted");
  EXPECT_EQ(sent.cancels[0].grace_ms(), 30'000);
  Pass(sess_, 6'000);  // 6 s from the checkpoint to its exit: 0.1 GPU-min lost
  Exit(sess_, train1_, 143, 15);
  sent = TakeSent();
  ASSERT_EQ(sent.starts.size(), 1u);
  EXPECT_EQ(sent.starts[0].stage(), "eval");
  EXPECT_EQ(Stage(other, "other")->row.status, v1::STAGE_READY);
  EXPECT_EQ(Stage(low, "train")->row.status, v1::STAGE_READY) << "back in the queue";
  EXPECT_EQ(Stage(low, "train")->row.checkpoint_step, 13);
  v1::Stage stored = GetStage(low, "train");
  ASSERT_EQ(stored.attempts_size(), 1);
  EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(stored.attempts(0).reason(),
            StrCat("preempted: room for run ", high_,
                   " stage eval (high); at the checkpoint it wrote on notice; 0.1 GPU-min after "
                   "its last checkpoint"));
  EXPECT_EQ(metrics.preemption_lost_gpu_ms.load(), 6'000u)
      << "counted from the notice's checkpoint";

  v1::ListAuditRequest req;
  auto audit = store_->ListAudit(req);
  ASSERT_TRUE(audit.ok()) << audit.status();
  ASSERT_GE(audit->entries_size(), 1);
  EXPECT_EQ(audit->entries(0).action(), "PreemptAttempt");
  EXPECT_EQ(audit->entries(0).detail(),
            StrCat("room for run ", high_,
                   " stage eval (high) on agent a1; 2.0 GPU-min since its last checkpoint; asked "
                   "to checkpoint first, within 2m00s"));

  // The high stage ends: the training resumes from the checkpoint it wrote on the notice.
  Started(sess_, sent.starts[0].attempt_id());
  Exit(sess_, sent.starts[0].attempt_id(), 0);
  sent = TakeSent();
  ASSERT_EQ(sent.starts.size(), 1u);
  EXPECT_EQ(sent.starts[0].stage(), "train");
  EXPECT_TRUE(sent.starts[0].resume());
}

TEST_F(StopNoticeTest, WithoutACheckpointItIsStoppedWhenTheNoticeEnds) {
  int64_t low = NoticedTraining();
  Sent sent = TakeSent();
  ASSERT_EQ(sent.notices.size(), 1u);
  // The waiting stage is cancelled meanwhile: the notice goes on (the stop was decided).
  Batch([&] { ASSERT_TRUE(scheduler_->Cancel(high_).ok()); });
  Pass(sess_, 115'000);
  sent = TakeSent();
  EXPECT_TRUE(sent.cancels.empty()) << "within the notice";
  Pass(sess_, 5'000);
  sent = TakeSent();
  ASSERT_EQ(sent.cancels.size(), 1u);
  EXPECT_EQ(sent.cancels[0].attempt_id(), train1_);
  EXPECT_EQ(sent.cancels[0].reason(), "preempted");
  Exit(sess_, train1_, 143, 15);
  v1::Stage stored = GetStage(low, "train");
  ASSERT_EQ(stored.attempts_size(), 2) << "the GPU is free again: it runs on at once";
  EXPECT_EQ(stored.attempts(0).reason(),
            StrCat("preempted: room for run ", high_,
                   " stage eval (high); no checkpoint within its notice of 2m00s; 4.0 GPU-min "
                   "after its last checkpoint"));
  EXPECT_EQ(Stage(low, "train")->row.checkpoint_step, 10);
}

TEST_F(StopNoticeTest, AnAttemptThatEndsByItselfDuringTheNoticeEndsAsItEnded) {
  int64_t low = NoticedTraining();
  Sent sent = TakeSent();
  ASSERT_EQ(sent.notices.size(), 1u);
  Pass(sess_, 20'000);
  Exit(sess_, train1_, 0);
  v1::Stage stored = GetStage(low, "train");
  EXPECT_EQ(stored.status(), v1::STAGE_SUCCEEDED);
  EXPECT_EQ(stored.attempts(0).state(), v1::ATTEMPT_EXITED);
  EXPECT_EQ(stored.attempts(0).reason(), "");
  sent = TakeSent();
  ASSERT_EQ(sent.starts.size(), 1u);
  EXPECT_EQ(sent.starts[0].stage(), "eval");
  Started(sess_, sent.starts[0].attempt_id());
  Pass(sess_, 200'000);  // past the notice's end: its timer stops nothing
  sent = TakeSent();
  EXPECT_TRUE(sent.cancels.empty());
}

TEST_F(StopNoticeTest, AStageWithoutTheKeyIsStoppedAtOnce) {
  uint64_t sess = Connect("a1", 4, 1);
  SubmitClass(OneStage("train", 1, "    resume: true\n"), "low");
  int64_t train1 = TakeStartedIds().at("train");
  Started(sess, train1);
  SubmitClass(OneStage("eval", 1), "high");
  Sent sent = TakeSent();
  EXPECT_TRUE(sent.notices.empty()) << "SIGUSR1 would kill a stage that does not handle it";
  ASSERT_EQ(sent.cancels.size(), 1u);
  EXPECT_EQ(sent.cancels[0].attempt_id(), train1);
}

TEST_F(StopNoticeTest, ADrainNoticesTooAndStopsAtTheCheckpoint) {
  uint64_t sess = Connect("a1", 4, 1);
  int64_t run = Submit(OneStage("train", 1, "    resume: true\n    preempt_notice: 1m\n"));
  int64_t train1 = TakeStartedIds().at("train");
  Started(sess, train1);
  Pass(sess, 60'000);
  Batch([&] {
    Result<v1::AgentInfo> info =
        scheduler_->SetAgentDrain("a1", clock_.NowMs() + 1'000, false, "kernel upgrade", "ada");
    ASSERT_TRUE(info.ok()) << info.status();
  });
  EXPECT_TRUE(TakeSent().notices.empty()) << "nothing before the drain's time";
  clock_.AdvanceMs(1'000);
  Batch();
  Sent sent = TakeSent();
  ASSERT_EQ(sent.notices.size(), 1u) << "asked to checkpoint, not stopped";
  EXPECT_TRUE(sent.cancels.empty());
  EXPECT_EQ(sent.notices[0].attempt_id(), train1);
  EXPECT_EQ(sent.notices[0].reason().rfind("drain: agent a1 drained at ", 0), 0u)
      << sent.notices[0].reason();
  Events(sess, train1, {Checkpoint(4)});
  sent = TakeSent();
  ASSERT_EQ(sent.cancels.size(), 1u);
  EXPECT_EQ(sent.cancels[0].reason(), "drain");
  Exit(sess, train1, 143, 15);
  v1::Stage stored = GetStage(run, "train");
  ASSERT_GE(stored.attempts_size(), 1);
  EXPECT_THAT(stored.attempts(0).reason(),
              ::testing::EndsWith("(kernel upgrade); at the checkpoint it wrote on notice"));
  EXPECT_EQ(Stage(run, "train")->row.checkpoint_step, 4);
}

TEST(StopNoticesTest, TakeRemovesAndEndedForgets) {
  StopNotices book;
  book.Add(5, {.at_ms = 1, .deadline_ms = 2, .kind = "preempted", .detail = "d", .text = "t"});
  ASSERT_NE(book.Find(5), nullptr);
  EXPECT_EQ(book.Take(5)->kind, "preempted");
  EXPECT_EQ(book.Find(5), nullptr);
  EXPECT_FALSE(book.Take(5).has_value());
  book.Add(6, {});
  book.Ended(6);
  EXPECT_EQ(book.Find(6), nullptr);
  EXPECT_EQ(NoticeClockText(1'700'000'000'000), "22:13:20 UTC");
}

}  // namespace
}  // namespace longhaul::scheduler
