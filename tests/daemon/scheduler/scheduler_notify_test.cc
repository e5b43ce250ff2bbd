#include <nlohmann/json.hpp>

#include "daemon/notify/notifier.h"
#include "daemon/notify/sink.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

class NeverDeliverer : public notify::Deliverer {
 public:
  Status Deliver(const notify::Sink&, const std::string&, const std::string&) override {
    ADD_FAILURE() << "the scheduler's test delivers nothing";
    return OkStatus();
  }
};

class SchedulerNotifyTest : public SchedulerTest {
 protected:
  SchedulerNotifyTest()
      : notifier_(&deliverer_, &clock_, notify::RetryPolicy{}, [](const auto&) {}) {
    workflow::NotifySpec spec;
    spec.webhooks = {"http://ops.example:9000/longhaul"};
    spec.on = {"stage_failed", "run_failed", "agent_lost", "stage_stalled"};
    scheduler_->set_notifications(&notifier_, spec);
    scheduler_->set_ui_base("http://ui.example:8080");
  }

  std::vector<store::NotificationRow> Stored(int64_t run_id) {
    auto rows = store_->ListNotifications(run_id, 0, 100);
    EXPECT_TRUE(rows.ok()) << rows.status();
    std::vector<store::NotificationRow> oldest_first(rows->rbegin(), rows->rend());
    return oldest_first;
  }

  NeverDeliverer deliverer_;
  notify::Notifier notifier_;  // never started: what it was handed stays pending
};

TEST_F(SchedulerNotifyTest, AStageThatFailsWithoutRetriesNotifiesStageThenRunFailed) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: doomed
stages:
  x: {run: [prog], retry: {limit: 0}}
  y: {run: [prog]}
)");
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 2u);
  Exit(n1, starts[0].attempt_id(), 3);
  EXPECT_EQ(notifier_.pending(), 1u) << "handed over after the commit that failed the stage";
  Exit(n1, starts[1].attempt_id(), 0);

  auto rows = Stored(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kind, "stage_failed");
  EXPECT_EQ(rows[0].stage, starts[0].stage());
  EXPECT_EQ(rows[0].state, "pending");
  EXPECT_EQ(rows[1].kind, "run_failed");
  auto body = nlohmann::json::parse(rows[0].payload);
  EXPECT_EQ(body["run_id"], run);
  EXPECT_EQ(body["workflow"], "doomed");
  EXPECT_EQ(body["attempt"], 1);
  EXPECT_EQ(body["reason"], "exit 3");
  EXPECT_EQ(body["url"], "http://ui.example:8080/#/runs/" + std::to_string(run));
  auto sink = notify::ParseSink(rows[0].sink);
  ASSERT_TRUE(sink.ok());
  EXPECT_EQ(sink->url, "http://ops.example:9000/longhaul");
  EXPECT_EQ(notifier_.pending(), 2u);
}

TEST_F(SchedulerNotifyTest, ARetriedFailureNotifiesOnlyWhenTheRetriesAreSpent) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: flaky
stages:
  x: {run: [prog], retry: {limit: 1, backoff: 1s}}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 1);
  EXPECT_TRUE(Stored(run).empty()) << "a failure that will be retried is no stage_failed";
  clock_.AdvanceMs(1'000);
  Batch();
  Exit(n1, TakeStarts()[0].attempt_id(), 1);
  auto rows = Stored(run);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kind, "stage_failed");
  EXPECT_EQ(nlohmann::json::parse(rows[0].payload)["attempt"], 2);
}

TEST_F(SchedulerNotifyTest, TheWorkflowsNotifyBlockAddsItsSinksForItsKinds) {
  uint64_t n1 = Connect("n1");
  int64_t run = Submit(R"(
name: fine
notify:
  on: [run_succeeded]
  command: [page-me, --now]
stages:
  x: {run: [prog]}
)");
  Exit(n1, TakeStarts()[0].attempt_id(), 0);
  auto rows = Stored(run);
  ASSERT_EQ(rows.size(), 1u) << "longhauld's own sinks do not want run_succeeded";
  EXPECT_EQ(rows[0].kind, "run_succeeded");
  auto sink = notify::ParseSink(rows[0].sink);
  ASSERT_TRUE(sink.ok());
  EXPECT_EQ(sink->argv, (std::vector<std::string>{"page-me", "--now"}));
}

TEST_F(SchedulerNotifyTest, ALostAgentNotifiesWithoutARun) {
  Connect("n1");
  for (int i = 0; i <= options_.lost_after_ms / 5'000; ++i) {  // n1 is silent
    clock_.AdvanceMs(5'000);
    Batch();
  }
  auto rows = Stored(0);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].kind, "agent_lost");
  EXPECT_FALSE(rows[0].run_id.has_value());
  EXPECT_EQ(nlohmann::json::parse(rows[0].payload)["agent"], "n1");
}

}  // namespace
}  // namespace longhaul::scheduler
