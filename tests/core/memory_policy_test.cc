// MemoryPolicy's decisions, against a fake allocator and a fake clock: which boundary returns
// freed memory, when, and how often.
#include "core/memory_policy.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/fake_clock.h"

namespace longhaul {
namespace {

// Records the calls in order: "advise <bytes>", "return", "return soon", and the owner's
// "shrink".
class RecordingMemoryActions : public MemoryActions {
 public:
  void AdviseHugePages(const void*, size_t bytes) override {
    calls.push_back("advise " + std::to_string(bytes));
  }
  void ReturnFreedMemory() override { calls.push_back("return"); }
  void ReturnFreedMemorySoon() override { calls.push_back("return soon"); }
  std::vector<std::string> calls;
};

class MemoryPolicyTest : public ::testing::Test {
 protected:
  void Commit(size_t freed_stages) {
    policy_.AfterCommit(freed_stages, [this] { actions_.calls.push_back("shrink"); });
  }

  testing::FakeClock clock_;
  RecordingMemoryActions actions_;
  MemoryPolicy policy_{&clock_, &actions_};
};

using Calls = std::vector<std::string>;

TEST_F(MemoryPolicyTest, ASmallRunsEndLeavesTheAllocatorAlone) {
  Commit(0);
  Commit(MemoryPolicy::kBigRunStages - 1);
  policy_.OnTick();
  clock_.AdvanceMs(MemoryPolicy::kLateReturnMs);
  policy_.OnTick();
  EXPECT_EQ(actions_.calls, Calls{});
  EXPECT_FALSE(policy_.NextDeadlineMs().has_value());
}

TEST_F(MemoryPolicyTest, ABigRunsEndShrinksThenReturnsNowAtTheNextTickAndASecondLater) {
  int64_t start = clock_.NowMs();
  Commit(MemoryPolicy::kBigRunStages);
  EXPECT_EQ(actions_.calls, (Calls{"shrink", "return"}));
  EXPECT_EQ(policy_.NextDeadlineMs(), start + MemoryPolicy::kLateReturnMs);

  clock_.AdvanceMs(10);
  policy_.OnTick();  // the next batch: the tick's return
  EXPECT_EQ(actions_.calls, (Calls{"shrink", "return", "return"}));
  policy_.OnTick();  // nothing more due yet
  clock_.AdvanceMs(MemoryPolicy::kLateReturnMs - 20);
  policy_.OnTick();
  EXPECT_EQ(actions_.calls.size(), 3u);
  EXPECT_EQ(policy_.NextDeadlineMs(), start + MemoryPolicy::kLateReturnMs);

  clock_.AdvanceMs(10);  // the deadline
  policy_.OnTick();
  EXPECT_EQ(actions_.calls, (Calls{"shrink", "return", "return", "return"}));
  EXPECT_FALSE(policy_.NextDeadlineMs().has_value());
  clock_.AdvanceMs(60'000);
  policy_.OnTick();
  EXPECT_EQ(actions_.calls.size(), 4u);
}

TEST_F(MemoryPolicyTest, ATickAtTheDeadlineReturnsOnceForBoth) {
  Commit(MemoryPolicy::kBigRunStages * 100);
  clock_.AdvanceMs(MemoryPolicy::kLateReturnMs + 500);  // an idle loop: no batch until then
  policy_.OnTick();
  EXPECT_EQ(actions_.calls, (Calls{"shrink", "return", "return"}));
  EXPECT_FALSE(policy_.NextDeadlineMs().has_value());
}

TEST_F(MemoryPolicyTest, BigRunsEndingInABurstShareTheLateReturn) {
  int64_t start = clock_.NowMs();
  Commit(MemoryPolicy::kBigRunStages);
  clock_.AdvanceMs(400);
  Commit(MemoryPolicy::kBigRunStages);  // each end trims at once; the late one is shared
  EXPECT_EQ(policy_.NextDeadlineMs(), start + MemoryPolicy::kLateReturnMs);
  clock_.AdvanceMs(MemoryPolicy::kLateReturnMs - 400);
  policy_.OnTick();
  EXPECT_EQ(actions_.calls, (Calls{"shrink", "return", "shrink", "return", "return"}));
  EXPECT_FALSE(policy_.NextDeadlineMs().has_value());
}

TEST_F(MemoryPolicyTest, OnlyABigSubmissionReturnsAtOnce) {
  policy_.AfterSubmit(10);
  policy_.AfterSubmit(MemoryPolicy::kBigRunStages - 1);
  EXPECT_EQ(actions_.calls, Calls{});
  policy_.AfterSubmit(MemoryPolicy::kBigRunStages);
  EXPECT_EQ(actions_.calls, Calls{"return"});
  EXPECT_FALSE(policy_.NextDeadlineMs().has_value());  // the submit asks nothing of the loop
}

TEST_F(MemoryPolicyTest, ABigReadDefersItsReturn) {
  policy_.AfterBigRead();
  EXPECT_EQ(actions_.calls, Calls{"return soon"});
}

TEST_F(MemoryPolicyTest, TheParsersHookGoesToTheInstalledPolicy) {
  std::vector<char> buffer(64);
  InstallMemoryPolicy(&policy_);
  NoteBigBuffer(buffer.data(), 8 << 20);
  UninstallMemoryPolicy(&policy_);
  NoteBigBuffer(buffer.data(), 0);  // the default policy's: nothing to advise, not recorded
  EXPECT_EQ(actions_.calls, Calls{"advise 8388608"});
}

TEST_F(MemoryPolicyTest, UninstallingAnotherPolicyKeepsTheInstalledOne) {
  RecordingMemoryActions other_actions;
  MemoryPolicy other(&clock_, &other_actions);
  std::vector<char> buffer(64);
  InstallMemoryPolicy(&policy_);
  UninstallMemoryPolicy(&other);
  NoteBigBuffer(buffer.data(), 4 << 20);
  UninstallMemoryPolicy(&policy_);
  EXPECT_EQ(actions_.calls, Calls{"advise 4194304"});
  EXPECT_EQ(other_actions.calls, Calls{});
}

}  // namespace
}  // namespace longhaul
