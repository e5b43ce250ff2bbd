// What stays: history survives a coordinator restart unchanged, logs come back from the agent
// as written, and the CLI's --json output is JSON a script can read.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

// Outputs, metrics, artifacts, a retried stage, a failed one and a skipped one: every kind of
// row a run's history holds.
constexpr char kRichWorkflow[] =
    "name: rich\n"
    "params: {n: '3'}\n"
    "stages:\n"
    "  produce:\n"
    "    run: [lh-testjob, --print, 'made ${params.n}', --output, 'count=${params.n}',\n"
    "          --metric, 'loss=0.25', --artifact, 'data=out/data.txt', --progress, '3']\n"
    "  flaky:\n"
    "    needs: [produce]\n"
    "    retry: {limit: 1, backoff: 50ms}\n"
    "    run: [lh-testjob, --fail-first, '1', --print, 'got ${produce.outputs.count}']\n"
    "  broken:\n"
    "    run: [lh-testjob, --stderr, 'oh no', --exit, '9']\n"
    "  never:\n"
    "    needs: [broken]\n"
    "    run: [lh-testjob]\n";

class HistoryTest : public ClusterTest, public ::testing::WithParamInterface<int> {};

struct Snapshot {
  std::string runs_json, runs_table, show_json, show_attempts_json, show_table;
  size_t events = 0;
};

Snapshot Take(Cluster& c, int64_t id) {
  Snapshot s;
  std::string run = std::to_string(id);
  auto cli = [&](std::vector<std::string> args) {
    CommandResult r = c.Cli(args);
    EXPECT_EQ(r.exit_code, 0) << StrJoin(args, " ") << ": " << r.err;
    return r.out;
  };
  s.runs_json = cli({"runs", "--json"});
  s.runs_table = cli({"runs"});
  s.show_json = cli({"show", run, "--json"});
  s.show_attempts_json = cli({"show", run, "--attempts", "--json"});
  s.show_table = cli({"show", run, "--attempts"});
  for (const char* stage : {"produce", "flaky", "broken", "never"}) {
    auto events = c.ListEvents(id, stage);
    EXPECT_TRUE(events.ok()) << events.status().message();
    if (events.ok()) s.events += events->size();
  }
  return s;
}

TEST_P(HistoryTest, CoordinatorRestartLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile("rich.yaml", kRichWorkflow);
  CommandResult submit = cluster().Cli({"submit", file});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);
  ASSERT_EQ(FindStage(*run, "flaky")->attempts_size(), 2);
  // A second, successful run, so that the list has more than one entry.
  Result<int64_t> second = cluster().Submit("name: small\nstages:\n  s:\n    run: [lh-testjob]\n");
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_TRUE(cluster().WaitForRunEnd(*second).ok());

  Snapshot before = Take(cluster(), id);
  EXPECT_GT(before.events, 5u);
  cluster().KillCoordinator(GetParam());
  Status st = cluster().RestartCoordinator();
  ASSERT_TRUE(st.ok()) << st.message();
  Snapshot after = Take(cluster(), id);

  // JSON objects are compared parsed: protobuf prints map fields in no fixed order.
  EXPECT_EQ(json::parse(after.runs_json), json::parse(before.runs_json)) << after.runs_json;
  EXPECT_EQ(json::parse(after.show_json), json::parse(before.show_json)) << after.show_json;
  EXPECT_EQ(json::parse(after.show_attempts_json), json::parse(before.show_attempts_json))
      << after.show_attempts_json;
  EXPECT_EQ(after.runs_table, before.runs_table);
  EXPECT_EQ(after.show_table, before.show_table);
  EXPECT_EQ(after.events, before.events);
  // And the restarted coordinator still schedules.
  Result<int64_t> third = cluster().Submit("name: small\nstages:\n  s:\n    run: [lh-testjob]\n");
  ASSERT_TRUE(third.ok()) << third.status().message();
  Result<v1::Run> done = cluster().WaitForRunEnd(*third);
  ASSERT_TRUE(done.ok()) << done.status().message();
  EXPECT_EQ(done->status(), v1::RUN_SUCCEEDED);
}

INSTANTIATE_TEST_SUITE_P(Signals, HistoryTest, ::testing::Values(SIGTERM, SIGKILL),
                         [](const auto& info) {
                           return info.param == SIGTERM ? std::string("Sigterm")
                                                        : std::string("Sigkill");
                         });

class OutputTest : public ClusterTest {};

TEST_F(OutputTest, LogsPrintTheStagesOutputAndJsonParses) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile("rich.yaml", kRichWorkflow);
  CommandResult submit = cluster().Cli({"submit", file, "--set", "n=5"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t id = std::stoll(submit.out);
  std::string run = std::to_string(id);
  Result<v1::Run> ended = cluster().WaitForRunEnd(id);
  ASSERT_TRUE(ended.ok()) << ended.status().message();

  CommandResult logs = cluster().Cli({"logs", run, "produce"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "made 5\n");
  logs = cluster().Cli({"logs", run, "flaky"});  // the latest attempt
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "got 5\n");
  logs = cluster().Cli({"logs", run, "flaky", "--attempt", "1", "--stderr"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_NE(logs.out.find("failing attempt 1"), std::string::npos) << logs.out;
  logs = cluster().Cli({"logs", run, "broken", "--stderr"});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "oh no\n");
  logs = cluster().Cli({"logs", run, "never"});  // skipped: no attempt to read
  EXPECT_EQ(logs.exit_code, 3) << logs.out << logs.err;

  CommandResult runs = cluster().Cli({"runs", "--json"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  json r = json::parse(runs.out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << runs.out;
  ASSERT_EQ(r["runs"].size(), 1u) << runs.out;
  EXPECT_EQ(r["runs"][0]["id"], run);  // int64 as a string, as protobuf's JSON mapping has it
  EXPECT_EQ(r["runs"][0]["status"], "RUN_FAILED");
  EXPECT_EQ(r["runs"][0]["workflow_name"], "rich");

  CommandResult show = cluster().Cli({"show", run, "--json", "--attempts"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  json s = json::parse(show.out, nullptr, false);
  ASSERT_FALSE(s.is_discarded()) << show.out;
  EXPECT_EQ(s["params"]["n"], "5");
  ASSERT_EQ(s["stages"].size(), 4u);
  std::map<std::string, json> stages;
  for (const json& st : s["stages"]) stages[st["name"]] = st;
  EXPECT_EQ(stages["produce"]["status"], "STAGE_SUCCEEDED");
  EXPECT_EQ(stages["produce"]["outputs"]["count"], "5");
  EXPECT_EQ(stages["produce"]["metrics"][0]["name"], "loss");
  EXPECT_EQ(stages["produce"]["metrics"][0]["value"], 0.25);
  EXPECT_EQ(stages["produce"]["artifacts"][0]["name"], "data");
  EXPECT_EQ(stages["flaky"]["attempts"].size(), 2u);
  EXPECT_EQ(stages["broken"]["status"], "STAGE_FAILED");
  EXPECT_EQ(stages["never"]["status"], "STAGE_SKIPPED");

  // Without the agent that holds them, logs are an error, not a hang.
  cluster().KillAgent(0, SIGKILL);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto agents = cluster().ListAgents();
        return agents.ok() && agents->size() == 1 && (*agents)[0].state() != v1::AGENT_CONNECTED;
      },
      10'000));
  logs = cluster().Cli({"logs", run, "produce"});
  EXPECT_EQ(logs.exit_code, 4) << logs.out << logs.err;
  EXPECT_NE(logs.err.find("n0"), std::string::npos) << logs.err;
}

TEST_F(OutputTest, FollowedLogsEndWithTheAttemptAndWatchExitsWithTheRunsResult) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string talk = cluster().WriteFile(
      "talk.yaml",
      "name: talk\nstages:\n  talk:\n"
      "    run: [/bin/sh, -c, 'for i in 1 2 3 4 5; do echo line $i; sleep 0.2; done']\n");
  CommandResult submit = cluster().Cli({"submit", talk});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  std::string run = std::to_string(std::stoll(submit.out));
  Result<v1::Run> running = cluster().WaitForRun(std::stoll(run), [](const v1::Run& r) {
    return r.stages(0).attempts_size() == 1 && r.stages(0).attempts(0).pid() > 0;
  });
  ASSERT_TRUE(running.ok()) << running.status().message();

  // -f keeps reading until the attempt has ended, then exits 0 with the whole log.
  CommandResult follow = cluster().Cli({"logs", run, "talk", "-f"});
  EXPECT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_EQ(follow.out, "line 1\nline 2\nline 3\nline 4\nline 5\n");
  Result<v1::Run> ended = cluster().WaitForRunEnd(std::stoll(run));
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  EXPECT_EQ(ended->status(), v1::RUN_SUCCEEDED);
  CommandResult watch = cluster().Cli({"watch", run});
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;

  std::string bad = cluster().WriteFile(
      "bad.yaml", "name: bad\nstages:\n  b:\n    run: [lh-testjob, --exit, '3']\n");
  CommandResult failed = cluster().Cli({"submit", bad, "--watch"});
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  std::string failed_id = failed.out.substr(0, failed.out.find('\n'));
  EXPECT_EQ(cluster().Cli({"watch", failed_id}).exit_code, 1);
  Result<v1::Run> bad_run = cluster().GetRun(std::stoll(failed_id));
  ASSERT_TRUE(bad_run.ok()) << bad_run.status().message();
  EXPECT_EQ(bad_run->status(), v1::RUN_FAILED);
}

}  // namespace
}  // namespace longhaul::testing
