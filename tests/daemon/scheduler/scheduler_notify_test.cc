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
  EXPECT_EQ(body["agent"], "n1");
  EXPECT_EQ(body["url"], "http://ui.example:8080/#/runs/" + std::to_string(run) + "/stages/x");
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

// Every kind, each from the path that really makes it, on one agent named "ops": each payload
// names its run, workflow, stage, attempt, agent, reason and the UI page it is about.
TEST_F(SchedulerNotifyTest, EveryKindNamesWhatItIsAboutAndTheAgentItRanOn) {
  workflow::NotifySpec every;  // `on` empty: every kind
  every.webhooks = {"http://ops.example:9000/all"};
  scheduler_->set_notifications(&notifier_, every);
  uint64_t ops = Connect("ops", 8);
  int64_t paged = Submit(R"(
name: paged
stages:
  crash: {run: [prog], retry: {limit: 0}}
  hang: {run: [prog], stall_timeout: 10s, retry: {limit: 0}}
  server: {kind: service, run: [serve], retry: {limit: 0}}
  client: {needs: [server], run: [client], retry: {limit: 0}}
)");
  std::map<std::string, int64_t> attempt;
  for (const auto& start : TakeStarts()) attempt[start.stage()] = start.attempt_id();
  ASSERT_EQ(attempt.size(), 3u) << "crash, hang and the server start at once";
  Exit(ops, attempt["crash"], 3);  // stage_failed
  Started(ops, attempt["hang"]);
  clock_.AdvanceMs(5'000);
  Heartbeat(ops);
  clock_.AdvanceMs(5'000);
  Heartbeat(ops);  // stage_stalled: no progress for 10s
  Exit(ops, attempt["hang"], 0, 15);
  Events(ops, attempt["server"], {R"({"ready": {}})"});
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(starts[0].stage(), "client");
  Exit(ops, attempt["server"], 1);  // service_lost; the client is stopped for it
  Exit(ops, starts[0].attempt_id(), 0, 15);
  ASSERT_EQ(GetRun(paged).status(), v1::RUN_FAILED);

  int64_t fine = Submit("name: fine\nstages:\n  x: {run: [prog, fine]}\n");
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Exit(ops, starts[0].attempt_id(), 0);
  int64_t stopped = Submit("name: stopped\nstages:\n  x: {run: [prog, stopped]}\n");
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  Batch([&] { ASSERT_TRUE(scheduler_->Cancel(stopped).ok()); });
  Exit(ops, starts[0].attempt_id(), 0, 15);
  for (int i = 0; i <= options_.lost_after_ms / 5'000; ++i) {  // ops falls silent
    clock_.AdvanceMs(5'000);
    Batch();
  }

  const std::string ui = "http://ui.example:8080/#/";
  std::map<std::string, int> seen;
  for (const store::NotificationRow& row : Stored(0)) {
    auto body = nlohmann::ordered_json::parse(row.payload);
    std::vector<std::string> keys;
    for (const auto& [key, value] : body.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"kind", "run_id", "workflow", "stage", "attempt",
                                              "agent", "reason", "time", "url"}))
        << row.payload;
    std::string kind = body["kind"];
    EXPECT_EQ(kind, row.kind);
    seen[kind]++;
    EXPECT_NE(body["reason"], "") << row.payload;
    if (kind == "agent_lost") {
      EXPECT_EQ(body["run_id"], 0) << row.payload;
      EXPECT_EQ(body["agent"], "ops") << row.payload;
      EXPECT_EQ(body["url"], ui + "agents") << row.payload;
      continue;
    }
    int64_t run = body["run_id"];
    EXPECT_TRUE(run == paged || run == fine || run == stopped) << row.payload;
    EXPECT_EQ(body["workflow"], run == paged ? "paged" : run == fine ? "fine" : "stopped");
    if (kind.rfind("run_", 0) == 0) {  // about the run: no stage, attempt nor agent
      EXPECT_EQ(body["stage"], "") << row.payload;
      EXPECT_EQ(body["attempt"], 0) << row.payload;
      EXPECT_EQ(body["agent"], "") << row.payload;
      EXPECT_EQ(body["url"], ui + "runs/" + std::to_string(run)) << row.payload;
      continue;
    }
    std::string stage = body["stage"];
    EXPECT_EQ(body["attempt"], 1) << row.payload;
    EXPECT_EQ(body["agent"], "ops") << "a stage that ran names its agent: " << row.payload;
    EXPECT_EQ(body["url"], ui + "runs/" + std::to_string(run) + "/stages/" + stage) << row.payload;
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"agent_lost", 1},
                                              {"run_cancelled", 1},
                                              {"run_failed", 1},
                                              {"run_succeeded", 1},
                                              {"service_lost", 1},
                                              {"stage_failed", 4},
                                              {"stage_stalled", 1}}))
      << "crash, hang, server and client each failed for good";
  auto crash = Stored(paged).front();
  ASSERT_EQ(crash.stage, "crash");
  EXPECT_EQ(nlohmann::json::parse(crash.payload)["reason"], "exit 3");
  EXPECT_EQ(nlohmann::json::parse(Stored(fine).front().payload)["reason"], "1 stage: 1 succeeded");
}

}  // namespace
}  // namespace longhaul::scheduler
