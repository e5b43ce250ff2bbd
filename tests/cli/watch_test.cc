#include "cli/watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <sstream>

#include "core/strings.h"
#include "tests/testing/fake_clock.h"

namespace longhaul::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kT0 = 1'700'000'000'000;  // 22:13:20 UTC

v1::Stage MakeStage(const std::string& name, v1::StageStatus status) {
  v1::Stage s;
  s.set_name(name);
  s.set_kind("task");
  s.set_status(status);
  return s;
}

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
  std::vector<std::string> Lines() {
    std::vector<std::string> lines = StrSplit(out_.str(), '\n');
    if (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
  }

  std::ostringstream out_;
  testing::FakeClock clock_{kT0};
};

v1::RunUpdate Snapshot() {
  v1::RunUpdate u;
  u.set_snapshot(true);
  v1::Run* run = u.mutable_run();
  run->set_id(12);
  run->set_workflow_name("hello");
  run->set_status(v1::RUN_RUNNING);
  run->set_started_at_ms(kT0);
  v1::Stage* greet = run->add_stages();
  *greet = MakeStage("greet", v1::STAGE_RUNNING);
  greet->set_attempt_count(1);
  greet->set_started_at_ms(kT0);
  *run->add_stages() = MakeStage("left", v1::STAGE_WAITING);
  return u;
}

// A later update: the run's fields and only the stages that changed.
v1::RunUpdate Delta(v1::RunStatus run_status, std::vector<v1::Stage> stages) {
  v1::RunUpdate u;
  u.mutable_run()->set_id(12);
  u.mutable_run()->set_workflow_name("hello");
  u.mutable_run()->set_status(run_status);
  u.mutable_run()->set_started_at_ms(kT0);
  for (auto& s : stages) *u.mutable_run()->add_stages() = s;
  return u;
}

TEST(RunTrackerTest, DeltasReplaceChangedStagesAndKeepTheOthers) {
  RunTracker tracker;
  tracker.Apply(Snapshot());
  v1::Stage left = MakeStage("left", v1::STAGE_RUNNING);
  std::vector<std::string> names = tracker.Apply(Delta(v1::RUN_RUNNING, {left}));
  EXPECT_THAT(names, ElementsAre("left"));
  ASSERT_EQ(tracker.run().stages_size(), 2);
  EXPECT_EQ(tracker.run().stages(0).name(), "greet");
  EXPECT_EQ(tracker.run().stages(0).status(), v1::STAGE_RUNNING);
  EXPECT_EQ(tracker.run().stages(1).status(), v1::STAGE_RUNNING);
  // A stage the snapshot did not have is added.
  tracker.Apply(Delta(v1::RUN_RUNNING, {MakeStage("extra", v1::STAGE_READY)}));
  EXPECT_EQ(tracker.run().stages_size(), 3);
  // A new snapshot replaces everything.
  tracker.Apply(Snapshot());
  EXPECT_EQ(tracker.run().stages_size(), 2);
}

TEST_F(WatchTest, PlainModePrintsOneLinePerChange) {
  WatchRenderer r(out_, clock_, /*terminal=*/false, nullptr, /*progress_interval_ms=*/1'000);
  r.OnUpdate(Snapshot());

  clock_.AdvanceMs(2'000);
  v1::Stage greet = MakeStage("greet", v1::STAGE_SUCCEEDED);
  greet.set_attempt_count(1);
  (*greet.mutable_outputs())["word"] = "hello";
  v1::Stage left = MakeStage("left", v1::STAGE_RUNNING);
  left.set_attempt_count(1);
  r.OnUpdate(Delta(v1::RUN_RUNNING, {greet, left}));

  clock_.AdvanceMs(1'000);
  v1::Progress* p = left.mutable_progress();
  p->set_done(5);
  p->set_total(20);
  p->set_unit("steps");
  p->set_rate(2.5);
  p->set_eta_seconds(6);
  left.set_last_message("working");
  r.OnUpdate(Delta(v1::RUN_RUNNING, {left}));

  // Same whole percent, nothing else new: no line.
  p->set_done(5.1);
  r.OnUpdate(Delta(v1::RUN_RUNNING, {left}));

  clock_.AdvanceMs(1'000);
  left.set_status(v1::STAGE_FAILED);
  left.set_reason("exit 3");
  p->set_done(7);
  left.set_ended_at_ms(clock_.NowMs());
  v1::RunUpdate last = Delta(v1::RUN_FAILED, {left});
  last.mutable_run()->set_reason("stage 'left' failed");
  last.mutable_run()->set_ended_at_ms(clock_.NowMs());
  r.OnUpdate(last);
  r.Finish();

  EXPECT_THAT(Lines(),
              ElementsAre("22:13:20  run 12  hello  running", "22:13:20  greet  running  attempt 1",
                          "22:13:20  left  waiting", "22:13:22  greet  succeeded  attempt 1",
                          "22:13:22  left  running  attempt 1",
                          "22:13:23  left  running  attempt 1  5/20 steps (25%)  2.5 steps/s  "
                          "ETA 6s  - working",
                          "22:13:24  run 12  hello  failed",
                          "22:13:24  left  failed  attempt 1  7/20 steps (35%)  2.5 steps/s  "
                          "exit 3  - working",
                          "run 12 failed after 4s: stage 'left' failed"));
  EXPECT_EQ(r.run().status(), v1::RUN_FAILED);
}

// A stage that reports progress 100 times a second for 25 s, piped: a line when it starts,
// then at most one every 10 s (the default interval); its end at once, whenever it comes.
TEST_F(WatchTest, PlainModePrintsProgressAtMostOncePerIntervalAndStateChangesAtOnce) {
  WatchRenderer r(out_, clock_, /*terminal=*/false);
  r.OnUpdate(Snapshot());
  v1::Stage greet = MakeStage("greet", v1::STAGE_RUNNING);
  greet.set_attempt_count(1);
  v1::Progress* p = greet.mutable_progress();
  p->set_total(2'500);
  p->set_unit("steps");
  for (int i = 1; i <= 2'500; ++i) {
    clock_.AdvanceMs(10);
    p->set_done(i);
    greet.set_last_message(StrCat("step ", i));
    r.OnUpdate(Delta(v1::RUN_RUNNING, {greet}));
  }
  greet.set_status(v1::STAGE_SUCCEEDED);
  r.OnUpdate(Delta(v1::RUN_RUNNING, {greet}));
  std::vector<std::string> lines = Lines();
  // The snapshot (run, greet, left), a progress line at 10 s and 20 s, and the end.
  ASSERT_EQ(lines.size(), 6u) << out_.str();
  EXPECT_THAT(lines[3], HasSubstr("22:13:30  greet  running  attempt 1  1000/2500 steps (40%)"));
  EXPECT_THAT(lines[4], HasSubstr("22:13:40  greet  running  attempt 1  2000/2500 steps (80%)"));
  EXPECT_THAT(lines[5], HasSubstr("22:13:45  greet  succeeded  attempt 1"));
}

// A run of 200 stages, in two snapshot chunks: 199 waiting, s0 running.
std::vector<v1::RunUpdate> BigSnapshot() {
  std::vector<v1::RunUpdate> chunks(2);
  for (int c = 0; c < 2; ++c) {
    v1::Run* run = chunks[c].mutable_run();
    run->set_id(12);
    run->set_workflow_name("big");
    run->set_status(v1::RUN_RUNNING);
    run->set_started_at_ms(kT0);
    for (int i = c * 100; i < (c + 1) * 100; ++i) {
      *run->add_stages() =
          MakeStage(StrCat("s", i), i == 0 ? v1::STAGE_RUNNING : v1::STAGE_WAITING);
    }
  }
  chunks[0].set_snapshot(true);
  chunks[1].set_snapshot_complete(true);
  return chunks;
}

TEST_F(WatchTest, PlainModeSummarisesABigRunWithCountsAndFailures) {
  WatchRenderer r(out_, clock_, /*terminal=*/false);
  for (const auto& chunk : BigSnapshot()) r.OnUpdate(chunk);
  ASSERT_EQ(r.run().stages_size(), 200);
  clock_.AdvanceMs(2'000);
  v1::Stage failed = MakeStage("s0", v1::STAGE_FAILED);
  failed.set_reason("exit 3");
  r.OnUpdate(Delta(v1::RUN_RUNNING, {failed, MakeStage("s1", v1::STAGE_RUNNING)}));
  EXPECT_THAT(Lines(),
              ElementsAre("22:13:20  run 12  big  running  0/200 ok, 1 running, 199 waiting",
                          "22:13:22  s0  failed  exit 3",
                          // the delta's run fields (Delta() names the workflow "hello")
                          "22:13:22  run 12  hello  running  0/200 ok, 1 running, "
                          "1 failed, 198 waiting"));
}

TEST_F(WatchTest, TerminalFrameOfABigRunListsCountsAndBoundedStages) {
  RunTracker tracker;
  for (const auto& chunk : BigSnapshot()) tracker.Apply(chunk);
  std::vector<std::string> lines =
      WatchRenderer::SummaryFrame(tracker.run(), {"s5", "s0"}, kT0 + 1'000, 200);
  EXPECT_THAT(lines[0], HasSubstr("0/200 ok, 1 running, 199 waiting"));
  EXPECT_EQ(lines[1], "stages: running 1  waiting 199");
  EXPECT_LT(lines.size(), 20u);
  std::string all = StrJoin(lines, "\n");
  EXPECT_THAT(all, HasSubstr("running:"));
  EXPECT_THAT(all, HasSubstr("recently changed:"));
  EXPECT_THAT(all, Not(HasSubstr("s199")));
}

TEST_F(WatchTest, CachedAndRetryingStagesSayWhy) {
  v1::Stage cached = MakeStage("datagen", v1::STAGE_CACHED);
  cached.set_cached_from_run_id(7);
  EXPECT_EQ(WatchRenderer::PlainStageLine(cached, kT0), "datagen  cached  cached from run 7");
  v1::Stage waiting = MakeStage("bench", v1::STAGE_WAITING);
  waiting.set_attempt_count(1);
  waiting.set_reason("exit 1");
  waiting.set_next_retry_at_ms(kT0 + 25'000);
  EXPECT_EQ(WatchRenderer::PlainStageLine(waiting, kT0),
            "bench  waiting  attempt 1  retry in 25s: exit 1");
}

TEST_F(WatchTest, MalformedEventLinesAreAWarningWithTheirLineNumber) {
  v1::Stage s;
  s.set_name("gen");
  s.set_status(v1::STAGE_RUNNING);
  s.set_attempt_count(1);
  s.set_malformed_events(2);
  s.set_last_malformed("line 17: not valid JSON");
  EXPECT_EQ(WatchRenderer::PlainStageLine(s, kT0),
            "gen  running  attempt 1  warning: 2 malformed event lines (last: line 17: not "
            "valid JSON)");
}

TEST_F(WatchTest, TerminalFrameHasABarPerStage) {
  v1::RunUpdate u = Snapshot();
  v1::Stage* greet = u.mutable_run()->mutable_stages(0);
  greet->mutable_progress()->set_done(10);
  greet->mutable_progress()->set_total(20);
  greet->mutable_progress()->set_unit("steps");
  greet->mutable_progress()->set_rate(2);
  greet->mutable_progress()->set_eta_seconds(5);
  std::vector<std::string> frame = WatchRenderer::Frame(u.run(), kT0 + 3'000, 200);
  ASSERT_EQ(frame.size(), 4u);
  EXPECT_EQ(frame[0], "run 12  hello  running  3s  0/2 ok, 1 running, 1 waiting");
  EXPECT_THAT(frame[1], HasSubstr("STAGE  STATUS   PROGRESS"));
  EXPECT_THAT(frame[2], HasSubstr("greet  running  [==========>         ]  10/20 steps (50%)  "
                                  "2.0 steps/s  5s"));
  EXPECT_THAT(frame[3], HasSubstr("left   waiting"));
  for (const std::string& l : WatchRenderer::Frame(u.run(), kT0, 40)) {
    EXPECT_LE(l.size(), 42u) << l;  // cut to 40 characters (the ellipsis is 3 bytes)
  }
}

TEST_F(WatchTest, TerminalModeRedrawsInPlace) {
  WatchRenderer r(out_, clock_, /*terminal=*/true, [] { return 100; });
  r.OnUpdate(Snapshot());
  std::string first = out_.str();
  EXPECT_EQ(first.find("\x1b["), first.find("\x1b[K"));  // no cursor-up before the first frame
  out_.str("");
  clock_.AdvanceMs(1'000);
  r.Redraw();
  std::string second = out_.str();
  // Back up over the 4 lines drawn before, clear each line, clear what is left below.
  EXPECT_EQ(second.rfind("\r\x1b[4A", 0), 0u) << second;
  EXPECT_THAT(second, HasSubstr("\x1b[K\n"));
  EXPECT_EQ(second.substr(second.size() - 3), "\x1b[J");
  EXPECT_THAT(second, HasSubstr("1s"));
}

}  // namespace
}  // namespace longhaul::cli
