// The command backend's output scanning and checkpoint finding, with a fake clock and a temp
// directory.
#include "stages/command/output_scanner.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/event.h"
#include "core/strings.h"
#include "stages/command/checkpoint_watcher.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace longhaul::command {
namespace {

using testing::TempDir;

ScanPatterns Patterns(std::string progress, std::string loss, std::string epoch = "",
                      std::vector<std::string> metrics = {}) {
  ScanPatterns p;
  p.progress = std::move(progress);
  p.loss = std::move(loss);
  p.epoch = std::move(epoch);
  p.metrics = std::move(metrics);
  return p;
}

class ScannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto w = EventWriter::Open(dir_.Join("events.jsonl"));
    ASSERT_TRUE(w.ok());
    events_ = std::move(*w);
  }
  std::vector<StageEvent> Events() { return testing::ReadEvents(dir_.Join("events.jsonl")); }
  OutputScanner Make(ScanPatterns p) {
    auto s = OutputScanner::Create(p, &clock_);
    EXPECT_TRUE(s.ok()) << s.status();
    return std::move(*s);
  }
  TempDir dir_;
  testing::FakeClock clock_;
  EventWriter events_;
};

TEST_F(ScannerTest, ProgressLossAndEpochBecomeEvents) {
  OutputScanner s = Make(Patterns(R"((\d+)/(\d+))", R"(loss[=: ]+([0-9.eE+-]+))", R"(Epoch (\d+))",
                                  {"acc=acc_0: ([0-9.]+)"}));
  s.ScanLine("Epoch 1", events_);
  clock_.AdvanceMs(1000);
  s.ScanLine("step 5/100 loss=2.5e-1 acc_0: 0.61", events_);
  clock_.AdvanceMs(1000);
  s.ScanLine("step 6/100 loss: 0.2", events_);
  s.ScanLine("no numbers here", events_);
  s.Flush(events_);
  std::vector<StageEvent> ev = Events();
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[0].type, EventType::kMetric);
  EXPECT_EQ(ev[0].name, "epoch");
  EXPECT_EQ(ev[0].value, 1);
  EXPECT_EQ(ev[1].type, EventType::kProgress);
  EXPECT_EQ(ev[1].done, 5);
  EXPECT_EQ(*ev[1].total, 100);
  EXPECT_EQ(ev[1].unit, "steps");
  EXPECT_EQ(ev[2].name, "loss");
  EXPECT_DOUBLE_EQ(ev[2].value, 0.25);
  EXPECT_EQ(*ev[2].step, 5);  // the progress count is the step
  EXPECT_EQ(ev[3].name, "acc");
  EXPECT_DOUBLE_EQ(ev[3].value, 0.61);
  EXPECT_EQ(ev[4].done, 6);
  EXPECT_DOUBLE_EQ(ev[5].value, 0.2);
  EXPECT_EQ(*ev[5].step, 6);
  EXPECT_DOUBLE_EQ(*s.last_loss(), 0.2);
}

TEST_F(ScannerTest, RateLimitedAndFlushedLatestValue) {
  OutputScanner s = Make(Patterns(R"((\d+)/(\d+))", R"(loss=([0-9.]+))"));
  for (int i = 1; i <= 50; ++i) s.ScanLine(StrCat(i, "/50 loss=", 1.0 / i), events_);
  // Same instant: only the first of each kind went out.
  EXPECT_EQ(Events().size(), 2u);
  clock_.AdvanceMs(150);
  s.Flush(events_);
  std::vector<StageEvent> ev = Events();
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[2].done, 50);
  EXPECT_DOUBLE_EQ(ev[3].value, 1.0 / 50);
  EXPECT_EQ(*ev[3].step, 50);
}

TEST_F(ScannerTest, EpochsAreTheProgressWithoutAProgressPattern) {
  OutputScanner s = Make(Patterns("", R"(loss ([0-9.]+))", R"(epoch (\d+)/(\d+))"));
  s.ScanLine("epoch 2/3 loss 0.5", events_);
  std::vector<StageEvent> ev = Events();
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[1].type, EventType::kProgress);
  EXPECT_EQ(ev[1].done, 2);
  EXPECT_EQ(*ev[1].total, 3);
  EXPECT_EQ(ev[1].unit, "epochs");
  EXPECT_EQ(*ev[2].step, 1);  // the first loss line
}

TEST(ScannerCreateTest, BadPatternsNameTheFlag) {
  testing::FakeClock clock;
  auto bad = OutputScanner::Create(Patterns("", "loss=("), &clock);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(ToStd(bad.status().message()).find("--loss-pattern 'loss=('"), std::string::npos);
  auto nogroup = OutputScanner::Create(Patterns(R"(\d+/\d+)", ""), &clock);
  ASSERT_FALSE(nogroup.ok());
  EXPECT_NE(ToStd(nogroup.status().message()).find("capture group"), std::string::npos);
  auto metric = OutputScanner::Create(Patterns("", "", "", {"noequals"}), &clock);
  ASSERT_FALSE(metric.ok());
  EXPECT_NE(ToStd(metric.status().message()).find("NAME=REGEX"), std::string::npos);
}

TEST(CheckpointWatcherTest, NaturalOrderAndSteps) {
  EXPECT_TRUE(NaturalLess("epoch_9", "epoch_10"));
  EXPECT_FALSE(NaturalLess("epoch_10", "epoch_9"));
  EXPECT_TRUE(NaturalLess("ckpt-002", "ckpt-10"));
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_EQ(*StepOf("out/epoch_12"), 12);
  EXPECT_EQ(*StepOf("out/checkpoint-1500/"), 1500);
  EXPECT_FALSE(StepOf("out/final").has_value());
}

TEST(CheckpointWatcherTest, ReportsCheckpointsOnceTheyStopChanging) {
  TempDir dir;
  testing::WriteTextFile(dir.Join("epoch_0"), "from an earlier attempt");
  CheckpointWatcher w(dir.path(), "epoch_*");
  EXPECT_TRUE(w.Poll().empty());  // known at start: not reported again

  std::filesystem::create_directory(dir.Join("epoch_1"));
  testing::WriteTextFile(dir.Join("epoch_1/weights"), "1234");
  EXPECT_TRUE(w.Poll().empty());  // first sight: may still be written
  testing::WriteTextFile(dir.Join("epoch_1/optimizer"), "5678");
  EXPECT_TRUE(w.Poll().empty());  // it grew
  auto found = w.Poll();          // unchanged since the last poll
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].path, dir.Join("epoch_1"));
  EXPECT_EQ(*found[0].step, 1);
  EXPECT_TRUE(w.Poll().empty());

  std::filesystem::create_directory(dir.Join("epoch_10"));
  std::filesystem::create_directory(dir.Join("epoch_2"));
  testing::WriteTextFile(dir.Join("epoch_2/w"), "x");
  std::filesystem::create_directory(dir.Join("epoch_3.tmp"));
  auto rest = w.Final();
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].path, dir.Join("epoch_2"));
  EXPECT_EQ(rest[1].path, dir.Join("epoch_10"));
  EXPECT_EQ(*w.Newest(), dir.Join("epoch_10"));
}

}  // namespace
}  // namespace longhaul::command
