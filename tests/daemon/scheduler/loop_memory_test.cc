// The loop's side of the memory policy (loop.cc, core/memory_policy.h): the stages of the runs
// a commit evicted reach the policy, the scheduler shrinks before the first return, and the
// loop wakes by itself for the late return. The real scheduler, store and loop; the allocator
// is a counter, the clock a fake.
#include <atomic>
#include <string>

#include "core/memory_policy.h"
#include "core/strings.h"
#include "daemon/scheduler/loop.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"
#include "tests/testing/test_util.h"

namespace longhaul::scheduler {
namespace {

// Counts the returns, from the loop's thread (read from the test's).
class CountingMemoryActions : public MemoryActions {
 public:
  void AdviseHugePages(const void*, size_t) override {}
  void ReturnFreedMemory() override { returns.fetch_add(1); }
  void ReturnFreedMemorySoon() override { deferred.fetch_add(1); }
  std::atomic<int> returns{0};
  std::atomic<int> deferred{0};
};

std::string WideWorkflow(int stages) {
  std::string yaml = "name: wide\nstages:\n";
  for (int i = 0; i < stages; ++i) yaml += StrCat("  s", i, ": {run: [prog]}\n");
  return yaml;
}

class LoopMemoryTest : public SchedulerTest {
 protected:
  // Cancels `run` (no agent: every stage ends at once) through the loop.
  void CancelThroughLoop(SchedulerLoop& loop, int64_t run) {
    Result<bool> done = loop.Call<bool>([&]() -> Result<bool> {
      RETURN_IF_ERROR(scheduler_->Cancel(run).status());
      return true;
    });
    ASSERT_TRUE(done.ok()) << done.status();
  }

  CountingMemoryActions actions_;
  MemoryPolicy memory_{&clock_, &actions_};
};

TEST_F(LoopMemoryTest, ABigRunLeavingMemoryReturnsItThreeTimesTheLastByTheLoopsOwnDeadline) {
  int64_t run = Submit(WideWorkflow(static_cast<int>(MemoryPolicy::kBigRunStages)));
  SchedulerLoop loop(scheduler_.get(), store_.get(), &clock_);
  loop.set_memory_policy(&memory_);
  ASSERT_TRUE(loop.Start().ok());
  EXPECT_EQ(actions_.returns.load(), 0) << "nothing left memory at the start";

  CancelThroughLoop(loop, run);
  EXPECT_EQ(actions_.returns.load(), 1) << "the run's end returns at once";
  EXPECT_TRUE(memory_.NextDeadlineMs().has_value());

  // The next batch's tick returns again.
  ASSERT_TRUE(loop.Call<bool>([]() -> Result<bool> { return true; }).ok());
  EXPECT_EQ(actions_.returns.load(), 2);

  // Nothing else happens; the loop wakes for the late return once its time has come.
  clock_.AdvanceMs(MemoryPolicy::kLateReturnMs);
  EXPECT_TRUE(testing::WaitFor([&] { return actions_.returns.load() == 3; }, 10'000))
      << "returns: " << actions_.returns.load();
  loop.Stop();
  EXPECT_EQ(actions_.returns.load(), 3);
  EXPECT_EQ(actions_.deferred.load(), 0) << "the loop's returns are its own, not deferred";
}

TEST_F(LoopMemoryTest, ASmallRunLeavingMemoryReturnsNothing) {
  int64_t run = Submit(WideWorkflow(10));
  SchedulerLoop loop(scheduler_.get(), store_.get(), &clock_);
  loop.set_memory_policy(&memory_);
  ASSERT_TRUE(loop.Start().ok());
  CancelThroughLoop(loop, run);
  ASSERT_TRUE(loop.Call<bool>([]() -> Result<bool> { return true; }).ok());
  loop.Stop();
  EXPECT_EQ(GetRun(run).status(), v1::RUN_CANCELLED);
  EXPECT_EQ(actions_.returns.load(), 0);
  EXPECT_FALSE(memory_.NextDeadlineMs().has_value());
}

}  // namespace
}  // namespace longhaul::scheduler
