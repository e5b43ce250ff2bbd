#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/fs.h"
#include "daemon/notify/notifier.h"
#include "daemon/notify/outbox.h"
#include "daemon/notify/sink.h"
#include "tests/daemon/notify/webhook_receiver.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace longhaul::notify {
namespace {

using store::NotificationRow;

// Fails the first `failures` deliveries, then takes every one; records what it was given.
class FakeDeliverer : public Deliverer {
 public:
  explicit FakeDeliverer(int failures) : failures_(failures) {}
  Status Deliver(const Sink& sink, const std::string& kind, const std::string& body) override {
    calls.push_back({SinkLabel(sink), kind, body});
    if (failures_ > 0) {
      --failures_;
      return absl::UnavailableError("HTTP 500: try later");
    }
    return OkStatus();
  }
  struct Call {
    std::string sink, kind, body;
  };
  std::vector<Call> calls;

 private:
  int failures_;
};

Event StageFailedEvent(int64_t now) {
  Event e;
  e.kind = "stage_failed";
  e.run_id = 12;
  e.workflow = "eagle3";
  e.stage = "datagen";
  e.attempt = 1;
  e.agent = "gpu-01";
  e.reason = "exit 3";
  e.time_ms = now;
  return e;
}

workflow::NotifySpec Webhook(const std::string& url) {
  workflow::NotifySpec spec;
  spec.webhooks = {url};
  return spec;
}

TEST(RetryPolicyTest, BackoffDoublesUpToItsCap) {
  RetryPolicy p;  // 5s doubling, capped at 5m, 8 tries
  EXPECT_EQ(BackoffMs(p, 1), 5'000);
  EXPECT_EQ(BackoffMs(p, 2), 10'000);
  EXPECT_EQ(BackoffMs(p, 6), 160'000);
  EXPECT_EQ(BackoffMs(p, 7), 300'000);
  EXPECT_EQ(BackoffMs(p, 40), 300'000);
  int64_t total = 0;
  for (int t = 1; t < p.max_tries; ++t) total += BackoffMs(p, t);
  EXPECT_EQ(total, 615'000);  // the eighth try comes about 10 minutes after the first
}

TEST(RetryPolicyTest, SettleCountsTriesAndGivesUpAfterTheLast) {
  RetryPolicy p{3, 1'000, 60'000};
  NotificationRow row;
  Settle(&row, absl::UnavailableError("HTTP 500"), 100, p);
  EXPECT_EQ(row.state, "pending");
  EXPECT_EQ(row.tries, 1);
  EXPECT_EQ(row.next_try_at_ms, 1'100);
  EXPECT_EQ(row.last_error, "HTTP 500");
  Settle(&row, absl::UnavailableError("refused"), 1'100, p);
  EXPECT_EQ(row.next_try_at_ms, 3'100);
  Settle(&row, absl::UnavailableError("refused"), 3'100, p);
  EXPECT_EQ(row.state, "failed");
  EXPECT_EQ(row.tries, 3);
  EXPECT_FALSE(row.next_try_at_ms.has_value());

  NotificationRow ok;
  Settle(&ok, OkStatus(), 42, p);
  EXPECT_EQ(ok.state, "delivered");
  EXPECT_EQ(ok.delivered_at_ms, 42);
}

TEST(NotifierTest, RetriesWithBackoffOnTheClockUntilDelivered) {
  testing::FakeClock clock;
  FakeDeliverer deliverer(2);
  std::vector<NotificationRow> recorded;
  Notifier notifier(&deliverer, &clock, RetryPolicy{8, 5'000, 300'000},
                    [&](const NotificationRow& r) { recorded.push_back(r); });
  auto rows =
      PlanNotifications(StageFailedEvent(clock.NowMs()), Webhook("http://h:1/x"), nullptr, "");
  ASSERT_EQ(rows.size(), 1u);
  rows[0].id = 7;
  notifier.Enqueue(rows);

  EXPECT_EQ(notifier.DeliverDue(), 1);  // due at once: fails (HTTP 500)
  ASSERT_EQ(recorded.size(), 1u);
  EXPECT_EQ(recorded[0].state, "pending");
  EXPECT_EQ(recorded[0].tries, 1);
  EXPECT_EQ(notifier.NextDueMs(), clock.NowMs() + 5'000);

  clock.AdvanceMs(4'999);
  EXPECT_EQ(notifier.DeliverDue(), 0) << "tried again before its backoff ended";
  clock.AdvanceMs(1);
  EXPECT_EQ(notifier.DeliverDue(), 1);  // fails again: next in 10 s
  EXPECT_EQ(notifier.NextDueMs(), clock.NowMs() + 10'000);
  clock.AdvanceMs(10'000);
  EXPECT_EQ(notifier.DeliverDue(), 1);  // taken
  ASSERT_EQ(recorded.size(), 3u);
  EXPECT_EQ(recorded[2].id, 7);
  EXPECT_EQ(recorded[2].state, "delivered");
  EXPECT_EQ(recorded[2].tries, 3);
  EXPECT_EQ(recorded[2].delivered_at_ms, clock.NowMs());
  EXPECT_EQ(notifier.pending(), 0u);
  ASSERT_EQ(deliverer.calls.size(), 3u);
  EXPECT_EQ(deliverer.calls[2].body, deliverer.calls[0].body) << "a retry sends the same body";
}

TEST(NotifierTest, GivesUpAfterMaxTries) {
  testing::FakeClock clock;
  FakeDeliverer deliverer(100);
  std::vector<NotificationRow> recorded;
  Notifier notifier(&deliverer, &clock, RetryPolicy{2, 1'000, 1'000},
                    [&](const NotificationRow& r) { recorded.push_back(r); });
  notifier.Enqueue(
      PlanNotifications(StageFailedEvent(clock.NowMs()), Webhook("http://h:1/x"), nullptr, ""));
  notifier.DeliverDue();
  clock.AdvanceMs(1'000);
  notifier.DeliverDue();
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[1].state, "failed");
  EXPECT_EQ(recorded[1].last_error, "HTTP 500: try later");
  EXPECT_FALSE(notifier.NextDueMs().has_value());
}

TEST(PlanTest, EachSinkThatWantsTheKindGetsOneRow) {
  workflow::NotifySpec daemon = Webhook("http://ops:9/all");
  workflow::NotifySpec wf;
  wf.on = {"run_failed"};
  wf.webhooks = {"http://ops:9/all", "http://team:9/hook"};
  wf.command = {"page", "--team", "ml"};
  Event e = StageFailedEvent(1'700'000'000'000);
  auto rows = PlanNotifications(e, daemon, &wf, "http://ui:8080/");
  ASSERT_EQ(rows.size(), 1u) << "the workflow's sinks want only run_failed";
  e.kind = "run_failed";  // a run event: no stage, attempt or agent
  e.stage = "";
  e.attempt = 0;
  e.agent = "";
  rows = PlanNotifications(e, daemon, &wf, "http://ui:8080/");
  // The daemon's webhook, the workflow's other one and its command: a sink named twice gets
  // the event once.
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(ParseSink(rows[1].sink)->url, "http://team:9/hook");
  auto body = nlohmann::json::parse(rows[0].payload);
  EXPECT_EQ(body["kind"], "run_failed");
  EXPECT_EQ(body["run_id"], 12);
  EXPECT_EQ(body["workflow"], "eagle3");
  EXPECT_EQ(body["stage"], "");
  EXPECT_EQ(body["agent"], "");
  EXPECT_EQ(body["reason"], "exit 3");
  EXPECT_EQ(body["time"], "2023-11-14T22:13:20.000Z");
  EXPECT_EQ(body["url"], "http://ui:8080/#/runs/12");
  Result<Sink> command = ParseSink(rows[2].sink);
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->argv, (std::vector<std::string>{"page", "--team", "ml"}));
  EXPECT_EQ(rows[2].run_id, 12);
  EXPECT_EQ(rows[2].state, "pending");
  EXPECT_EQ(nlohmann::json::parse(rows[2].payload), body) << "a command gets the event's JSON";
}

TEST(PlanTest, TheSlackFormSendsOneLineOfText) {
  workflow::NotifySpec slack = Webhook("http://chat:9/hook");
  slack.format = "slack";
  auto rows =
      PlanNotifications(StageFailedEvent(1'700'000'000'000), slack, nullptr, "http://ui:8080");
  ASSERT_EQ(rows.size(), 1u);
  auto body = nlohmann::json::parse(rows[0].payload);
  ASSERT_EQ(body.size(), 1u) << body;
  EXPECT_EQ(body["text"],
            "longhaul: stage datagen of run 12 (eagle3) failed on gpu-01: exit 3 "
            "<http://ui:8080/#/runs/12/stages/datagen|stage datagen>");
}

TEST(EventTest, TheLinkIsTheUiPageOfWhatTheEventIsAbout) {
  Event stage = StageFailedEvent(0);
  EXPECT_EQ(EventUrl(stage, "http://ui:8080/"), "http://ui:8080/#/runs/12/stages/datagen");
  EXPECT_EQ(EventUrl(stage, ""), "") << "no link without the UI's address";
  Event run = stage;
  run.kind = "run_failed";
  run.stage = "";
  EXPECT_EQ(EventUrl(run, "http://ui:8080"), "http://ui:8080/#/runs/12");
  Event agent;
  agent.kind = "agent_lost";
  agent.agent = "gpu-01";
  EXPECT_EQ(EventUrl(agent, "http://ui:8080"), "http://ui:8080/#/agents");
  Event test;
  test.kind = "test";
  EXPECT_EQ(EventUrl(test, "https://coord.example/lh/"), "https://coord.example/lh/");
}

TEST(SinkTest, ABadStoredSinkIsAnErrorThatQuotesIt) {
  Result<Sink> s = ParseSink("{\"carrier_pigeon\": 1}");
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("carrier_pigeon"), std::string::npos);
}

TEST(DelivererTest, AWebhookGetsTheBodyAndItsStatusDecides) {
  testing::WebhookReceiver receiver(1);
  HttpCommandDeliverer deliverer(10'000);
  Sink sink{receiver.url(), "json", {}};
  Status first = deliverer.Deliver(sink, "run_failed", "{\"kind\":\"run_failed\"}");
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(first.message().find("HTTP 500: try later"), std::string::npos) << first;
  EXPECT_TRUE(deliverer.Deliver(sink, "run_failed", "{\"kind\":\"run_failed\"}").ok());
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].target, "/hook");
  EXPECT_EQ(got[1].body, "{\"kind\":\"run_failed\"}");
}

TEST(DelivererTest, AWebhookThatDoesNotListenIsUnavailable) {
  int port;
  {
    testing::WebhookReceiver gone;
    port = gone.port();
  }
  HttpCommandDeliverer deliverer(10'000);
  Status st = deliverer.Deliver(Sink{"http://127.0.0.1:" + std::to_string(port) + "/x"}, "k", "{}");
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
}

TEST(DelivererTest, ACommandGetsTheEventOnStdinAndItsKindInTheEnvironment) {
  testing::TempDir dir;
  std::string out = dir.path() + "/got";
  HttpCommandDeliverer deliverer(10'000);
  Sink sink{
      "", "json", {"/bin/sh", "-c", "cat > \"$0\"; echo \" $LONGHAUL_EVENT\" >> \"$0\"", out}};
  ASSERT_TRUE(deliverer.Deliver(sink, "agent_lost", "{\"kind\":\"agent_lost\"}").ok());
  Result<std::string> text = ReadFile(out);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "{\"kind\":\"agent_lost\"} agent_lost\n");

  Status failed =
      deliverer.Deliver(Sink{"", "json", {"/bin/sh", "-c", "echo nope >&2; exit 3"}}, "k", "{}");
  EXPECT_EQ(failed.message(), "exit 3: nope");
}

TEST(DelivererTest, ABadWebhookUrlIsNamed) {
  HttpCommandDeliverer deliverer(10'000);
  Status st = deliverer.Deliver(Sink{"https://h:99999/x", "json", {}}, "k", "{}");
  EXPECT_EQ(st.message(),
            "webhook 'https://h:99999/x': port '99999' is not a number from 1 to 65535");
}

TEST(DelivererTest, APlaintextServerAtAnHttpsUrlFailsTheHandshake) {
  testing::WebhookReceiver plaintext;
  std::string url = "https://127.0.0.1:" + std::to_string(plaintext.port()) + "/hook";
  HttpCommandDeliverer deliverer(10'000);
  Status st = deliverer.Deliver(Sink{url, "json", {}}, "test", "{}");
  EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  EXPECT_NE(st.message().find("TLS handshake with 127.0.0.1:"), std::string::npos) << st;
}

}  // namespace
}  // namespace longhaul::notify
