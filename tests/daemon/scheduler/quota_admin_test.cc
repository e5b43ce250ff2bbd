// Quotas and budgets changed at run time, on a scheduler with a real store and a fake clock
// (docs/scheduling.md, "Seeing quotas", "Changing quotas at run time", "Budgets in
// longhauld.yaml"): a raised quota starts a waiting stage at the next pass, a lowered one stops
// nothing; the stored quota wins over --quota across a restart, a removal too; the table's
// figures; bad requests name the team; budgets from the configuration are stored only where
// none is, and a removed budget lets its runs continue.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/scheduler/budget_config.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::HasSubstr;

std::string QuotaAdminGpuWorkflow(const std::string& name, int stages) {
  std::string yaml = StrCat("name: ", name, "\ndefaults: {preemptible: false}\nstages:\n");
  for (int i = 0; i < stages; ++i) {
    yaml += StrCat("  s", i, ": {run: [prog], resources: {gpus: 1}}\n");
  }
  return yaml;
}

class QuotaAdminTest : public SchedulerTest {
 protected:
  void Configure(const std::vector<std::string>& quotas) {
    Result<Quotas> q = Quotas::Parse(quotas);
    ASSERT_TRUE(q.ok()) << q.status();
    options_.quotas = *q;
    NewScheduler();
  }
  int64_t SubmitAs(const std::string& user, const std::string& team, const std::string& yaml) {
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->user = user;
      in->team = team;
      in->no_cache = true;
    });
  }
  Result<v1::Quota> Set(const std::string& team, std::optional<int32_t> gpus,
                        std::optional<int32_t> borrow = std::nullopt) {
    v1::SetQuotaRequest req;
    req.set_team(team);
    if (gpus) req.set_gpus(*gpus);
    if (borrow) req.set_borrow(*borrow);
    req.set_by("ada");
    Result<v1::Quota> out = absl::UnknownError("not run");
    Batch([&] { out = scheduler_->SetQuota(req); });
    return out;
  }
  Result<v1::Quota> Remove(const std::string& team) {
    v1::RemoveQuotaRequest req;
    req.set_team(team);
    req.set_by("ada");
    Result<v1::Quota> out = absl::UnknownError("not run");
    Batch([&] { out = scheduler_->RemoveQuota(req); });
    return out;
  }
  std::map<std::string, v1::Quota> Table() {
    v1::ListQuotasResponse resp;
    Batch([&] { resp = scheduler_->ListQuotas(); });
    std::map<std::string, v1::Quota> out;
    for (const v1::Quota& q : resp.quotas()) out[q.account()] = q;
    return out;
  }
};

TEST_F(QuotaAdminTest, ARaisedQuotaStartsTheWaitingStageAtTheNextPassAndWinsOverTheFlag) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1"}));
  int64_t run = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("v", 2));
  Connect("n1", 8, 4);
  ASSERT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(GetStage(run, "s1").reason(), "waiting: team vision at its quota of 1 GPU (1 in use)");
  std::map<std::string, v1::Quota> table = Table();
  EXPECT_EQ(table["team:vision"].set_by(), "--quota");
  EXPECT_EQ(table["team:vision"].stages_waiting(), 1);

  Result<v1::Quota> set = Set("vision", 2);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->rule(), "gpus:2");
  EXPECT_EQ(set->set_by(), "ada");
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u) << "started in the batch that set it, without a restart";
  EXPECT_EQ(starts[0].stage(), "s1");

  // A restart with the same --quota: the stored one wins.
  NewScheduler();
  table = Table();
  EXPECT_EQ(table["team:vision"].gpus(), 2);
  EXPECT_EQ(table["team:vision"].set_by(), "ada");
  EXPECT_EQ(table["team:vision"].set_at_ms(), clock_.NowMs());
}

TEST_F(QuotaAdminTest, ALoweredQuotaStopsNothingRunningButStartsNothingBeyondIt) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:3"}));
  int64_t run = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("v", 2));
  uint64_t n1 = Connect("n1", 8, 4);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  for (const auto& s : starts) Started(n1, s.attempt_id());
  ASSERT_TRUE(Set("vision", 1).ok());
  EXPECT_TRUE(TakeCancels().empty()) << "a lowered quota stops nothing";
  EXPECT_EQ(Table()["team:vision"].in_use(), 2);
  // One ends; a new run's stage waits, for the team holds 1 of its 1 still.
  Exit(n1, starts[0].attempt_id(), 0);
  int64_t next = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("w", 1));
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(next, "s0").reason(), "waiting: team vision at its quota of 1 GPU (1 in use)");
  (void)run;
}

TEST_F(QuotaAdminTest, ARemovedQuotaStaysRemovedAcrossARestartThoughTheFlagNamesIt) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1", "team:nlp=gpus:2"}));
  int64_t run = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("v", 2));
  Connect("n1", 8, 4);
  ASSERT_EQ(TakeStarts().size(), 1u);

  Result<v1::Quota> unknown = Remove("visoin");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(unknown.status().message(), "team visoin has no quota (did you mean 'vision'?)");

  Result<v1::Quota> was = Remove("vision");
  ASSERT_TRUE(was.ok()) << was.status();
  EXPECT_EQ(was->rule(), "gpus:1");
  EXPECT_EQ(was->set_by(), "--quota");
  ASSERT_EQ(TakeStarts().size(), 1u) << "no quota: its stage starts";
  EXPECT_EQ(GetStage(run, "s1").status(), v1::STAGE_RUNNING);

  NewScheduler();
  std::map<std::string, v1::Quota> table = Table();
  EXPECT_FALSE(table["team:vision"].has_quota()) << "--quota's rule stays removed";
  EXPECT_TRUE(table["team:nlp"].has_quota());
  EXPECT_EQ(Remove("vision").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(QuotaAdminTest, BadRequestsNameTheTeamAndWhatIsWrong) {
  ASSERT_NO_FATAL_FAILURE(Configure({}));
  EXPECT_EQ(Set("vision", -1).status().message(),
            "quota of team vision: --gpus -1: expected 0 or more GPUs");
  EXPECT_EQ(Set("vision", 4, 2).status().message(),
            "quota of team vision: borrow:2 is less than gpus:4 (borrow is the most GPUs in all, "
            "the guaranteed ones included)");
  EXPECT_EQ(Set("vision", std::nullopt).status().message(),
            "quota of team vision: give --gpus, --borrow or --gpu-hours with --period");
  EXPECT_EQ(Set("vi sion", 1).status().message(),
            "--team 'vi sion': expected a name of letters, digits and -_.@");
  v1::SetQuotaRequest hours;
  hours.set_team("vision");
  hours.set_gpu_hours(10);
  Result<v1::Quota> no_period = absl::UnknownError("not run");
  Batch([&] { no_period = scheduler_->SetQuota(hours); });
  EXPECT_THAT(no_period.status().message(), HasSubstr("--gpu-hours and --period go together"));
  EXPECT_TRUE(Table().empty()) << "nothing was stored";
}

TEST_F(QuotaAdminTest, TheTableShowsBorrowedAndLentGpusAndWhoWaits) {
  ASSERT_NO_FATAL_FAILURE(Configure({"team:vision=gpus:1,borrow:3", "team:nlp=gpus:2"}));
  int64_t run = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("v", 3));
  uint64_t n1 = Connect("n1", 8, 3);
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 3u) << "nothing of nlp waits: vision borrows two";
  for (const auto& s : starts) Started(n1, s.attempt_id());
  std::map<std::string, v1::Quota> table = Table();
  const v1::Quota& vision = table["team:vision"];
  EXPECT_EQ(vision.in_use(), 3);
  EXPECT_EQ(vision.borrowed(), 2);
  EXPECT_EQ(vision.lent(), 0);
  EXPECT_EQ(vision.borrow(), 3);
  const v1::Quota& nlp = table["team:nlp"];
  EXPECT_EQ(nlp.in_use(), 0);
  EXPECT_EQ(nlp.lent(), 2) << "its unused guarantee is what vision borrows";
  EXPECT_EQ(table["user:olga"].in_use(), 3);
  EXPECT_FALSE(table["user:olga"].has_quota());
  (void)run;
}

TEST_F(QuotaAdminTest, AConfigBudgetIsStoredOnlyWhereNoneIsAndFollowsTheConfiguration) {
  Result<std::vector<ConfigBudget>> config =
      ParseConfigBudgets({"team:vision=500/7d:hard", "workflow:eagle=20"});
  ASSERT_TRUE(config.ok()) << config.status();
  options_.budgets = *config;
  NewScheduler();
  std::vector<v1::ScopeBudget> listed;
  Batch([&] { listed = scheduler_->ListScopeBudgets(); });
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].name(), "vision");
  EXPECT_DOUBLE_EQ(listed[0].gpu_hours(), 500);
  EXPECT_TRUE(listed[0].hard());
  EXPECT_EQ(listed[0].period_ms(), 7 * 24 * 3'600'000LL);
  EXPECT_EQ(listed[0].set_by(), "--budget");
  EXPECT_EQ(listed[1].period_ms(), 30 * 24 * 3'600'000LL) << "30d unless the rule says";

  // An admin sets vision's: it wins over the configuration's at the next start.
  v1::SetBudgetRequest req;
  req.set_scope("team");
  req.set_name("vision");
  req.set_gpu_hours(600);
  req.set_by("ada");
  Batch([&] { ASSERT_TRUE(scheduler_->SetScopeBudget(req).ok()); });
  // The configuration changes: eagle's rule goes, vision's says 700.
  options_.budgets = *ParseConfigBudgets({"team:vision=700"});
  NewScheduler();
  Batch([&] { listed = scheduler_->ListScopeBudgets(); });
  ASSERT_EQ(listed.size(), 1u) << "eagle's came from the configuration: gone with it";
  EXPECT_DOUBLE_EQ(listed[0].gpu_hours(), 600);
  EXPECT_EQ(listed[0].set_by(), "ada");
}

TEST_F(QuotaAdminTest, BadConfigBudgetsNameTheRule) {
  EXPECT_EQ(ParseConfigBudgets({"team:vision"}).status().message(),
            "--budget 'team:vision': expected team:NAME=HOURS[/PERIOD][:hard] or "
            "workflow:NAME=...");
  EXPECT_EQ(ParseConfigBudgets({"team:vision=0"}).status().message(),
            "--budget 'team:vision=0': '0': expected GPU-hours > 0");
  EXPECT_EQ(ParseConfigBudgets({"team:vision=5/10m"}).status().message(),
            "--budget 'team:vision=5/10m': '10m': the period must be 1h or more");
  EXPECT_EQ(ParseConfigBudgets({"group:x=5"}).status().message(),
            "--budget 'group:x=5': budget scope: expected team or workflow, got 'group'");
  EXPECT_EQ(ParseConfigBudgets({"team:a=5", "team:a=6"}).status().message(),
            "--budget 'team:a=6': a second budget for team a");
}

TEST_F(QuotaAdminTest, ARemovedBudgetLetsTheRunsItPausedContinue) {
  uint64_t n1 = Connect("n1", 8, 1);
  v1::SetBudgetRequest req;
  req.set_scope("team");
  req.set_name("vision");
  req.set_gpu_hours(0.5);
  req.set_by("ada");
  Batch([&] { ASSERT_TRUE(scheduler_->SetScopeBudget(req).ok()); });
  int64_t run = SubmitAs("olga", "vision", QuotaAdminGpuWorkflow("v", 2));
  std::vector<v1::StartAttempt> starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Started(n1, starts[0].attempt_id());
  clock_.AdvanceMs(3'600'000);
  Exit(n1, starts[0].attempt_id(), 0);
  ASSERT_TRUE(TakeStarts().empty());
  ASSERT_EQ(GetRun(run).budget_hold(),
            "team vision's budget of 0.5 GPU-h for 30d reached (1 used)");

  v1::RemoveBudgetRequest rm;
  rm.set_scope("team");
  rm.set_name("visoin");
  Result<v1::ScopeBudget> missing = absl::UnknownError("not run");
  Batch([&] { missing = scheduler_->RemoveScopeBudget(rm); });
  EXPECT_EQ(missing.status().message(), "team visoin has no budget (did you mean 'vision'?)");
  rm.set_name("vision");
  Result<v1::ScopeBudget> was = absl::UnknownError("not run");
  Batch([&] { was = scheduler_->RemoveScopeBudget(rm); });
  ASSERT_TRUE(was.ok()) << was.status();
  EXPECT_DOUBLE_EQ(was->gpu_hours(), 0.5);
  EXPECT_THAT(was->paused_runs(), ::testing::ElementsAre(run));
  EXPECT_EQ(TakeStarts().size(), 1u) << "its run continues";
  EXPECT_EQ(GetRun(run).budget_hold(), "");
  NewScheduler();
  std::vector<v1::ScopeBudget> listed;
  Batch([&] { listed = scheduler_->ListScopeBudgets(); });
  EXPECT_TRUE(listed.empty());
}

}  // namespace
}  // namespace longhaul::scheduler
