// Retention with real daemons: `longhaul gc` removes what old runs left on the agent (attempt
// directories, output dirs) and their event rows, keeps their summaries and whatever the cache
// still reuses, so that a pivot of a collected run still reuses its upstream; a dry run says
// the same and changes nothing.
#include "agent/lib/retention.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

// `make` is the expensive upstream (cached); `use` depends on the tag.
constexpr char kWorkflow[] =
    "name: keep-me\n"
    "params: {tag: a}\n"
    "stages:\n"
    "  make:\n"
    "    run: [lh-testjob, --events, '300', --work, '200', --artifact, 'data=data.bin',\n"
    "          --output, 'made=yes']\n"
    "  use:\n"
    "    needs: [make]\n"
    "    run: [lh-testjob, --events, '100', --print, 'tag ${params.tag}']\n";

class RetentionTest : public ClusterTest {
 protected:
  int64_t Count(const std::string& sql) {
    Result<std::string> out = cluster().Query(sql);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? std::stoll(out->empty() ? "0" : *out) : -1;
  }

  std::string AttemptDir(int64_t attempt_id) {
    return StrCat(cluster().AgentStateDir(0), "/attempts/", attempt_id);
  }

  static bool Exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }
};

TEST_F(RetentionTest, GcRemovesOldRunsFilesAndEventsButKeepsWhatTheCacheReuses) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile("keep.yaml", kWorkflow);
  // Run 1, then run 2 of the same stages with --no-cache: run 2's results are the ones the
  // cache reuses from now on, so run 1 may go entirely.
  int64_t first = CliRunToEnd({"submit", file});
  int64_t second = CliRunToEnd({"submit", file, "--no-cache"});
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);
  Result<v1::Run> old_run = cluster().GetRun(first);
  ASSERT_TRUE(old_run.ok());
  std::vector<std::string> old_dirs;
  for (const auto& s : old_run->stages()) {
    for (const auto& a : s.attempts()) {
      old_dirs.push_back(AttemptDir(a.id()));
      old_dirs.push_back(a.output_dir());
    }
  }
  for (const auto& d : old_dirs) ASSERT_TRUE(Exists(d)) << d;
  std::string data_dir = cluster().AgentStateDir(0) + "/data";
  int64_t disk_before = agent::DiskUsage(cluster().AgentStateDir(0));
  int64_t events_before = Count("SELECT count(*) FROM events");
  std::string events_of_first = StrCat(
      "SELECT count(*) FROM events WHERE attempt_id IN (SELECT id FROM attempts WHERE run_id = ",
      first, ")");
  int64_t first_events = Count(events_of_first);
  ASSERT_GT(first_events, 400);

  // The dry run names run 1 (beyond the newest 1 of its workflow) and changes nothing.
  CommandResult dry = cluster().Cli({"gc", "--keep", "1", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find("beyond the newest 1 of keep-me"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("would free"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find(StrCat("\n", second, " ")), std::string::npos) << dry.out;
  for (const auto& d : old_dirs) EXPECT_TRUE(Exists(d)) << d;
  EXPECT_EQ(Count("SELECT count(*) FROM events"), events_before);

  CommandResult gc = cluster().Cli({"gc", "--keep", "1"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("freed"), std::string::npos) << gc.out;
  for (const auto& d : old_dirs) EXPECT_FALSE(Exists(d)) << d << " is still there";
  EXPECT_EQ(Count(events_of_first), 0);
  int64_t disk_after = agent::DiskUsage(cluster().AgentStateDir(0));
  EXPECT_LT(disk_after, disk_before);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), events_before - first_events);
  std::cout << "agent state dir: " << disk_before << " -> " << disk_after
            << " bytes; events: " << events_before << " -> " << Count("SELECT count(*) FROM events")
            << "\n";
  // Its summary stays: stages, attempts, outputs, metrics; it is marked collected.
  Result<v1::Run> after = cluster().GetRun(first);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status(), v1::RUN_SUCCEEDED);
  EXPECT_GT(after->collected_at_ms(), 0);
  EXPECT_EQ(FindStage(*after, "make")->outputs().at("made"), "yes");
  // `show` says so: which stages' files went, and their artifacts are marked removed.
  EXPECT_TRUE(FindStage(*after, "make")->result_removed());
  EXPECT_TRUE(FindStage(*after, "use")->result_removed());
  CommandResult shown = cluster().Cli({"show", std::to_string(first)});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("  collected: "), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("  removed:   the results of make, use\n"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("(removed) " + data_dir), std::string::npos) << shown.out;
  // Run 2 was not touched.
  Result<v1::Run> kept = cluster().GetRun(second);
  ASSERT_TRUE(kept.ok());
  for (const auto& s : kept->stages()) {
    for (const auto& a : s.attempts()) EXPECT_TRUE(Exists(a.output_dir())) << a.output_dir();
  }
  // A collected run cannot be retried; its pivot reuses `make` from run 2.
  CommandResult retry = cluster().Cli({"retry", std::to_string(first)});
  EXPECT_NE(retry.exit_code, 0);
  EXPECT_NE(retry.err.find("collected by retention"), std::string::npos) << retry.err;
  int64_t pivot = CliRunToEnd({"pivot", std::to_string(first), "--set", "tag=b"});
  ASSERT_GT(pivot, 0);
  Result<v1::Run> p = cluster().GetRun(pivot);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(FindStage(*p, "make")->status(), v1::STAGE_CACHED) << DescribeRun(*p);
  EXPECT_EQ(FindStage(*p, "make")->cached_from_run_id(), second);
  EXPECT_EQ(FindStage(*p, "use")->status(), v1::STAGE_SUCCEEDED);

  // Now run 2 is beyond the newest 1 (the pivot is newer), but both its results are still
  // what the cache reuses (`make` for every tag, `use` for tag a): its events go, its files stay.
  CommandResult gc2 = cluster().Cli({"gc", "--keep", "1"});
  ASSERT_EQ(gc2.exit_code, 0) << gc2.out << gc2.err;
  EXPECT_NE(gc2.out.find(StrCat("run ", second, " keeps make: ")), std::string::npos) << gc2.out;
  EXPECT_NE(gc2.out.find(StrCat("run ", second, " keeps use: the cache reuses its result")),
            std::string::npos)
      << gc2.out;
  for (const auto& s : kept->stages()) {
    for (const auto& a : s.attempts()) {
      EXPECT_TRUE(Exists(a.output_dir())) << s.name() << " " << a.output_dir();
      EXPECT_TRUE(Exists(AttemptDir(a.id()))) << s.name();
    }
  }
  EXPECT_GT(cluster().GetRun(second)->collected_at_ms(), 0);
  EXPECT_EQ(cluster().IntegrityCheck().value_or(""), "ok");
  // Its `show` says what was kept and why, and no artifact is marked removed.
  CommandResult shown2 = cluster().Cli({"show", std::to_string(second)});
  ASSERT_EQ(shown2.exit_code, 0) << shown2.err;
  EXPECT_NE(shown2.out.find("  kept:      make ("), std::string::npos) << shown2.out;
  EXPECT_NE(shown2.out.find("use (the cache reuses its result)"), std::string::npos) << shown2.out;
  EXPECT_EQ(shown2.out.find("removed:"), std::string::npos) << shown2.out;
  EXPECT_EQ(shown2.out.find("(removed) "), std::string::npos) << shown2.out;
}

TEST_F(RetentionTest, NothingIsCollectedWithoutAPolicyAndARunningRunIsNeverChosen) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  CommandResult none = cluster().Cli({"gc"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("nothing to collect (policy: none"), std::string::npos) << none.out;
  std::string file = cluster().WriteFile(
      "slow.yaml", "name: slow\nstages:\n  wait:\n    run: [lh-testjob, --sleep, '60']\n");
  CommandResult sub = cluster().Cli({"submit", file});
  ASSERT_EQ(sub.exit_code, 0) << sub.err;
  CommandResult named = cluster().Cli({"gc", "--run", sub.out.substr(0, sub.out.find('\n'))});
  EXPECT_NE(named.exit_code, 0);
  EXPECT_NE(named.err.find("has not ended"), std::string::npos) << named.err;
  CommandResult by_age = cluster().Cli({"gc", "--older-than", "0s", "--keep", "0", "--dry-run"});
  EXPECT_EQ(by_age.exit_code, 0) << by_age.err;
  EXPECT_NE(by_age.out.find("nothing to collect"), std::string::npos) << by_age.out;
}

TEST_F(RetentionTest, AWorkflowsRetentionBlockOverridesTheDaemonsPolicy) {
  ClusterOptions options;
  options.coordinator_flags = {"--retention-keep", "5"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  // The daemon keeps 5 runs of each workflow; this one says 1.
  std::string file = cluster().WriteFile(
      "short.yaml", "name: short\nretention: {keep: 1}\nstages:\n  a: {run: [lh-testjob]}\n");
  std::string other =
      cluster().WriteFile("other.yaml", "name: other\nstages:\n  a: {run: [lh-testjob]}\n");
  int64_t first = CliRunToEnd({"submit", file});
  int64_t second = CliRunToEnd({"submit", file, "--no-cache"});
  CliRunToEnd({"submit", other});
  CliRunToEnd({"submit", other, "--no-cache"});
  CommandResult dry = cluster().Cli({"gc", "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.out << dry.err;
  EXPECT_NE(dry.out.find(StrCat(first, "  short")), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("beyond the newest 1 of short (its retention block)"), std::string::npos)
      << dry.out;
  EXPECT_NE(dry.out.find("(1 run(s); policy: runs beyond the newest 5 of their workflow; "
                         "short's own: keep 1)"),
            std::string::npos)
      << dry.out;
  EXPECT_EQ(dry.out.find(StrCat(second, "  short")), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("other "), std::string::npos) << dry.out;
  // `longhaul gc --keep N` by hand wins over the block.
  CommandResult by_hand = cluster().Cli({"gc", "--dry-run", "--keep", "2"});
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.out << by_hand.err;
  EXPECT_NE(by_hand.out.find("nothing to collect (policy: runs beyond the newest 2 of their "
                             "workflow)"),
            std::string::npos)
      << by_hand.out;
}

}  // namespace
}  // namespace longhaul::testing
