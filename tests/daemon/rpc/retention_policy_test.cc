// A workflow's `retention:` block: parsed with file:line errors, and over longhauld's policy
// for that workflow's runs (and under `longhaul gc`'s flags) when retention chooses runs.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/rpc/retention_policy.h"

namespace longhaul::rpc {
namespace {

constexpr int64_t kDay = 24 * 3600 * 1000LL;

Result<workflow::Workflow> Parse(const std::string& retention) {
  return workflow::ParseWorkflow(
      StrCat("name: w\n", retention, "stages:\n  a: {run: [x]}\n"), "wf.yaml");
}

TEST(RetentionPolicyTest, TheBlockIsParsed) {
  Result<workflow::Workflow> wf = Parse("retention: {age: 30d, keep: 20}\n");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->retention.age_ms, 30 * kDay);
  EXPECT_EQ(wf->retention.keep, 20);
  wf = Parse("retention:\n  keep: 0\n");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->retention.keep, 0);  // by count never, for this workflow
  EXPECT_FALSE(wf->retention.age_ms.has_value());
  wf = Parse("");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_TRUE(wf->retention.empty());
}

TEST(RetentionPolicyTest, BadBlocksSayWhereAndWhat) {
  auto error = [](const std::string& retention) {
    Result<workflow::Workflow> wf = Parse(retention);
    EXPECT_FALSE(wf.ok()) << retention;
    return wf.ok() ? std::string() : ToStd(wf.status().message());
  };
  EXPECT_EQ(error("retention: {age: soon}\n"),
            "wf.yaml:2:18: retention.age: expected a duration like 30s, got 'soon'");
  EXPECT_EQ(error("retention:\n  keep: -1\n"),
            "wf.yaml:3:9: retention.keep: expected an integer from 0 to 1000000, got '-1'");
  EXPECT_EQ(error("retention:\n  kep: 3\n"),
            "wf.yaml:3:3: unknown key 'kep' in retention (did you mean 'keep'?)");
  EXPECT_EQ(error("retention: {}\n"),
            "wf.yaml:2:1: retention: expected age (a duration) or keep (a number of runs), or "
            "both");
  EXPECT_EQ(error("retention: 30d\n"), "wf.yaml:2:12: retention: expected a mapping, got '30d'");
}

// Runs of two workflows, newest first within each, as ListEndedRuns gives them.
std::vector<store::SqliteStore::EndedRun> Ended(int64_t now) {
  std::vector<store::SqliteStore::EndedRun> runs;
  for (int i = 0; i < 4; ++i) runs.push_back({10 - i, "eagle", v1::RUN_SUCCEEDED, now - i * kDay});
  for (int i = 0; i < 4; ++i) runs.push_back({20 - i, "other", v1::RUN_FAILED, now - i * kDay});
  return runs;
}

std::vector<int64_t> Ids(const std::vector<RetentionChoice>& chosen) {
  std::vector<int64_t> ids;
  for (const auto& c : chosen) ids.push_back(c.run_id);
  return ids;
}

TEST(RetentionPolicyTest, AWorkflowsBlockOverridesTheDaemonsPolicyForItsRuns) {
  int64_t now = 100 * kDay;
  RetentionRule daemon{0, 3};  // --retention-keep 3
  std::map<std::string, workflow::RetentionSpec> declared;
  EXPECT_EQ(Ids(ChooseRunsToCollect(Ended(now), daemon, {}, declared, now)),
            (std::vector<int64_t>{7, 17}));
  declared["eagle"].keep = 1;
  auto chosen = ChooseRunsToCollect(Ended(now), daemon, {}, declared, now);
  EXPECT_EQ(Ids(chosen), (std::vector<int64_t>{9, 8, 7, 17}));
  EXPECT_EQ(chosen[0].why, "beyond the newest 1 of eagle (its retention block)");
  EXPECT_EQ(chosen[3].why, "beyond the newest 3 of other");
  EXPECT_EQ(RetentionPolicyText(daemon, {}, declared),
            "runs beyond the newest 3 of their workflow; eagle's own: keep 1");
  // keep: 0 turns counting off for that workflow only; its own age applies instead.
  declared["eagle"].keep = 0;
  declared["eagle"].age_ms = 2 * kDay;
  chosen = ChooseRunsToCollect(Ended(now), daemon, {}, declared, now);
  EXPECT_EQ(Ids(chosen), (std::vector<int64_t>{7, 17}));
  EXPECT_EQ(chosen[0].why, "ended 3d00h ago (over 2d00h) (its retention block)");
  // A block applies with no policy of the daemon's at all.
  chosen = ChooseRunsToCollect(Ended(now), {}, {}, {{"other", {std::nullopt, 2}}}, now);
  EXPECT_EQ(Ids(chosen), (std::vector<int64_t>{18, 17}));
}

TEST(RetentionPolicyTest, GcFlagsWinOverTheBlock) {
  int64_t now = 100 * kDay;
  std::map<std::string, workflow::RetentionSpec> declared = {{"eagle", {std::nullopt, 1}}};
  RetentionRule request{0, 2};  // longhaul gc --keep 2
  auto chosen = ChooseRunsToCollect(Ended(now), {}, request, declared, now);
  EXPECT_EQ(Ids(chosen), (std::vector<int64_t>{8, 7, 18, 17}));
  EXPECT_EQ(chosen[0].why, "beyond the newest 2 of eagle");
  EXPECT_EQ(RetentionPolicyText({}, request, declared),
            "runs beyond the newest 2 of their workflow");
  EXPECT_EQ(RuleFor({5 * kDay, 3}, request, {kDay, std::nullopt}).older_than_ms, kDay);
  EXPECT_EQ(RuleFor({5 * kDay, 3}, request, {kDay, std::nullopt}).keep_last, 2);
}

}  // namespace
}  // namespace longhaul::rpc
