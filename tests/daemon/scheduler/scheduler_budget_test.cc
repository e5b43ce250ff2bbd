// GPU-hour budgets on the scheduler (docs/scheduling.md, "Budgets" and "Budgets for a team or a
// workflow"), driven by a fake clock: a run's own budget (its notices across a restart, `hard`)
// and budgets of a team's or a workflow name's runs (the pause of every run they cover, the
// period, the state across a restart).
#include <gmock/gmock.h>

#include <nlohmann/json.hpp>

#include "daemon/notify/notifier.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kHourMs = 3'600'000;

class NoDeliveryForBudgets : public notify::Deliverer {
 public:
  Status Deliver(const notify::Sink&, const std::string&, const std::string&) override {
    ADD_FAILURE() << "the scheduler's test delivers nothing";
    return OkStatus();
  }
};

class SchedulerBudgetTest : public SchedulerTest {
 protected:
  SchedulerBudgetTest()
      : notifier_(&deliverer_, &clock_, notify::RetryPolicy{}, [](const auto&) {}) {
    // Budgets take hours of GPU time: the fake clock jumps by hours, and agents that send no
    // heartbeat meanwhile are not lost for it.
    options_.agent_timeout_ms = 1000 * kHourMs;
    options_.lost_after_ms = 2000 * kHourMs;
    NewScheduler([this](Scheduler& s) { Notify(s); });
  }

  // The notifications go to a webhook for the budget events.
  void Notify(Scheduler& s) {
    workflow::NotifySpec spec;
    spec.webhooks = {"http://ops.example:9000/longhaul"};
    spec.on = {"budget_warning", "budget_reached"};
    s.set_notifications(&notifier_, spec);
  }
  // A restart whose recovery may notify: it would be seen.
  void Restart() {
    NewScheduler([this](Scheduler& s) { Notify(s); });
  }

  // The stored notifications of `kind`, oldest first, as "run_id: reason".
  std::vector<std::string> Notices(const std::string& kind) {
    auto rows = store_->ListNotifications(0, 0, 1000);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<std::string> out;
    for (auto it = rows->rbegin(); it != rows->rend(); ++it) {
      if (it->kind != kind) continue;
      auto body = nlohmann::json::parse(it->payload);
      out.push_back(StrCat(it->run_id.value_or(0), ": ", body["reason"].get<std::string>()));
    }
    return out;
  }

  // The stage's retries spent, as stored.
  int RetriesUsed(int64_t run, const std::string& stage) {
    auto rows = store_->ReadStages(run);
    EXPECT_TRUE(rows.ok()) << rows.status();
    for (const auto& row : *rows) {
      if (row.name == stage) return row.retries_used;
    }
    ADD_FAILURE() << "no stage " << stage;
    return -1;
  }

  int64_t SubmitTeam(const std::string& yaml, const std::string& team) {
    return SubmitWith(yaml, [&](SubmitInput* in) {
      in->team = team;
      in->no_cache = true;  // the runs are alike: each runs its own stages
    });
  }

  v1::ScopeBudget SetScope(const std::string& scope, const std::string& name, double hours,
                           bool hard = false, int64_t period_ms = 0) {
    v1::SetBudgetRequest req;
    req.set_scope(scope);
    req.set_name(name);
    req.set_gpu_hours(hours);
    req.set_hard(hard);
    req.set_period_ms(period_ms);
    req.set_by("ada");
    v1::ScopeBudget out;
    Batch([&] {
      auto b = scheduler_->SetScopeBudget(req);
      ASSERT_TRUE(b.ok()) << b.status();
      out = *b;
    });
    return out;
  }

  NoDeliveryForBudgets deliverer_;
  notify::Notifier notifier_;  // never started: what it was handed stays pending
};

// Two stages of one GPU each, one after the other.
constexpr char kTwoGpuStages[] = R"(
name: NAME
stages:
  a: {run: [prog], resources: {gpus: 1}}
  b: {needs: [a], run: [prog], resources: {gpus: 1}}
)";

std::string TwoGpuStages(const std::string& name) {
  std::string yaml = kTwoGpuStages;
  return yaml.replace(yaml.find("NAME"), 4, name);
}

TEST_F(SchedulerBudgetTest, ARunsWarningIsSentOnceAndNotAgainAfterARestart) {
  uint64_t n1 = Connect("n1", 4, 1);
  int64_t run = SubmitWith(TwoGpuStages("w"), [](SubmitInput* in) { in->budget = {1.0, false}; });
  int64_t a = TakeStartedIds().at("a");
  Started(n1, a);
  clock_.AdvanceMs(kHourMs * 8 / 10);  // 0.8 GPU-h: the 80 % timer is due
  Batch();
  ASSERT_EQ(Notices("budget_warning").size(), 1u);
  EXPECT_THAT(Notices("budget_warning")[0], StartsWith(StrCat(run, ": 80 % of the budget of 1")));

  Restart();
  clock_.AdvanceMs(5'000);  // the attempt still counts as running while its agent is away
  Batch();
  EXPECT_EQ(Notices("budget_warning").size(), 1u) << "the threshold notified is stored";
  EXPECT_TRUE(Notices("budget_reached").empty());
}

TEST_F(SchedulerBudgetTest, AHardBudgetStopsTheRunningAttemptTheStageWaitsAndARaiseResumesIt) {
  uint64_t n1 = Connect("n1", 4, 1);
  int64_t run =
      SubmitWith("name: h\nstages:\n  a: {run: [prog], resources: {gpus: 1}, retry: {limit: 0}}\n",
                 [](SubmitInput* in) {
                   in->budget = {0.5, true};
                 });
  int64_t first = TakeStartedIds().at("a");
  Started(n1, first);
  clock_.AdvanceMs(kHourMs / 2);
  Batch();
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u) << "hard: the running attempt is stopped at 100 %";
  EXPECT_EQ(cancels[0].attempt_id(), first);
  Exit(n1, first, 0, 15);

  v1::Stage a = GetStage(run, "a");
  EXPECT_EQ(a.status(), v1::STAGE_READY) << "it waits for the budget; retry.limit 0 is not spent";
  EXPECT_EQ(a.reason(), StrCat("run ", run, "'s budget of 0.5 GPU-h reached (0.5 used)"));
  ASSERT_EQ(a.attempts_size(), 1);
  EXPECT_EQ(a.attempts(0).reason(),
            StrCat("budget: run ", run, "'s budget of 0.5 GPU-h reached (0.5 used)"))
      << "the stopped attempt says 'budget' once, and whose";
  EXPECT_EQ(RetriesUsed(run, "a"), 0);
  EXPECT_TRUE(GetRun(run).budget().reached());
  // The runs list reads the store, not the scheduler (SetRunBudgetUse): `longhaul runs` reads
  // this to say the run is paused.
  auto listed_reached = [&] {
    Result<v1::ListRunsResponse> listed = store_->ListRuns(v1::ListRunsRequest());
    EXPECT_TRUE(listed.ok()) << listed.status();
    return listed.ok() && listed->runs_size() == 1 && listed->runs(0).budget().reached();
  };
  EXPECT_TRUE(listed_reached());
  EXPECT_TRUE(TakeStarts().empty());
  clock_.AdvanceMs(kHourMs);
  Batch();
  EXPECT_TRUE(TakeStarts().empty()) << "still paused an hour later";

  Batch([&] { ASSERT_TRUE(scheduler_->SetRunBudget(run, 2, "ada").ok()); });
  int64_t second = TakeStartedIds().at("a");
  EXPECT_NE(second, first);
  EXPECT_FALSE(listed_reached()) << "raised: no longer paused";
  Started(n1, second);
  Exit(n1, second, 0);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(RetriesUsed(run, "a"), 0);
}

TEST_F(SchedulerBudgetTest, ATeamBudgetPausesThatTeamsRunsAndNotAnotherTeams) {
  uint64_t n1 = Connect("n1", 8, 3);
  v1::ScopeBudget set = SetScope("team", "vision", 1.0);
  EXPECT_EQ(set.period_ms(), 30 * 24 * kHourMs) << "30 days unless --period says otherwise";
  EXPECT_EQ(set.period_start_ms(), clock_.NowMs());
  int64_t v1_run = SubmitTeam(TwoGpuStages("v"), "vision");
  int64_t v2_run = SubmitTeam(TwoGpuStages("v"), "vision");
  int64_t other = SubmitTeam(TwoGpuStages("o"), "infra");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 3u);
  for (const auto& s : starts) Started(n1, s.attempt_id());

  clock_.AdvanceMs(kHourMs * 4 / 10);  // vision: 2 GPUs for 0.4 h = 0.8 GPU-h
  Batch();
  EXPECT_THAT(Notices("budget_warning"),
              ::testing::ElementsAre("0: team vision used 80 % of its budget of 1 GPU-h for 30d "
                                     "(0.8 used)"));
  clock_.AdvanceMs(kHourMs / 10);  // 1.0 GPU-h
  Batch();
  EXPECT_THAT(Notices("budget_reached"),
              ::testing::ElementsAre("0: team vision's budget of 1 GPU-h for 30d reached (1 used); "
                                     "its runs start no new attempts"));
  EXPECT_TRUE(TakeCancels().empty()) << "not hard: running attempts go on";
  for (const auto& s : starts) Exit(n1, s.attempt_id(), 0);

  auto next = TakeStarts();
  ASSERT_EQ(next.size(), 1u) << "only the other team's run goes on";
  EXPECT_EQ(next[0].run_id(), other);
  Exit(n1, next[0].attempt_id(), 0);
  EXPECT_EQ(GetRun(other).status(), v1::RUN_SUCCEEDED);
  for (int64_t id : {v1_run, v2_run}) {
    v1::Stage b = GetStage(id, "b");
    EXPECT_EQ(b.status(), v1::STAGE_READY);
    EXPECT_EQ(b.reason(), "team vision's budget of 1 GPU-h for 30d reached (1 used)");
    v1::Run r = GetRun(id);
    EXPECT_EQ(r.budget_hold(), b.reason());
    EXPECT_FALSE(r.has_budget()) << "the run has no budget of its own";
  }
  EXPECT_EQ(GetRun(other).budget_hold(), "");
  std::vector<v1::ScopeBudget> listed;
  Batch([&] { listed = scheduler_->ListScopeBudgets(); });
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_TRUE(listed[0].reached());
  EXPECT_DOUBLE_EQ(listed[0].used_gpu_hours(), 1.0);
  EXPECT_THAT(listed[0].paused_runs(), ::testing::ElementsAre(v1_run, v2_run));

  // A run of the team submitted now waits at once.
  int64_t late = SubmitTeam(TwoGpuStages("v"), "vision");
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(late, "a").reason(),
            "team vision's budget of 1 GPU-h for 30d reached (1 used)");

  // Raised: every paused run of the team continues; the thresholds count anew.
  set = SetScope("team", "vision", 10);
  EXPECT_FALSE(set.reached());
  EXPECT_EQ(TakeStarts().size(), 3u);
  EXPECT_EQ(GetRun(v1_run).budget_hold(), "");
  EXPECT_EQ(Notices("budget_reached").size(), 1u);
}

TEST_F(SchedulerBudgetTest, ATeamBudgetKeepsItsStateAcrossARestartAndStartsOverNextPeriod) {
  uint64_t n1 = Connect("n1", 4, 1);
  SetScope("team", "vision", 0.5, false, 2 * kHourMs);
  int64_t run = SubmitTeam(TwoGpuStages("v"), "vision");
  int64_t a = TakeStartedIds().at("a");
  Started(n1, a);
  clock_.AdvanceMs(kHourMs * 4 / 10);  // 80 %
  Batch();
  clock_.AdvanceMs(kHourMs / 10);  // 100 %
  Batch();
  Exit(n1, a, 0);
  EXPECT_EQ(GetStage(run, "b").reason(),
            "team vision's budget of 0.5 GPU-h for 2h reached (0.5 used)");
  ASSERT_EQ(Notices("budget_reached").size(), 1u);
  ASSERT_EQ(Notices("budget_warning").size(), 1u);

  Restart();
  n1 = Connect("n1", 4, 1);
  clock_.AdvanceMs(60'000);
  Batch();
  EXPECT_TRUE(TakeStarts().empty()) << "still paused after the restart";
  EXPECT_EQ(GetRun(run).budget_hold(),
            "team vision's budget of 0.5 GPU-h for 2h reached (0.5 used)");
  EXPECT_EQ(Notices("budget_reached").size(), 1u) << "no notice twice";
  EXPECT_EQ(Notices("budget_warning").size(), 1u);

  // The next period starts 2 h after the budget was set: the use starts over.
  clock_.AdvanceMs(2 * kHourMs - kHourMs / 2 - 60'000);
  Batch();
  int64_t b = TakeStartedIds().at("b");
  Started(n1, b);
  EXPECT_EQ(GetRun(run).budget_hold(), "");
  clock_.AdvanceMs(kHourMs * 4 / 10);
  Batch();
  EXPECT_EQ(Notices("budget_warning").size(), 2u) << "a new period notifies again";
  Exit(n1, b, 0);
  EXPECT_EQ(GetRun(run).status(), v1::RUN_SUCCEEDED);
}

TEST_F(SchedulerBudgetTest, AHardWorkflowBudgetStopsTheRunningAttemptsOfItsRuns) {
  uint64_t n1 = Connect("n1", 8, 2);
  SetScope("workflow", "sweep", 0.2, /*hard=*/true);
  int64_t run = Submit(TwoGpuStages("sweep"));
  int64_t other = Submit(TwoGpuStages("eval"));
  std::map<int64_t, int64_t> attempt_of;  // run -> its running attempt
  for (const auto& s : TakeStarts()) attempt_of[s.run_id()] = s.attempt_id();
  ASSERT_EQ(attempt_of.size(), 2u);
  for (const auto& [id, attempt] : attempt_of) Started(n1, attempt);
  clock_.AdvanceMs(kHourMs / 5);
  Batch();
  auto cancels = TakeCancels();
  ASSERT_EQ(cancels.size(), 1u) << "only the workflow's run is stopped";
  EXPECT_EQ(cancels[0].attempt_id(), attempt_of[run]);
  Exit(n1, attempt_of[run], 0, 15);
  v1::Stage a = GetStage(run, "a");
  EXPECT_EQ(a.status(), v1::STAGE_READY);
  EXPECT_EQ(RetriesUsed(run, "a"), 0);
  EXPECT_EQ(a.reason(), "workflow sweep's budget of 0.2 GPU-h for 30d reached (0.2 used)");
  Exit(n1, attempt_of[other], 0);
  auto next = TakeStarts();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].run_id(), other);
}

}  // namespace
}  // namespace longhaul::scheduler
