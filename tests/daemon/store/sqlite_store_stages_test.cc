// GetRun with a stage limit and ListStages: a run's stages a bounded page at a time.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/memory.h"
#include "core/strings.h"
#include "daemon/store/sqlite_store.h"
#include "proto/stage_merge.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class StagePagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStore::Open(dir_.Join("longhaul.db"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  // A run of `n` stages s0..s{n-1}; every third failed, ended at its index (ms).
  int64_t MakeRun(int n) {
    EXPECT_TRUE(store_->Begin().ok());
    auto wf = store_->PutWorkflow("wf", "name: wf", "hash", 1000);
    RunRow run;
    run.workflow_id = *wf;
    run.workflow_name = "wf";
    run.status = v1::RUN_RUNNING;
    run.created_at_ms = 1000;
    EXPECT_TRUE(store_->InsertRun(&run).ok());
    for (int i = 0; i < n; ++i) {
      StageRow s;
      s.run_id = run.id;
      s.name = StrCat("s", i);
      s.position = i;
      s.status = i % 3 == 0 ? v1::STAGE_FAILED : v1::STAGE_READY;
      if (i % 3 == 0) s.ended_at_ms = 10'000 + i;
      EXPECT_TRUE(store_->InsertStage(&s).ok());
    }
    EXPECT_TRUE(store_->Commit().ok());
    return run.id;
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(StagePagesTest, GetRunGivesCountsAndOnePageAndPagesReachEveryStageOnce) {
  const int n = 2 * kMaxStagesPerMessage + 5;
  int64_t id = MakeRun(n);
  v1::GetRunRequest req;
  req.set_id(id);
  Result<v1::Run> run = store_->GetRun(req);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stages_size(), kMaxStagesPerMessage);
  EXPECT_EQ(run->stage_counts().at("failed") + run->stage_counts().at("ready"), n);
  ASSERT_FALSE(run->next_stage_page_token().empty());
  std::vector<std::string> names;
  for (const auto& s : run->stages()) names.push_back(s.name());
  v1::ListStagesRequest page;
  page.set_run_id(id);
  page.set_page_token(run->next_stage_page_token());
  while (!page.page_token().empty()) {
    Result<v1::ListStagesResponse> got = store_->ListStages(page);
    ASSERT_TRUE(got.ok()) << got.status();
    for (const auto& s : got->stages()) names.push_back(s.name());
    page.set_page_token(got->next_page_token());
  }
  ASSERT_EQ(static_cast<int>(names.size()), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(names[i], StrCat("s", i));
}

TEST_F(StagePagesTest, ABigRunsHeaderComesFromItsKeptTotals) {
  const int n = 20'000;
  int64_t id = MakeRun(n);
  int failed = (n + 2) / 3;
  RunTotals totals;  // as the scheduler keeps them
  totals.stage_counts = {{"failed", failed}, {"ready", n - failed}};
  totals.gpu_ms_ended = 7'200'000;  // two GPU hours
  ASSERT_TRUE(store_->Begin().ok());
  ASSERT_TRUE(store_->UpdateRunTotals(id, totals).ok());
  ASSERT_TRUE(store_->Commit().ok());
  v1::GetRunRequest req;
  req.set_id(id);
  for (int i = 0; i < 2; ++i) {  // the pooled connection answers the same again
    Result<v1::Run> run = store_->GetRun(req);
    ASSERT_TRUE(run.ok()) << run.status();
    EXPECT_EQ(run->stage_counts().at("failed"), failed);
    EXPECT_EQ(run->stage_counts().at("ready"), n - failed);
    EXPECT_DOUBLE_EQ(run->gpu_hours(), 2.0);
    EXPECT_EQ(run->stages_size(), kMaxStagesPerMessage);
  }
  v1::ListRunsRequest list;
  list.set_id(id);
  Result<v1::ListRunsResponse> listed = store_->ListRuns(list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->runs_size(), 1);
  EXPECT_EQ(listed->runs(0).stage_counts().at("failed"), failed);
  EXPECT_DOUBLE_EQ(listed->runs(0).gpu_hours(), 2.0);
}

TEST_F(StagePagesTest, AReadThatScannedABigRunLeavesItsConnectionsCacheEmpty) {
  const int n = 20'000;  // some MB of table and index pages
  int64_t big = MakeRun(n);
  int64_t small = MakeRun(3);
  v1::ListStagesRequest recent;  // as `longhaul show` asks: scans the run's stages
  recent.set_run_id(big);
  recent.set_recent_first(true);
  recent.set_page_size(20);
  Result<v1::ListStagesResponse> got = store_->ListStages(recent);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->stages_size(), 20);
  EXPECT_LE(store_->IdleReaderCacheBytes(), size_t{512} << 10);
  // A small read keeps its hot pages for the next one.
  v1::GetRunRequest req;
  req.set_id(small);
  ASSERT_TRUE(store_->GetRun(req).ok());
  EXPECT_GT(store_->IdleReaderCacheBytes(), 0u);
}

TEST_F(StagePagesTest, ASmallRunComesWholeWithNoToken) {
  int64_t id = MakeRun(3);
  v1::GetRunRequest req;
  req.set_id(id);
  Result<v1::Run> run = store_->GetRun(req);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->stages_size(), 3);
  EXPECT_TRUE(run->next_stage_page_token().empty());
  req.set_stage_limit(-1);
  run = store_->GetRun(req);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->stages_size(), 0);
  EXPECT_EQ(run->stage_counts().at("failed"), 1);
  EXPECT_EQ(run->next_stage_page_token(), "0");
}

TEST_F(StagePagesTest, FiltersByStatusAndNameAndOrdersRecentFirst) {
  int64_t id = MakeRun(30);
  v1::ListStagesRequest req;
  req.set_run_id(id);
  req.add_statuses(v1::STAGE_FAILED);
  req.set_page_size(4);
  Result<v1::ListStagesResponse> failed = store_->ListStages(req);
  ASSERT_TRUE(failed.ok()) << failed.status();
  ASSERT_EQ(failed->stages_size(), 4);
  EXPECT_EQ(failed->stages(1).name(), "s3");
  EXPECT_EQ(failed->next_page_token(), "12");
  req.set_recent_first(true);
  Result<v1::ListStagesResponse> recent = store_->ListStages(req);
  ASSERT_TRUE(recent.ok());
  ASSERT_EQ(recent->stages_size(), 4);
  EXPECT_EQ(recent->stages(0).name(), "s27");
  EXPECT_TRUE(recent->next_page_token().empty());
  v1::ListStagesRequest one;
  one.set_run_id(id);
  one.add_names("s29");
  Result<v1::ListStagesResponse> found = store_->ListStages(one);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->stages_size(), 1);
  EXPECT_EQ(found->stages(0).name(), "s29");
}

TEST_F(StagePagesTest, ABadTokenOrUnknownRunIsAClearError) {
  int64_t id = MakeRun(2);
  v1::ListStagesRequest req;
  req.set_run_id(id);
  req.set_page_token("x1");
  Result<v1::ListStagesResponse> bad = store_->ListStages(req);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("stage page token 'x1'"), std::string::npos);
  req.set_page_token("");
  req.set_run_id(id + 1);
  EXPECT_EQ(store_->ListStages(req).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace longhaul::store
