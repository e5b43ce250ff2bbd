// Big workflows on a real cluster: `foreach` items run as stages of their own, and a
// submission answers with a summary (not every stage) and makes one run per submission id.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class BigFilesTest : public ClusterTest {};

TEST_F(BigFilesTest, ForeachItemsRunAsStagesAndAMatrixNeedsItsOwnItem) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile("sweep.yaml", R"(name: sweep
stages:
  make:
    foreach: {size: [small, big]}
    run: [lh-testjob, --output, "made=${item.size}"]
    resources: {cpus: 0.1}
  use:
    foreach: {size: [small, big], k: ["1", "2"]}
    needs: [make]
    run: [lh-testjob, --output, "got=${make-${item.size}.outputs.made}-${item.k}"]
    resources: {cpus: 0.1}
  report:
    needs: [use]
    run: [lh-testjob, --print, done]
    resources: {cpus: 0.1}
)");
  CommandResult submit = cluster().Cli({"submit", file});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  ASSERT_EQ(run->stages_size(), 7);
  EXPECT_EQ(FindStage(*run, "make-big")->outputs().at("made"), "big");
  EXPECT_EQ(FindStage(*run, "use-small-2")->outputs().at("got"), "small-2");
  EXPECT_EQ(FindStage(*run, "use-big-1")->outputs().at("got"), "big-1");
  ASSERT_EQ(FindStage(*run, "use-big-1")->needs_size(), 1);
  EXPECT_EQ(FindStage(*run, "use-big-1")->needs(0), "make-big");
  EXPECT_EQ(FindStage(*run, "report")->needs_size(), 4);
  // Every item has a cache key of its own.
  EXPECT_NE(FindStage(*run, "use-big-1")->cache_key(), FindStage(*run, "use-big-2")->cache_key());
}

TEST_F(BigFilesTest, ASubmissionIdMakesOneRunAndTheAnswerHoldsNoStages) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string text = "name: wide\nstages:\n";
  for (int i = 0; i < 2000; ++i) {
    text += StrCat("  s", i, ": {run: [lh-testjob], resources: {cpus: 0.01}}\n");
  }
  v1::SubmitRunRequest req;
  req.set_workflow_text(text);
  req.set_submission_id("0123456789abcdef0123456789abcdef");
  req.mutable_plan_page()->set_limit(10);
  v1::SubmitRunResponse first, again;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(cluster().stub().SubmitRun(&ctx, req, &first).ok());
  }
  EXPECT_GT(first.run().id(), 0);
  EXPECT_EQ(first.run().stages_size(), 0);
  int counted = 0;
  for (const auto& [status, n] : first.run().stage_counts()) counted += n;
  EXPECT_EQ(counted, 2000);
  EXPECT_EQ(first.plan_size(), 10);
  EXPECT_EQ(first.plan_summary().stages(), 2000);
  EXPECT_EQ(first.plan_summary().actions().at("run"), 2000);
  EXPECT_FALSE(first.resubmitted());
  // The same call again, as a client whose answer was lost sends it: the same run.
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(cluster().stub().SubmitRun(&ctx, req, &again).ok());
  }
  EXPECT_EQ(again.run().id(), first.run().id());
  EXPECT_TRUE(again.resubmitted());
  EXPECT_EQ(cluster().ListRuns()->runs_size(), 1);
  // Another id is another submission.
  req.set_submission_id("another");
  v1::SubmitRunResponse other;
  grpc::ClientContext ctx;
  ASSERT_TRUE(cluster().stub().SubmitRun(&ctx, req, &other).ok());
  EXPECT_NE(other.run().id(), first.run().id());
  EXPECT_EQ(cluster().ListRuns()->runs_size(), 2);
  for (int64_t id : {first.run().id(), other.run().id()}) {
    v1::CancelRunRequest cancel;
    cancel.set_id(id);
    v1::Run cancelled;
    grpc::ClientContext c;
    cluster().stub().CancelRun(&c, cancel, &cancelled);
  }
}

}  // namespace
}  // namespace longhaul::testing
