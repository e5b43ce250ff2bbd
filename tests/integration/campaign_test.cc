// The campaign as a workflow, end to end with real processes: eagle3-local.yaml and its pivot
// on lh-refengine, service stages that never get ready or die mid-run, caching with a deleted
// artifact, and dry runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

double MetricOf(const v1::Run& run, const std::string& stage, const std::string& name) {
  const v1::Stage* s = FindStage(run, stage);
  if (s == nullptr) return -1;
  for (const auto& m : s->metrics()) {
    if (m.name() == name) return m.value();
  }
  return -1;
}

class CampaignTest : public ClusterTest {
 protected:
  int64_t SubmitFile(const std::vector<std::string>& args) {
    CommandResult r = cluster().Cli(args, 60'000);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
};

TEST_F(CampaignTest, TheLocalCampaignAndItsPivotReuseEverythingUpstream) {
  ClusterOptions options;
  options.cpus = 4;
  options.log_level = "info";
  ASSERT_NO_FATAL_FAILURE(StartCluster(options));
  std::string workflow = SourceDir() + "/workflows/eagle3-local.yaml";
  int64_t first = SubmitFile({"submit", workflow});
  ASSERT_GT(first, 0);
  Result<v1::Run> a = cluster().WaitForRunEnd(first, 240'000);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->status(), v1::RUN_SUCCEEDED) << DescribeRun(*a);

  // The plan first: a dry run explains and stores nothing.
  size_t runs_before = cluster().ListRuns()->runs_size();
  CommandResult plan = cluster().Cli(
      {"pivot", std::to_string(first), "--set", "spec_engine=refengine", "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("param spec_engine changed (refengine-misaligned -> refengine)"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("same inputs as run " + std::to_string(first)), std::string::npos);
  EXPECT_EQ(cluster().ListRuns()->runs_size(), static_cast<int>(runs_before));

  int64_t pivot = SubmitFile({"pivot", std::to_string(first), "--set", "spec_engine=refengine"});
  ASSERT_GT(pivot, 0);
  Result<v1::Run> b = cluster().WaitForRunEnd(pivot, 240'000);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->status(), v1::RUN_SUCCEEDED) << DescribeRun(*b);
  EXPECT_EQ(b->parent_run_id(), first);

  // Only the speculative server, its benchmark and the inspection ran again; nothing
  // upstream, and the target server was never started.
  std::set<std::string> ran, reused;
  for (const auto& s : b->stages()) {
    if (s.plan_action() == "run") ran.insert(s.name());
    if (s.status() == v1::STAGE_CACHED) {
      reused.insert(s.name());
      EXPECT_EQ(s.cached_from_run_id(), first) << s.name();
      EXPECT_EQ(s.attempts_size(), 0) << s.name();
    }
  }
  EXPECT_EQ(ran, (std::set<std::string>{"spec_server", "bench_spec", "inspect"}));
  for (const char* up :
       {"target_server", "datagen", "extract", "finetune", "bench_baseline", "reference"}) {
    EXPECT_TRUE(reused.count(up)) << up << " was not reused";
  }
  // The reused stages point at the first run's artifacts, and the new server got its drafter.
  const v1::Stage* ft_a = FindStage(*a, "finetune");
  const v1::Stage* ft_b = FindStage(*b, "finetune");
  ASSERT_GT(ft_a->artifacts_size(), 0);
  ASSERT_EQ(ft_b->artifacts_size(), ft_a->artifacts_size());
  EXPECT_EQ(ft_b->artifacts(0).path(), ft_a->artifacts(0).path());
  const v1::Stage* spec_b = FindStage(*b, "spec_server");
  ASSERT_GT(spec_b->attempts_size(), 0);
  bool drafter_passed = false;
  for (const auto& arg : spec_b->attempts(0).argv()) {
    drafter_passed |= arg == ft_a->outputs().at("drafter");
  }
  EXPECT_TRUE(drafter_passed) << "the pivot's server did not get the first run's drafter";

  // The engine's own counting: the misaligned feed accepts far fewer drafts than the correct
  // one, with the same drafter.
  double misaligned = MetricOf(*a, "bench_spec", "accept_rate");
  double correct = MetricOf(*b, "bench_spec", "accept_rate");
  ASSERT_GE(misaligned, 0);
  ASSERT_GT(correct, 0);
  EXPECT_LT(misaligned * 2.5, correct) << "misaligned " << misaligned << ", correct " << correct;
  EXPECT_GT(MetricOf(*b, "bench_spec", "speedup_output_throughput"),
            MetricOf(*a, "bench_spec", "speedup_output_throughput"));
  // Both servers are lossless at temperature 0 (the engine verifies every token); inspect's
  // own acceptance count agrees with the benchmark's story.
  EXPECT_EQ(MetricOf(*a, "inspect", "output_mismatches"), 0);
  EXPECT_EQ(MetricOf(*b, "inspect", "output_mismatches"), 0);
  EXPECT_LT(MetricOf(*a, "inspect", "accept_rate") * 2.5, MetricOf(*b, "inspect", "accept_rate"));
  CommandResult inspect_log = cluster().Cli({"logs", std::to_string(first), "inspect"});
  EXPECT_NE(inspect_log.out.find("weak_position_0"), std::string::npos) << inspect_log.out;

  CommandResult compare = cluster().Cli({"compare", std::to_string(first), std::to_string(pivot),
                                         "--metric", "bench_spec.accept_rate"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  EXPECT_NE(compare.out.find("reused (run " + std::to_string(first) + ")"), std::string::npos)
      << compare.out;
  CommandResult runs = cluster().Cli({"runs"});
  EXPECT_NE(runs.out.find("PARENT"), std::string::npos);
}

class ServiceTest : public ClusterTest {
 protected:
  std::string Journal() { return cluster().dir().Join("journal.txt"); }
};

TEST_F(ServiceTest, AServiceThatNeverGetsReadyFailsByReadyTimeoutAndIsRetried) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile(
      "never_ready.yaml",
      "name: never-ready\nstages:\n" +
          StageYaml("svc", JournaledRun(Journal(), {"--sleep", "60"}), {},
                    {"kind: service", "ready_timeout: 1s",
                     "retry: {limit: 1, backoff: 100ms}"}) +
          StageYaml("client", JournaledRun(Journal(), {"--print", "hi"}), {"svc"}));
  int64_t id = std::stoll(cluster().Cli({"submit", file}).out);
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED);
  const v1::Stage* svc = FindStage(*run, "svc");
  ASSERT_EQ(svc->attempts_size(), 2) << DescribeRun(*run);
  EXPECT_EQ(svc->attempts(0).reason(), "timeout: not ready after 1s");
  EXPECT_EQ(svc->status(), v1::STAGE_FAILED);
  EXPECT_EQ(FindStage(*run, "client")->status(), v1::STAGE_SKIPPED);
  EXPECT_EQ(JournalCounts(Journal())["svc"], 2);
  EXPECT_EQ(JournalCounts(Journal())["client"], 0);
}

TEST_F(ServiceTest, AServiceThatDiesMidwayFailsItsDependentWithServiceLost) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string pid_file = cluster().dir().Join("svc.pid");
  std::string file = cluster().WriteFile(
      "dies.yaml",
      "name: dies\nstages:\n" +
          StageYaml("svc", YamlList({BinPath("lh-testjob"), "--ready", "--pid-file", pid_file,
                                     "--output", "endpoint=http://x"}),
                    {}, {"kind: service"}) +
          StageYaml("client",
                    YamlList({BinPath("lh-testjob"), "--sleep", "30", "--print",
                              "${svc.outputs.endpoint}"}),
                    {"svc"}, {"retry: {limit: 0}"}));
  int64_t id = std::stoll(cluster().Cli({"submit", file}).out);
  ASSERT_TRUE(cluster()
                  .WaitForRun(id, [](const v1::Run& r) {
                    const v1::Stage* c = FindStage(r, "client");
                    return c && c->status() == v1::STAGE_RUNNING && c->attempts_size() == 1 &&
                           c->attempts(0).state() == v1::ATTEMPT_RUNNING;
                  })
                  .ok());
  ASSERT_TRUE(WaitFor([&] { return !ReadTextFile(pid_file).empty(); }, 10'000));
  pid_t svc_pid = std::stoi(ReadTextFile(pid_file));
  ::kill(svc_pid, SIGKILL);  // the engine crashes while its client is mid-benchmark
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const v1::Stage* client = FindStage(*run, "client");
  EXPECT_EQ(client->status(), v1::STAGE_FAILED) << DescribeRun(*run);
  EXPECT_EQ(client->attempts(0).reason(),
            "service_lost: service 'svc' ended: signal 9 (SIGKILL)");
  EXPECT_EQ(FindStage(*run, "svc")->status(), v1::STAGE_FAILED);
  EXPECT_EQ(run->status(), v1::RUN_FAILED);
}

TEST_F(ServiceTest, ADeletedArtifactTurnsACacheHitIntoARerunWithThatReason) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::string file = cluster().WriteFile(
      "cached.yaml",
      "name: cached\nparams: {n: \"1\"}\nstages:\n" +
          StageYaml("make", JournaledRun(Journal(), {"--artifact", "data=data-${params.n}.txt"})) +
          StageYaml("use", JournaledRun(Journal(), {"--print", "using"}), {"make"}));
  int64_t first = std::stoll(cluster().Cli({"submit", file}).out);
  Result<v1::Run> a = cluster().WaitForRunEnd(first);
  ASSERT_TRUE(a.ok() && a->status() == v1::RUN_SUCCEEDED) << DescribeRun(*a);
  const v1::Stage* make = FindStage(*a, "make");
  ASSERT_EQ(make->artifacts_size(), 1);
  std::string artifact = make->artifacts(0).path();
  ASSERT_TRUE(std::filesystem::exists(artifact)) << artifact;

  // While the artifact exists, everything is reused.
  CommandResult dry = cluster().Cli({"submit", file, "--dry-run"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("same inputs as run " + std::to_string(first)), std::string::npos)
      << dry.out;
  EXPECT_EQ(cluster().ListRuns()->runs_size(), 1) << "a dry run stored a run";

  std::filesystem::remove(artifact);
  dry = cluster().Cli({"submit", file, "--dry-run"});
  EXPECT_NE(dry.out.find("artifact 'data' of run " + std::to_string(first) + " is gone"),
            std::string::npos)
      << dry.out;
  int64_t second = std::stoll(cluster().Cli({"submit", file}).out);
  Result<v1::Run> b = cluster().WaitForRunEnd(second);
  ASSERT_TRUE(b.ok() && b->status() == v1::RUN_SUCCEEDED) << DescribeRun(*b);
  EXPECT_EQ(FindStage(*b, "make")->plan_action(), "run");
  EXPECT_NE(FindStage(*b, "make")->plan_reason().find("is gone: " + artifact), std::string::npos)
      << FindStage(*b, "make")->plan_reason();
  EXPECT_EQ(FindStage(*b, "use")->status(), v1::STAGE_CACHED);  // its own inputs did not change
  EXPECT_EQ(JournalCounts(Journal())["make"], 2);
  EXPECT_EQ(JournalCounts(Journal())["use"], 1);
}

}  // namespace
}  // namespace longhaul::testing
