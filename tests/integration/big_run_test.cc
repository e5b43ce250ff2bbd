// A run of 100,000 stages through the real daemons: GetRun, ListStages, WatchRun, CancelRun
// and the CLI's `show` and `watch` answer in bounded messages, and every stage is reachable by
// paging. No agent is connected, so the run stays put (every stage ready) until it is
// cancelled: nothing here depends on how fast stages run.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <set>

#include "core/strings.h"
#include "proto/stage_merge.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

constexpr int kStages = 100'000;
// A page or update of kMaxStagesPerMessage stages, with room for one stage over the byte cap.
constexpr size_t kMaxMessageBytes = kMaxStageBytesPerMessage + (64 << 10);

// "s000042": names that sort as the file lists them.
std::string StageName(int i) {
  char name[16];
  std::snprintf(name, sizeof name, "s%06d", i);
  return name;
}

std::string BigWorkflow() {
  std::string text = "name: big\nstages:\n";
  text.reserve(kStages * 60);
  for (int i = 0; i < kStages; ++i) {
    text += StrCat("  ", StageName(i), ": {run: [/bin/true], resources: {cpus: 0.01}}\n");
  }
  return text;
}

void WithDeadline(grpc::ClientContext& ctx, int64_t seconds) {
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

int Total(const v1::Run& run) {
  int n = 0;
  for (const auto& [state, count] : run.stage_counts()) n += count;
  return n;
}

class BigRunTest : public ClusterTest {
 protected:
  // Submits the 100,000-stage workflow; returns the run id. The submission's own answer is
  // not this test's subject: should it fail after the run was created (its size), the run is
  // found by listing.
  int64_t SubmitBig() {
    v1::SubmitRunRequest req;
    req.set_workflow_text(BigWorkflow());
    req.set_workflow_path("big.yaml");
    v1::SubmitRunResponse resp;
    grpc::ClientContext ctx;
    WithDeadline(ctx, 300);
    grpc::Status s = cluster().stub().SubmitRun(&ctx, req, &resp);
    if (s.ok()) return resp.run().id();
    std::cerr << "SubmitRun: " << s.error_message() << " (looking the run up)\n";
    Result<v1::ListRunsResponse> runs = cluster().ListRuns();
    if (!runs.ok() || runs->runs_size() != 1) return 0;
    return runs->runs(0).id();
  }
};

TEST_F(BigRunTest, HundredThousandStagesAreShownWatchedAndPagedInBoundedMessages) {
  ClusterOptions options;
  options.agents = 0;
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  int64_t id = SubmitBig();
  ASSERT_GT(id, 0);

  // GetRun: the counts of every stage, one page of them, and where the rest continue.
  v1::Run run;
  {
    v1::GetRunRequest req;
    req.set_id(id);
    grpc::ClientContext ctx;
    WithDeadline(ctx, 60);
    grpc::Status s = cluster().stub().GetRun(&ctx, req, &run);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_EQ(Total(run), kStages);
  EXPECT_EQ(run.stages_size(), kMaxStagesPerMessage);
  EXPECT_FALSE(run.next_stage_page_token().empty());
  EXPECT_LE(run.ByteSizeLong(), kMaxMessageBytes);
  std::cerr << "GetRun: " << run.ByteSizeLong() << " bytes, " << run.stages_size()
            << " stages\n";

  // ListStages: page by page, every stage exactly once, in topological (file) order.
  std::vector<std::string> names;
  for (const v1::Stage& s : run.stages()) names.push_back(s.name());
  size_t largest_page = 0;
  size_t all_bytes = run.ByteSizeLong();
  v1::ListStagesRequest page_req;
  page_req.set_run_id(id);
  page_req.set_page_token(run.next_stage_page_token());
  int pages = 1;
  while (!page_req.page_token().empty()) {
    v1::ListStagesResponse page;
    grpc::ClientContext ctx;
    WithDeadline(ctx, 60);
    grpc::Status s = cluster().stub().ListStages(&ctx, page_req, &page);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_GT(page.stages_size(), 0);
    ASSERT_LE(page.stages_size(), kMaxStagesPerMessage);
    largest_page = std::max(largest_page, page.ByteSizeLong());
    all_bytes += page.ByteSizeLong();
    for (const v1::Stage& s : page.stages()) names.push_back(s.name());
    page_req.set_page_token(page.next_page_token());
    ++pages;
  }
  ASSERT_EQ(static_cast<int>(names.size()), kStages);
  for (int i = 0; i < kStages; ++i) ASSERT_EQ(names[i], StageName(i)) << i;
  EXPECT_LE(largest_page, kMaxMessageBytes);
  std::cerr << "ListStages: " << pages << " pages, largest " << largest_page
            << " bytes; every stage in one message would be about " << all_bytes << " bytes\n";

  // A filter and a single stage far down the run.
  {
    v1::ListStagesRequest req;
    req.set_run_id(id);
    req.add_names(StageName(kStages - 1));
    v1::ListStagesResponse found;
    grpc::ClientContext ctx;
    WithDeadline(ctx, 60);
    ASSERT_TRUE(cluster().stub().ListStages(&ctx, req, &found).ok());
    ASSERT_EQ(found.stages_size(), 1);
    EXPECT_EQ(found.stages(0).name(), StageName(kStages - 1));
  }

  // The CLI: `show` summarises, `show --all` pages through every stage, `show RUN STAGE`
  // finds a stage beyond the first page.
  CommandResult show = cluster().Cli({"show", std::to_string(id)}, 120'000);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find(StrCat(kStages, " stages")), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("STATE"), std::string::npos) << show.out;
  EXPECT_LT(show.out.size(), 64u << 10) << "a summary, not every stage";
  CommandResult all = cluster().Cli({"show", std::to_string(id), "--all"}, 300'000);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find(StageName(0) + " "), std::string::npos);
  EXPECT_NE(all.out.find(StageName(kStages - 1) + " "), std::string::npos);
  CommandResult one = cluster().Cli({"show", std::to_string(id), StageName(kStages - 2)}, 60'000);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find(StageName(kStages - 2)), std::string::npos) << one.out;

  // WatchRun: the snapshot in bounded chunks up to snapshot_complete, then (after CancelRun)
  // the changes, also bounded, up to the end of the stream.
  grpc::ClientContext watch_ctx;
  WithDeadline(watch_ctx, 300);
  v1::WatchRunRequest watch_req;
  watch_req.set_id(id);
  std::unique_ptr<grpc::ClientReader<v1::RunUpdate>> reader =
      cluster().stub().WatchRun(&watch_ctx, watch_req);
  MergedRun merged;
  v1::RunUpdate update;
  int snapshot_updates = 0;
  size_t largest_update = 0;
  bool first = true;
  for (;;) {
    ASSERT_TRUE(reader->Read(&update)) << "the stream ended before the snapshot was complete";
    EXPECT_EQ(update.snapshot(), first);
    first = false;
    ASSERT_LE(update.run().stages_size(), kMaxStagesPerMessage);
    largest_update = std::max(largest_update, update.ByteSizeLong());
    merged.Apply(update);
    ++snapshot_updates;
    if (update.snapshot_complete()) break;
  }
  EXPECT_EQ(merged.run().stages_size(), kStages);
  EXPECT_GE(snapshot_updates, kStages / kMaxStagesPerMessage);

  v1::Run cancelled;
  {
    v1::CancelRunRequest req;
    req.set_id(id);
    grpc::ClientContext ctx;
    WithDeadline(ctx, 120);
    grpc::Status s = cluster().stub().CancelRun(&ctx, req, &cancelled);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  EXPECT_LE(cancelled.ByteSizeLong(), kMaxMessageBytes);
  EXPECT_EQ(Total(cancelled), kStages);
  EXPECT_EQ(cancelled.stage_counts().at("cancelled"), kStages);

  int delta_updates = 0;
  while (reader->Read(&update)) {
    ASSERT_FALSE(update.snapshot());
    ASSERT_LE(update.run().stages_size(), kMaxStagesPerMessage);
    largest_update = std::max(largest_update, update.ByteSizeLong());
    merged.Apply(update);
    ++delta_updates;
  }
  grpc::Status end = reader->Finish();
  ASSERT_TRUE(end.ok()) << end.error_message();
  EXPECT_EQ(merged.run().status(), v1::RUN_CANCELLED);
  ASSERT_EQ(merged.run().stages_size(), kStages);
  for (const v1::Stage& s : merged.run().stages()) {
    ASSERT_EQ(s.status(), v1::STAGE_CANCELLED) << s.name();
  }
  EXPECT_LE(largest_update, kMaxMessageBytes);
  std::cerr << "WatchRun: " << snapshot_updates << " snapshot updates, " << delta_updates
            << " after the cancel, largest " << largest_update << " bytes\n";

  // `longhaul watch` of the ended run: a summary and the run's result as the exit code.
  CommandResult watch = cluster().Cli({"watch", std::to_string(id)}, 120'000);
  EXPECT_EQ(watch.exit_code, 5) << watch.out << watch.err;  // cancelled (cli/exit_codes.h)
  EXPECT_NE(watch.out.find("cancelled"), std::string::npos) << watch.out;
  EXPECT_LT(watch.out.size(), 64u << 10) << "a summary, not a line per stage";
}

}  // namespace
}  // namespace longhaul::testing
