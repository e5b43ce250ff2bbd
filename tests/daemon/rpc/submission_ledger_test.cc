// SubmissionLedger: one run per submission id, however often or however concurrently the id
// is sent; failed calls are forgotten.
#include "daemon/rpc/submission_ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace longhaul::rpc {
namespace {

v1::SubmitRunResponse Made(int64_t run_id) {
  v1::SubmitRunResponse resp;
  resp.mutable_run()->set_id(run_id);
  resp.mutable_plan_summary()->set_stages(3);
  resp.add_plan()->set_stage("a");
  return resp;
}

TEST(SubmissionLedgerTest, ASecondCallWithTheSameIdGetsTheFirstRun) {
  SubmissionLedger ledger;
  int calls = 0;
  auto submit = [&]() -> Result<v1::SubmitRunResponse> { return Made(++calls); };
  Result<v1::SubmitRunResponse> first = ledger.Once("id", submit);
  Result<v1::SubmitRunResponse> again = ledger.Once("id", submit);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(again->run().id(), first->run().id());
  EXPECT_FALSE(first->resubmitted());
  EXPECT_TRUE(again->resubmitted());
  EXPECT_EQ(again->plan_summary().stages(), 3);
  EXPECT_EQ(again->plan_size(), 0);  // the entries are not kept
  EXPECT_EQ(ledger.Once("other", submit)->run().id(), 2);
}

TEST(SubmissionLedgerTest, AFailedCallIsForgotten) {
  SubmissionLedger ledger;
  Result<v1::SubmitRunResponse> failed = ledger.Once(
      "id", []() -> Result<v1::SubmitRunResponse> { return absl::InternalError("disk full"); });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
  Result<v1::SubmitRunResponse> retried =
      ledger.Once("id", []() -> Result<v1::SubmitRunResponse> { return Made(7); });
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->run().id(), 7);
  EXPECT_FALSE(retried->resubmitted());
}

TEST(SubmissionLedgerTest, ACallWhileTheFirstIsAtWorkWaitsForItsRun) {
  SubmissionLedger ledger;
  std::promise<void> entered, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> calls{0};
  auto slow = [&]() -> Result<v1::SubmitRunResponse> {
    ++calls;
    entered.set_value();
    released.wait();
    return Made(5);
  };
  std::future<Result<v1::SubmitRunResponse>> first =
      std::async(std::launch::async, [&] { return ledger.Once("id", slow); });
  entered.get_future().wait();  // the first call is at work now
  std::future<Result<v1::SubmitRunResponse>> second = std::async(std::launch::async, [&] {
    return ledger.Once("id", []() -> Result<v1::SubmitRunResponse> { return Made(99); });
  });
  release.set_value();
  Result<v1::SubmitRunResponse> a = first.get(), b = second.get();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->run().id(), 5);
  EXPECT_EQ(b->run().id(), 5);  // never a second run
  EXPECT_EQ(calls.load(), 1);
}

TEST(SubmissionLedgerTest, OnlyTheNewestIdsAreKept) {
  SubmissionLedger ledger(/*capacity=*/2);
  int calls = 0;
  auto submit = [&]() -> Result<v1::SubmitRunResponse> { return Made(++calls); };
  ASSERT_TRUE(ledger.Once("a", submit).ok());
  ASSERT_TRUE(ledger.Once("b", submit).ok());
  ASSERT_TRUE(ledger.Once("c", submit).ok());
  EXPECT_EQ(ledger.Once("c", submit)->run().id(), 3);  // kept
  EXPECT_EQ(ledger.Once("a", submit)->run().id(), 4);  // forgotten: a new run
}

}  // namespace
}  // namespace longhaul::rpc
