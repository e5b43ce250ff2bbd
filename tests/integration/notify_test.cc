// Notifications through the real daemons: a webhook on loopback that refuses the first tries,
// a command that writes what it got, and a notification pending across a restart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/daemon/notify/webhook_receiver.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

class NotifyTest : public ClusterTest {
 protected:
  // "kind tries state" of each notification to a webhook, oldest first.
  std::string Webhooks() {
    Result<std::string> rows = cluster().Query(
        "SELECT kind || ' ' || tries || ' ' || state FROM notifications "
        "WHERE sink LIKE '{\"webhook\"%' ORDER BY id");
    return rows.ok() ? *rows : ToStd(rows.status().message());
  }
};

std::string Kind(const WebhookReceiver::Request& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("kind") ? j["kind"].get<std::string>() : "?";
}

TEST_F(NotifyTest, AFailedStageAndItsRunAreNotifiedAtLeastOnceWithRetries) {
  WebhookReceiver receiver(2);  // the first two deliveries get HTTP 500
  ClusterOptions options;
  options.coordinator_flags = {"--notify-webhook", receiver.url(), "--notify-on",
                               "stage_failed,run_failed", "--notify-backoff", "100ms",
                               "--notify-max-backoff", "200ms"};
  // The command sink: a script that keeps each event's stdin and $LONGHAUL_EVENT.
  TempDir scripts;
  std::string script = scripts.Join("keep.sh");
  // Written whole, then renamed: the test reads a file only once it is complete.
  WriteTextFile(script, "cat > \"$1/$LONGHAUL_EVENT.tmp\" && mv \"$1/$LONGHAUL_EVENT.tmp\" "
                        "\"$1/$LONGHAUL_EVENT.json\"\n");
  options.coordinator_flags.push_back("--notify-command");
  options.coordinator_flags.push_back(StrCat("/bin/sh ", script, " ", scripts.path()));
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));

  std::string gate = cluster().dir().Join("gate");
  Result<int64_t> run = cluster().Submit(StrCat(R"(
name: notified
stages:
  bad: {run: [lh-testjob, --exit, "3"], retry: {limit: 0}}
  gate: {run: [/bin/sh, -c, "while [ ! -e )", gate, R"( ]; do sleep 0.05; done"]}
)"));
  ASSERT_TRUE(run.ok()) << run.status();

  // stage_failed: refused twice, taken on the third try; the run goes on meanwhile.
  ASSERT_TRUE(WaitFor([&] { return receiver.requests().size() >= 3; }, 30'000))
      << receiver.requests().size() << " requests";
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& r : got) EXPECT_EQ(Kind(r), "stage_failed") << r.body;
  EXPECT_EQ(got[0].answered, 500);
  EXPECT_EQ(got[1].answered, 500);
  EXPECT_EQ(got[2].answered, 200);
  EXPECT_EQ(got[2].body, got[0].body);
  auto event = nlohmann::json::parse(got[2].body);
  EXPECT_EQ(event["run_id"], *run);
  EXPECT_EQ(event["workflow"], "notified");
  EXPECT_EQ(event["stage"], "bad");
  EXPECT_EQ(event["attempt"], 1);
  EXPECT_EQ(event["agent"], "n0") << "the agent it ran on";
  EXPECT_EQ(event["reason"], "exit 3");
  EXPECT_EQ(event["url"].get<std::string>(),
            StrCat("http://", cluster().http_address(), "/#/runs/", *run, "/stages/bad"));
  ASSERT_TRUE(WaitFor([&] { return Webhooks() == "stage_failed 3 delivered"; }, 10'000))
      << Webhooks();

  WriteTextFile(gate, "");
  Result<v1::Run> ended = cluster().WaitForRunEnd(*run);
  ASSERT_TRUE(ended.ok()) << ended.status();
  EXPECT_EQ(ended->status(), v1::RUN_FAILED);
  ASSERT_TRUE(WaitFor([&] { return receiver.requests().size() >= 4; }, 30'000));
  EXPECT_EQ(Kind(receiver.requests()[3]), "run_failed");
  ASSERT_TRUE(WaitFor(
      [&] { return Webhooks() == "stage_failed 3 delivered\nrun_failed 1 delivered"; }, 10'000))
      << Webhooks();

  // The command got each event's JSON on stdin.
  std::string stage_json = scripts.Join("stage_failed.json");
  ASSERT_TRUE(
      WaitFor([&] { return !ReadTextFile(scripts.Join("run_failed.json")).empty(); }, 30'000));
  auto from_command = nlohmann::json::parse(ReadTextFile(stage_json), nullptr, false);
  ASSERT_TRUE(from_command.is_object()) << ReadTextFile(stage_json);
  EXPECT_EQ(from_command["kind"], "stage_failed");
  EXPECT_EQ(from_command["run_id"], *run);
  EXPECT_EQ(from_command, event) << "the command and the webhook get the same event";
}

TEST_F(NotifyTest, APendingNotificationIsSentAgainAfterARestart) {
  WebhookReceiver receiver(1000);  // down until told otherwise
  ClusterOptions options;
  options.coordinator_flags = {"--notify-webhook", receiver.url(), "--notify-on", "run_failed",
                               "--notify-backoff", "1h"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  // A workflow's command would run on longhauld's host: refused without
  // --notify-allow-commands, and nothing is stored.
  Result<int64_t> refused = cluster().Submit(
      "name: pager\nnotify:\n  command: [touch, /tmp/pwned]\n"
      "stages:\n  a: {run: [lh-testjob]}\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--notify-allow-commands"), std::string::npos)
      << refused.status();
  Result<int64_t> run = cluster().Submit(
      "name: lonely\nstages:\n  bad: {run: [lh-testjob, --exit, \"1\"], retry: {limit: 0}}\n");
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(WaitFor([&] { return Webhooks() == "run_failed 1 pending"; }, 30'000))
      << Webhooks();

  cluster().KillCoordinator(SIGTERM);
  receiver.FailNext(0);
  ASSERT_TRUE(cluster().RestartCoordinator().ok());
  // Its next try was an hour away; a restart sends what is pending at once.
  ASSERT_TRUE(WaitFor([&] { return Webhooks() == "run_failed 2 delivered"; }, 30'000))
      << Webhooks();
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].answered, 500);
  EXPECT_EQ(got[1].answered, 200);
  EXPECT_EQ(got[1].body, got[0].body);
}

// https webhooks: a TLS receiver with a certificate from a CA made now (deploy/gen-certs.sh),
// trusted through --notify-ca, gets the event after refusing the first try, with SNI set; one
// whose certificate is from another CA gets nothing, and its try says why.
TEST_F(NotifyTest, HttpsWebhooksVerifyTheCertificateAgainstTheConfiguredCa) {
  TempDir certs;
  for (const char* ca : {"ca", "other"}) {
    CommandResult r = RunCommand({SourceDir() + "/deploy/gen-certs.sh", certs.Join(ca)});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  WebhookReceiver trusted(1, certs.Join("ca/coordinator.crt"), certs.Join("ca/coordinator.key"));
  WebhookReceiver stranger(0, certs.Join("other/coordinator.crt"),
                           certs.Join("other/coordinator.key"));
  ASSERT_EQ(trusted.url().rfind("https://localhost:", 0), 0u) << trusted.url();
  ClusterOptions options;
  options.coordinator_flags = {"--notify-webhook", trusted.url(),  "--notify-webhook",
                               stranger.url(),     "--notify-ca",    certs.Join("ca/ca.crt"),
                               "--notify-on",      "run_failed",     "--notify-backoff",
                               "100ms",            "--notify-max-backoff", "200ms"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  Result<int64_t> run = cluster().Submit(
      "name: tls\nstages:\n  bad: {run: [lh-testjob, --exit, \"1\"], retry: {limit: 0}}\n");
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_TRUE(WaitFor([&] { return trusted.requests().size() >= 2; }, 30'000))
      << trusted.requests().size() << " requests";
  auto got = trusted.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].answered, 500);
  EXPECT_EQ(got[1].answered, 200);
  EXPECT_EQ(got[1].server_name, "localhost");
  EXPECT_EQ(got[1].target, "/hook");
  EXPECT_EQ(Kind(got[1]), "run_failed");
  EXPECT_EQ(nlohmann::json::parse(got[1].body)["run_id"], *run);

  // The stranger's certificate does not chain to --notify-ca: each try fails the handshake.
  std::string sql = StrCat("SELECT state || ' ' || (tries > 0) || ' ' || last_error FROM "
                           "notifications WHERE sink LIKE '%", stranger.port(), "%'");
  ASSERT_TRUE(WaitFor([&] { return cluster().Query(sql).value_or("").rfind("pending 1 ", 0) == 0; },
                      30'000))
      << cluster().Query(sql).value_or("?");
  EXPECT_NE(cluster().Query(sql)->find("certificate verify failed"), std::string::npos)
      << *cluster().Query(sql);
  EXPECT_TRUE(stranger.requests().empty());
  ASSERT_TRUE(WaitFor([&] { return Webhooks().rfind("run_failed 2 delivered", 0) == 0; }, 10'000))
      << Webhooks();
}

}  // namespace
}  // namespace longhaul::testing
