// Early stopping in a sweep on a real cluster (docs/sweeps.md, "Early stopping"): six
// synthetic trainers (/bin/sh scripts that report a known loss curve, one step every 0.1 s)
// under `early_stop: asha`; exactly the losers stop, at the rung the rule names, their own
// benchmarks are skipped, the report over the whole sweep runs, and the run succeeds.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

// Item -> its loss at steps 1, 2, 3; past its curve it reports its last value until step 50
// (5 s in all), so that an item the rule fails to stop finishes, succeeded, and the test sees
// it.
// The agent has one CPU and each trainer takes it: they run one after another, in file order,
// and reach each rung in that order.
//
// Rung 1 (step 1), eta 2: a 1.0 first (on); b 2.0 is 2nd of 2, best 1 kept: stops; c 0.9
// best of 3; d 0.95 2nd of 4, best 2 kept: on; e 3.0 5th of 5, best 3 kept: stops; f 0.5
// best of 6.
// Rung 2 (step 2): a 0.8 first; c 0.7 best of 2; d 0.9 3rd of 3, best 2 kept: stops; f 0.75
// 2nd of 4: on.
constexpr char kSweepTrainer[] = R"(case $0 in
  a) curve='1.0 0.8 0.5';;
  b) curve='2.0 1.9 1.8';;
  c) curve='0.9 0.7 0.4';;
  d) curve='0.95 0.9 0.85';;
  e) curve='3.0 2.9 2.8';;
  f) curve='0.5 0.75 0.3';;
esac
step=0
for v in $curve; do
  step=$((step + 1))
  echo "{\"metric\": {\"name\": \"loss\", \"value\": $v, \"step\": $step}}" >> "$LONGHAUL_EVENTS"
  sleep 0.1
done
while [ $step -lt 50 ]; do
  step=$((step + 1))
  echo "{\"metric\": {\"name\": \"loss\", \"value\": $v, \"step\": $step}}" >> "$LONGHAUL_EVENTS"
  sleep 0.1
done)";

std::string SweepWorkflow(const std::string& eta = "2") {
  return StrCat(R"(name: sweep-asha
stages:
  train:
    foreach: [a, b, c, d, e, f]
    resources: {cpus: 1}
    grace: 2s
    early_stop: {metric: loss, mode: min, rule: asha, rungs: [1, 2], eta: )",
                eta, R"(}
    run: [/bin/sh, -c, )",
                nlohmann::json(kSweepTrainer).dump(), R"(, "${item}"]
  bench:
    foreach: [a, b, c, d, e, f]
    needs: [train]
    resources: {cpus: 1}
    run: [/bin/sh, -c, "echo bench $0", "${item}"]
  report:
    needs: [train]
    resources: {cpus: 1}
    run: [/bin/sh, -c, "echo report"]
)");
}

class SweepTest : public ClusterTest {};

TEST_F(SweepTest, AshaStopsExactlyTheLosersAtTheirRungsAndTheRunSucceeds) {
  ClusterOptions one_cpu;
  one_cpu.cpus = 1;
  ASSERT_NO_FATAL_FAILURE(StartCluster(one_cpu));
  Result<int64_t> id = cluster().Submit(SweepWorkflow());
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 120'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_SUCCEEDED) << run->reason() << "\n" << DescribeRun(*run);

  const std::map<std::string, std::string> stopped = {
      {"train-b",
       "rung 1 (step 1): loss 2 is not among the best 1 of 2 items there (eta 2); beaten by "
       "train-a (1)"},
      {"train-e",
       "rung 1 (step 1): loss 3 is not among the best 3 of 5 items there (eta 2); beaten by "
       "train-c (0.9), train-d (0.95), train-a (1), train-b (2)"},
      {"train-d",
       "rung 2 (step 2): loss 0.9 is not among the best 2 of 3 items there (eta 2); beaten by "
       "train-c (0.7), train-a (0.8)"},
  };
  for (const char* item : {"a", "b", "c", "d", "e", "f"}) {
    std::string train = StrCat("train-", item), bench = StrCat("bench-", item);
    const v1::Stage* t = FindStage(*run, train);
    const v1::Stage* b = FindStage(*run, bench);
    ASSERT_NE(t, nullptr) << train;
    ASSERT_NE(b, nullptr) << bench;
    auto it = stopped.find(train);
    if (it == stopped.end()) {
      EXPECT_EQ(t->status(), v1::STAGE_SUCCEEDED) << train << ": " << t->reason();
      EXPECT_EQ(b->status(), v1::STAGE_SUCCEEDED) << bench << ": " << b->reason();
      continue;
    }
    EXPECT_EQ(t->status(), v1::STAGE_STOPPED_EARLY) << train << ": " << t->reason();
    EXPECT_EQ(t->reason(), it->second) << train;
    // Its attempt was stopped as a cancel stops one, not left to finish its 50 steps.
    ASSERT_EQ(t->attempts_size(), 1) << train;
    EXPECT_EQ(t->attempts(0).state(), v1::ATTEMPT_KILLED) << train;
    // The trainer's `sleep` may outlive its shell's SIGTERM; the agent then says so after it
    // ("; 1 process outlived the stage and was killed").
    EXPECT_TRUE(StartsWith(t->attempts(0).reason(), StrCat("stopped_early: ", it->second)))
        << train << ": " << t->attempts(0).reason();
    EXPECT_EQ(b->status(), v1::STAGE_SKIPPED) << bench;
    EXPECT_EQ(b->reason(), StrCat("needs '", train, "', which stopped early: ", it->second));
    EXPECT_EQ(b->attempts_size(), 0) << bench;
  }
  // The stage over the whole sweep ran with the three that finished.
  EXPECT_EQ(FindStage(*run, "report")->status(), v1::STAGE_SUCCEEDED);

  // `longhaul show` names the state as people read it.
  CommandResult show = cluster().Cli({"show", std::to_string(*id)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("stopped early"), std::string::npos) << show.out;

  // The sweep as one table, best first: the three that finished by their best loss, then the
  // stopped ones by theirs.
  CommandResult table =
      cluster().Cli({"show", std::to_string(*id), "--sweep", "train", "--sort", "best"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  std::cout << table.out;
  std::vector<std::string> lines = StrSplit(table.out, '\n');
  ASSERT_GE(lines.size(), 8u) << table.out;
  EXPECT_EQ(lines[0], StrCat("sweep train of run ", *id, ": 6 items (loss, min is best)"));
  std::vector<std::string> order;
  for (size_t i = 2; i < 8; ++i) order.push_back(lines[i].substr(0, lines[i].find(' ')));
  EXPECT_EQ(order, (std::vector<std::string>{"train-f", "train-c", "train-a", "train-d", "train-b",
                                             "train-e"}))
      << table.out;
  // train-d: stopped at rung 2 after two steps, its best 0.9; train-a finished its 50 steps.
  EXPECT_NE(table.out.find("stopped early"), std::string::npos) << table.out;
  for (const std::string& line : lines) {
    if (StartsWith(line, "train-d ")) {
      EXPECT_NE(line.find(" 0.9 "), std::string::npos) << line;
    }
    if (StartsWith(line, "train-a ")) {
      EXPECT_NE(line.find(" 50 "), std::string::npos) << line;
    }
  }
  CommandResult bad =
      cluster().Cli({"show", std::to_string(*id), "--sweep", "bench", "--sort", "speed"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--sort 'speed': expected one of item, status, final, best, steps, "
                         "wall, gpu-hours, value"),
            std::string::npos)
      << bad.err;
  CommandResult no_sweep = cluster().Cli({"show", std::to_string(*id), "--sweep", "report"});
  EXPECT_NE(no_sweep.exit_code, 0);
  EXPECT_NE(no_sweep.err.find("stage 'report' is not a sweep: it has no foreach"),
            std::string::npos)
      << no_sweep.err;

  // The same table over HTTP (GET /api/v1/runs/ID/sweeps/train, the web UI's sweep view), with
  // each item's series and where each stopped item was stopped: rung 1 for b and e, rung 2
  // for d, at the loss the rule judged there.
  ASSERT_FALSE(cluster().http_address().empty());
  Result<HttpResult> got =
      HttpGet(cluster().http_address(), StrCat("/api/v1/runs/", *id, "/sweeps/train?series=1"));
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->status, 200) << got->body;
  nlohmann::json sweep = nlohmann::json::parse(got->body);
  EXPECT_EQ(sweep["metric"], "loss");
  EXPECT_EQ(sweep["early_stop"]["rule"], "asha");
  EXPECT_EQ(sweep["early_stop"]["rungs"], nlohmann::json::array({"1", "2"}));  // int64: strings
  ASSERT_EQ(sweep["items"].size(), 6u) << got->body;
  const std::map<std::string, std::pair<std::string, double>> stopped_at = {
      {"train-b", {"1", 2.0}}, {"train-e", {"1", 3.0}}, {"train-d", {"2", 0.9}}};
  for (const nlohmann::json& item : sweep["items"]) {
    std::string name = item["stage"];
    EXPECT_EQ(item["params"][0]["value"], name.substr(6)) << name;
    auto it = stopped_at.find(name);
    if (it == stopped_at.end()) {
      EXPECT_EQ(item["status"], "STAGE_SUCCEEDED") << name;
      EXPECT_FALSE(item.contains("stopped_at_step")) << name;
      EXPECT_EQ(item["series"].size(), 50u) << name;
      continue;
    }
    EXPECT_EQ(item["status"], "STAGE_STOPPED_EARLY") << name;
    EXPECT_EQ(item["reason"], stopped.at(name)) << name;
    EXPECT_EQ(item["stopped_at_step"], it->second.first) << name;
    EXPECT_DOUBLE_EQ(item["stopped_value"].get<double>(), it->second.second) << name;
    EXPECT_GE(item["series"].size(), std::stoul(it->second.first)) << name;
  }
}

// What stopping saved, then the same sweep submitted with eta 3: judged again from run 1's
// stored values in the order they came (rung 1: a on; b 2nd of 2, 1 kept: stops; c best of 3;
// d 2nd of 4, 2 kept: on; e 5th of 5, 2 kept: stops; f best of 6. Rung 2: a on; c best of 2;
// d 3rd of 3, 1 kept: stops; f 2nd of 4, 2 kept: on), the same three stop, with the new
// rule's reasons, and nothing runs at all.
TEST_F(SweepTest, ANewEtaJudgesTheStoredValuesAndRunsNothing) {
  ClusterOptions one_cpu;
  one_cpu.cpus = 1;
  ASSERT_NO_FATAL_FAILURE(StartCluster(one_cpu));
  Result<int64_t> first = cluster().Submit(SweepWorkflow());
  ASSERT_TRUE(first.ok()) << first.status().message();
  Result<v1::Run> run1 = cluster().WaitForRunEnd(*first, 120'000);
  ASSERT_TRUE(run1.ok()) << run1.status().message();
  ASSERT_EQ(run1->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run1);

  // a, c and f did 50 steps of at least 0.1 s each; b and e stopped after step 1 or 2, d after
  // step 2 or 3: at least 48 + 48 + 47 steps were not run, at 0.1 s or more a step.
  CommandResult json = cluster().Cli({"show", std::to_string(*first), "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json saving = nlohmann::json::parse(json.out)["early_stop_saving"];
  EXPECT_EQ(saving["stopped_items"], 3) << saving;
  EXPECT_GE(saving["wall_seconds"].get<double>(), 14.3) << saving;
  EXPECT_GT(saving["percent"].get<double>(), 0) << saving;
  EXPECT_LT(saving["percent"].get<double>(), 100) << saving;
  CommandResult show = cluster().Cli({"show", std::to_string(*first)});
  std::cout << show.out;
  EXPECT_NE(show.out.find("  stopping:  saved ~"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(" % of the sweep), 3 items stopped early"), std::string::npos)
      << show.out;

  std::string file = cluster().WriteFile("sweep-eta3.yaml", SweepWorkflow("3"));
  CommandResult plan = cluster().Cli({"submit", file, "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  std::cout << plan.out;
  for (const char* line :
       {"train-b  stop    stopped by the new rule at rung 1 (step 1): loss 2 is not among the "
        "best 1 of 2 items there (eta 3)",
        "train-d  stop    stopped by the new rule at rung 2 (step 2): loss 0.9 is not among the "
        "best 1 of 3 items there (eta 3)",
        "train-a  reuse   kept by the new rule: loss 0.8 at rung 2 (step 2) is among the best 1 "
        "of 1 (eta 3); same inputs as run 1",
        "report   reuse   same inputs as run 1", "stopping: saved ~"}) {
    EXPECT_NE(plan.out.find(line), std::string::npos) << line << "\n" << plan.out;
  }

  Result<int64_t> second = cluster().Submit(SweepWorkflow("3"));
  ASSERT_TRUE(second.ok()) << second.status().message();
  Result<v1::Run> run2 = cluster().WaitForRunEnd(*second, 30'000);
  ASSERT_TRUE(run2.ok()) << run2.status().message();
  EXPECT_EQ(run2->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run2);
  for (const v1::Stage& s : run2->stages()) {
    EXPECT_EQ(s.attempts_size(), 0) << s.name() << " ran";
    bool stopped = s.name() == "train-b" || s.name() == "train-d" || s.name() == "train-e";
    bool skipped = s.name() == "bench-b" || s.name() == "bench-d" || s.name() == "bench-e";
    v1::StageStatus want = stopped   ? v1::STAGE_STOPPED_EARLY
                           : skipped ? v1::STAGE_SKIPPED
                                     : v1::STAGE_CACHED;
    EXPECT_EQ(s.status(), want) << s.name() << ": " << s.reason();
  }
  EXPECT_TRUE(StartsWith(FindStage(*run2, "train-e")->reason(),
                         "stopped by the new rule at rung 1 (step 1): loss 3 is not among the "
                         "best 2 of 5 items there (eta 3)"))
      << FindStage(*run2, "train-e")->reason();
}

}  // namespace
}  // namespace longhaul::testing
