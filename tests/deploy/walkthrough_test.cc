// The operator's walk-through of docs/operations.md as one test, on daemons started the way
// the systemd units start them (their ExecStart lines, deploy/config's example files with a
// temp state dir and port 0): a stage fails and a webhook hears of it (after one refused
// delivery) while /metrics counts it; `longhaul gc` by the configured count frees an old run's
// attempt dirs and a pivot of that run still reuses its upstream from the cache; a backup taken
// while a run is in progress restores into a coordinator that finishes that run.
//
// The stages are tiny (lh-testjob): the eagle3-local campaign takes minutes on a small machine,
// and each step here needs only a stage that succeeds, fails, or waits.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/daemon/notify/webhook_receiver.h"
#include "tests/deploy/units.h"
#include "tests/http/exposition.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

// `make` is the upstream the cache reuses; `use` exits with the param `code`.
constexpr char kWorkflow[] =
    "name: walk\n"
    "params: {tag: a, code: '0'}\n"
    "stages:\n"
    "  make:\n"
    "    run: [lh-testjob, --events, '50', --artifact, 'data=data.bin', --output, 'made=yes']\n"
    "  use:\n"
    "    needs: [make]\n"
    "    run: [lh-testjob, --print, 'tag ${params.tag}', --exit, '${params.code}']\n"
    "    retry: {limit: 0}\n";

class WalkthroughTest : public ClusterTest {};

TEST_F(WalkthroughTest, FailureIsNotifiedAndCountedGcKeepsPivotsAndABackupRestores) {
  WebhookReceiver receiver(1);  // the first delivery gets HTTP 500
  TempDir configs;
  std::string coordinator_config = configs.Join("longhauld.yaml");
  WriteExampleConfig("longhauld.yaml", coordinator_config,
                     {{"state-dir", configs.Join("coordinator")},
                      {"listen", "127.0.0.1:0"},
                      {"http", "127.0.0.1:0"},
                      {"notify-webhook", StrCat("[\"", receiver.url(), "\"]")},
                      {"notify-on", "stage_failed"},
                      {"notify-backoff", "100ms"},
                      {"notify-max-backoff", "200ms"},
                      {"retention-keep", "1"}});
  std::string agent_config = configs.Join("agent.yaml");
  WriteExampleConfig("agent.yaml", agent_config,
                     {{"state-dir", configs.Join("agent")}, {"coordinator", "127.0.0.1:1"}});
  ClusterOptions options;
  options.coordinator_command = ExecStart("longhauld.service", coordinator_config);
  options.agent_command = ExecStart("longhaul-agent.service", agent_config);
  ASSERT_EQ(options.coordinator_command,
            (std::vector<std::string>{BinPath("longhauld"), "--config", coordinator_config}));
  options.lost_after = "20s";  // longer than an agent's reconnect back-off (the restore below)
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  std::string file = cluster().WriteFile("walk.yaml", kWorkflow);

  // Two good runs; the second makes `make` anew, so the cache reuses its result from now on.
  int64_t first = CliRunToEnd({"submit", file}, v1::RUN_SUCCEEDED);
  int64_t second = CliRunToEnd({"submit", file, "--no-cache"}, v1::RUN_SUCCEEDED);
  ASSERT_GT(first, 0);
  ASSERT_GT(second, 0);

  // A stage fails: the webhook refuses the first delivery and takes the second try.
  int64_t failed = CliRunToEnd({"submit", file, "--set", "code=3"}, v1::RUN_FAILED);
  ASSERT_GT(failed, 0);
  ASSERT_TRUE(WaitFor([&] { return receiver.requests().size() >= 2; }, 30'000))
      << receiver.requests().size() << " requests";
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].answered, 500);
  EXPECT_EQ(got[1].answered, 200);
  auto event = nlohmann::json::parse(got[1].body, nullptr, false);
  ASSERT_TRUE(event.is_object()) << got[1].body;
  EXPECT_EQ(event["kind"], "stage_failed");
  EXPECT_EQ(event["run_id"], failed);
  EXPECT_EQ(event["stage"], "use");
  EXPECT_EQ(event["reason"], "exit 3");
  // ... and /metrics counts it by reason.
  Result<HttpResult> metrics = HttpGet(cluster().http_address(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_EQ(metrics->status, 200) << metrics->body;
  Exposition e;
  ParseExposition(metrics->body, e);
  EXPECT_EQ(SeriesValue(e, "longhaul_attempt_failures_total{reason=\"exit\"}"), 1);

  // `longhaul gc` with the configured policy (the newest 1 ended run of each workflow): the
  // first run's attempt dirs go; the second's `make` stays, the cache reuses it.
  Result<v1::Run> old_run = cluster().GetRun(first);
  ASSERT_TRUE(old_run.ok()) << old_run.status();
  std::vector<std::string> old_dirs;
  for (const auto& s : old_run->stages()) {
    for (const auto& a : s.attempts()) {
      old_dirs.push_back(StrCat(cluster().AgentStateDir(0), "/attempts/", a.id()));
    }
  }
  ASSERT_EQ(old_dirs.size(), 2u) << DescribeRun(*old_run);
  for (const auto& d : old_dirs) ASSERT_TRUE(std::filesystem::exists(d)) << d;
  CommandResult gc = cluster().Cli({"gc"});
  ASSERT_EQ(gc.exit_code, 0) << gc.out << gc.err;
  EXPECT_NE(gc.out.find("beyond the newest 1 of walk"), std::string::npos) << gc.out;
  EXPECT_NE(gc.out.find(StrCat("run ", second, " keeps make: the cache reuses its result")),
            std::string::npos)
      << gc.out;
  for (const auto& d : old_dirs) EXPECT_FALSE(std::filesystem::exists(d)) << d;
  EXPECT_GT(cluster().GetRun(first)->collected_at_ms(), 0);
  // A pivot of the collected run reuses `make` and runs `use` anew.
  int64_t pivot = CliRunToEnd({"pivot", std::to_string(first), "--set", "tag=b"}, v1::RUN_SUCCEEDED);
  ASSERT_GT(pivot, 0);
  Result<v1::Run> p = cluster().GetRun(pivot);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(FindStage(*p, "make")->status(), v1::STAGE_CACHED) << DescribeRun(*p);
  EXPECT_EQ(FindStage(*p, "make")->cached_from_run_id(), second);
  EXPECT_EQ(FindStage(*p, "use")->status(), v1::STAGE_SUCCEEDED) << DescribeRun(*p);

  // A backup while a run is in progress; the coordinator restored from it finishes that run
  // with the same process.
  std::string gate = cluster().dir().Join("gate");
  Result<int64_t> held = cluster().Submit(StrCat(
      "name: held\nstages:\n  wait:\n    run: [/bin/sh, -c, 'while [ ! -e ", gate,
      " ]; do sleep 0.05; done']\n"));
  ASSERT_TRUE(held.ok()) << held.status();
  Result<v1::Run> running = cluster().WaitForRun(*held, [](const v1::Run& r) {
    const v1::Stage* s = FindStage(r, "wait");
    return s != nullptr && s->attempts_size() == 1 &&
           s->attempts(0).state() == v1::ATTEMPT_RUNNING && s->attempts(0).pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status();
  int64_t pid = FindStage(*running, "wait")->attempts(0).pid();
  std::string backup = cluster().dir().Join("backup.db");
  CommandResult made = cluster().Cli({"admin", "backup", backup});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;
  EXPECT_NE((made.out + made.err).find("integrity_check ok"), std::string::npos) << made.out;
  Status restarted = cluster().RestoreCoordinatorFrom(backup);
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  WriteTextFile(gate, "");
  Result<v1::Run> end = cluster().WaitForRunEnd(*held, 60'000);
  ASSERT_TRUE(end.ok()) << end.status();
  ASSERT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
  ASSERT_EQ(FindStage(*end, "wait")->attempts_size(), 1) << DescribeRun(*end);
  EXPECT_EQ(FindStage(*end, "wait")->attempts(0).pid(), pid) << "re-adopted, not started again";
  // What the restored store holds from before the copy is all there.
  Result<v1::Run> kept = cluster().GetRun(failed);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->status(), v1::RUN_FAILED);
}

}  // namespace
}  // namespace longhaul::testing
