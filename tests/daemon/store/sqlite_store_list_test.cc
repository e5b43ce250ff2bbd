// ListRuns over a page of several runs: the stage counts and GPU hours it reads for the whole
// page at once belong each to its own run, and filters by workflow and status combine.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/store/sqlite_store.h"
#include "tests/testing/test_util.h"

namespace longhaul::store {
namespace {

class ListRunsPageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = SqliteStore::Open(dir_.Join("longhaul.db"));
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
  }

  // A run of `workflow` in `status` with `stages` stages: stage i asks for i GPUs and has one
  // attempt that ran for one hour; stages after the first `succeeded` ones are failed.
  int64_t AddRun(const std::string& workflow, v1::RunStatus status, int stages, int succeeded) {
    EXPECT_TRUE(store_->Begin().ok());
    auto wf = store_->PutWorkflow(workflow, "name: " + workflow, "hash-" + workflow, 1);
    EXPECT_TRUE(wf.ok());
    RunRow run;
    run.workflow_id = *wf;
    run.workflow_name = workflow;
    run.status = status;
    run.created_at_ms = 1;
    EXPECT_TRUE(store_->InsertRun(&run).ok());
    for (int i = 0; i < stages; ++i) {
      StageRow s;
      s.run_id = run.id;
      s.name = StrCat("s", i);
      s.position = i;
      s.status = i < succeeded ? v1::STAGE_SUCCEEDED : v1::STAGE_FAILED;
      s.resources.set_gpus(i);
      EXPECT_TRUE(store_->InsertStage(&s).ok());
      AttemptRow at;
      at.stage_id = s.id;
      at.run_id = run.id;
      at.number = 1;
      at.agent_id = "n0";
      at.state = v1::ATTEMPT_EXITED;
      at.started_at_ms = 1'000;
      at.ended_at_ms = 1'000 + 3'600'000;
      EXPECT_TRUE(store_->InsertAttempt(&at).ok());
    }
    EXPECT_TRUE(store_->Commit().ok());
    return run.id;
  }

  testing::TempDir dir_;
  std::unique_ptr<SqliteStore> store_;
};

TEST_F(ListRunsPageTest, EachRunOfAPageHasItsOwnCountsAndCosts) {
  int64_t one = AddRun("a", v1::RUN_SUCCEEDED, 1, 1);   // 0 GPU hours
  int64_t three = AddRun("b", v1::RUN_FAILED, 3, 2);    // 0 + 1 + 2 GPU hours
  int64_t none = AddRun("a", v1::RUN_SUCCEEDED, 0, 0);  // no stages at all
  int64_t four = AddRun("b", v1::RUN_SUCCEEDED, 4, 4);  // 0 + 1 + 2 + 3
  auto page = store_->ListRuns({});
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->runs_size(), 4);
  std::map<int64_t, v1::Run> by_id;
  for (const v1::Run& r : page->runs()) by_id[r.id()] = r;
  EXPECT_EQ(by_id[one].stage_counts().at("succeeded"), 1);
  EXPECT_EQ(by_id[one].stage_counts().size(), 1u);
  EXPECT_DOUBLE_EQ(by_id[one].gpu_hours(), 0.0);
  EXPECT_EQ(by_id[three].stage_counts().at("succeeded"), 2);
  EXPECT_EQ(by_id[three].stage_counts().at("failed"), 1);
  EXPECT_DOUBLE_EQ(by_id[three].gpu_hours(), 3.0);
  EXPECT_TRUE(by_id[none].stage_counts().empty());
  EXPECT_DOUBLE_EQ(by_id[none].gpu_hours(), 0.0);
  EXPECT_EQ(by_id[four].stage_counts().at("succeeded"), 4);
  EXPECT_DOUBLE_EQ(by_id[four].gpu_hours(), 6.0);
}

TEST_F(ListRunsPageTest, WorkflowAndStatusFiltersCombineAndPage) {
  std::vector<int64_t> want;
  for (int i = 0; i < 12; ++i) {
    v1::RunStatus status = i % 3 == 0 ? v1::RUN_FAILED : v1::RUN_SUCCEEDED;
    int64_t id = AddRun(i % 2 ? "odd" : "even", status, 1, 1);
    if (i % 2 == 0 && status == v1::RUN_FAILED) want.insert(want.begin(), id);  // newest first
  }
  ASSERT_EQ(want.size(), 2u);  // i = 0 and 6
  v1::ListRunsRequest req;
  req.set_workflow("even");
  req.set_status("failed");
  req.set_limit(1);
  std::vector<int64_t> got;
  for (int page = 0; page < 5; ++page) {
    auto resp = store_->ListRuns(req);
    ASSERT_TRUE(resp.ok()) << resp.status();
    for (const v1::Run& r : resp->runs()) {
      EXPECT_EQ(r.workflow_name(), "even");
      EXPECT_EQ(r.status(), v1::RUN_FAILED);
      got.push_back(r.id());
    }
    if (resp->next_page_token().empty()) break;
    req.set_page_token(resp->next_page_token());
  }
  EXPECT_EQ(got, want);
}

TEST_F(ListRunsPageTest, TheWorkflowFilterFindsAPartOfTheNameInAnyCase) {
  int64_t campaign = AddRun("eagle3-campaign", v1::RUN_SUCCEEDED, 0, 0);
  int64_t smoke = AddRun("Eagle3-smoke", v1::RUN_SUCCEEDED, 0, 0);
  AddRun("hello", v1::RUN_SUCCEEDED, 0, 0);
  auto ids = [&](const std::string& workflow) {
    v1::ListRunsRequest req;
    req.set_workflow(workflow);
    std::vector<int64_t> out;
    auto resp = store_->ListRuns(req);
    EXPECT_TRUE(resp.ok()) << resp.status();
    if (resp.ok()) {
      for (const v1::Run& r : resp->runs()) out.push_back(r.id());
    }
    return out;
  };
  EXPECT_EQ(ids("eagle3"), (std::vector<int64_t>{smoke, campaign}));
  EXPECT_EQ(ids("CAMPAIGN"), (std::vector<int64_t>{campaign}));
  EXPECT_EQ(ids("eagle3-campaign"), (std::vector<int64_t>{campaign}));
  EXPECT_TRUE(ids("%").empty());  // no wildcard: a literal part of the name
  EXPECT_TRUE(ids("medusa").empty());
}

TEST_F(ListRunsPageTest, FindAttemptSaysWhetherTheRunTheStageOrTheAttemptIsMissing) {
  int64_t run = AddRun("a", v1::RUN_SUCCEEDED, 1, 1);
  EXPECT_EQ(store_->FindAttempt(run + 1, "s0", 0).status().message(), StrCat("no run ", run + 1));
  EXPECT_EQ(store_->FindAttempt(run, "x", 0).status().message(),
            StrCat("run ", run, " has no stage 'x'"));
  EXPECT_EQ(store_->FindAttempt(run, "s0", 2).status().message(),
            StrCat("run ", run, " stage 's0' has no attempt 2"));
  EXPECT_TRUE(absl::IsNotFound(store_->FindAttempt(run + 1, "s0", 0).status()));
  EXPECT_TRUE(store_->FindAttempt(run, "s0", 0).ok());
}

}  // namespace
}  // namespace longhaul::store
