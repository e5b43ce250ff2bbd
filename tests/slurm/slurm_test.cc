// longhaul-agent --executor slurm against the real local Slurm of deploy/slurm-local.sh: a
// workflow runs through sbatch, a job scancelled outside longhaul is reported so, a preempted
// one as preempted (and retried), a queued one shows Slurm's reason, and 20 queued attempts cost one squeue
// per poll. Skipped (with the reason) when no slurmctld answers. Faults: slurm_fault_test.cc.
#include "tests/slurm/slurm_fixture.h"

namespace longhaul::testing {
namespace {

TEST_F(SlurmTest, WorkflowRunsThroughSbatchWithEventsOutputsAndDependencies) {
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());
  std::string journal = cluster().dir().Join("journal.txt");
  Result<int64_t> id = cluster().Submit(
      "name: through-slurm\nstages:\n" +
      StageYaml("top", JournaledRun(journal, {"--progress", "3", "--sleep", "0.3", "--output",
                                              "word=hello"})) +
      StageYaml("left", JournaledRun(journal, {"--output", "side=L-${top.outputs.word}"}),
                {"top"}) +
      StageYaml("right", JournaledRun(journal, {"--print", "right side", "--exit", "0"}), {"top"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 120'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  EXPECT_EQ(FindStage(*run, "left")->outputs().at("side"), "L-hello");
  EXPECT_EQ(FindStage(*run, "top")->progress().done(), 3);
  // Each attempt was its own Slurm job, named after it, and ran the shim.
  for (const char* name : {"top", "left", "right"}) {
    const v1::Attempt* a = Current(*run, name);
    ASSERT_NE(a, nullptr) << name;
    std::string job = JobIdOf(a->id());
    ASSERT_FALSE(job.empty()) << name;
    CommandResult show =
        RunCommand({"/usr/bin/env", "scontrol", "-o", "show", "job", job}, {}, 10'000);
    EXPECT_NE(show.out.find(StrCat("JobName=lh-", a->id())), std::string::npos) << show.out;
    EXPECT_NE(show.out.find("JobState=COMPLETED"), std::string::npos) << show.out;
  }
  CommandResult logs = cluster().Cli({"logs", std::to_string(*id), "right"});
  EXPECT_NE(logs.out.find("right side"), std::string::npos) << logs.out << logs.err;
  Result<std::vector<v1::AgentInfo>> agents = cluster().ListAgents();
  EXPECT_EQ(JournalLines(journal).size(), 3u);
  ASSERT_TRUE(agents.ok());
  ASSERT_EQ(agents->size(), 1u);
  EXPECT_EQ((*agents)[0].executor(), "slurm");
}

TEST_F(SlurmTest, TheLocalCampaignAndItsPivotRunThroughSlurmUnchanged) {
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster({}, 2));
  std::string workflow = SourceDir() + "/workflows/eagle3-local.yaml";
  CommandResult submit = cluster().Cli({"submit", workflow}, 60'000);
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  int64_t first = std::stoll(submit.out);
  Result<v1::Run> a = cluster().WaitForRunEnd(first, 240'000);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->status(), v1::RUN_SUCCEEDED) << DescribeRun(*a);
  EXPECT_EQ(JobIds().size(), 9u) << "one Slurm job per attempt";
  CommandResult pivot =
      cluster().Cli({"pivot", std::to_string(first), "--set", "spec_engine=refengine"}, 60'000);
  ASSERT_EQ(pivot.exit_code, 0) << pivot.err;
  Result<v1::Run> b = cluster().WaitForRunEnd(std::stoll(pivot.out), 240'000);
  ASSERT_TRUE(b.ok()) << b.status().message();
  ASSERT_EQ(b->status(), v1::RUN_SUCCEEDED) << DescribeRun(*b);
  int cached = 0;
  for (const auto& st : b->stages()) cached += st.status() == v1::STAGE_CACHED ? 1 : 0;
  EXPECT_EQ(cached, 6) << DescribeRun(*b);
  EXPECT_EQ(JobIds().size(), 12u) << "the pivot ran three stages";
}

TEST_F(SlurmTest, ScancelOutsideLonghaulIsReportedSo) {
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());
  int64_t id = 0;
  std::string job;
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&id, &job));
  CommandResult scancel = RunCommand({"/usr/bin/env", "scancel", job}, {}, 10'000);
  ASSERT_EQ(scancel.exit_code, 0) << scancel.err;
  Result<v1::Run> run = cluster().WaitForRunEnd(id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);
  const v1::Attempt* a = Current(*run, "long");
  EXPECT_EQ(a->reason(), StrCat("cancelled outside longhaul (Slurm job ", job, " CANCELLED)"));
  EXPECT_EQ(a->state(), v1::ATTEMPT_KILLED);
}

TEST_F(SlurmTest, PreemptedJobIsReportedAsPreemptedAndRetriedOnTheInfraBudget) {
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster({"--slurm-partition", "low"}));
  int64_t id = 0;
  std::string job;
  // No retries of its own: a preemption is retried anyway (retry.infra_limit, default 5).
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&id, &job, {"retry: {limit: 0, backoff: 1s}"}));
  // A job of the `high` partition that needs the whole node takes it.
  CommandResult cpus = RunCommand({"/usr/bin/env", "sinfo", "-h", "-o", "%c"}, {}, 10'000);
  std::string n = StrSplit(cpus.out, '\n')[0];
  CommandResult high = RunCommand({"/usr/bin/env", "sbatch", "--parsable", "-p", "high", "-c", n,
                                   "-J", "preemptor", "-o", "/dev/null", "--wrap", "sleep 2"},
                                  {}, 10'000);
  ASSERT_EQ(high.exit_code, 0) << high.err;
  other_jobs_.push_back(StrSplit(high.out, '\n')[0]);
  Result<v1::Run> run = cluster().WaitForRun(
      id, [](const v1::Run& r) { return FindStage(r, "long")->attempts_size() >= 2; }, 90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const v1::Attempt& a = FindStage(*run, "long")->attempts(0);
  EXPECT_EQ(a.reason(), StrCat("preempted (Slurm job ", job, " PREEMPTED)")) << DescribeRun(*run);
  EXPECT_EQ(a.state(), v1::ATTEMPT_KILLED);
  EXPECT_EQ(run->status(), v1::RUN_RUNNING) << DescribeRun(*run);
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  EXPECT_TRUE(cluster().WaitForRunEnd(id, 60'000).ok());
}

TEST_F(SlurmTest, QueuedAttemptsShowSlurmsReasonAndCostOneSqueuePerPoll) {
  // squeue through a wrapper that counts its calls.
  TempDir wrap;
  std::string count = wrap.Join("squeue.calls");
  std::string real = RunCommand({"/bin/sh", "-c", "command -v squeue"}).out;
  while (!real.empty() && real.back() == '\n') real.pop_back();
  ASSERT_FALSE(real.empty());
  {
    std::ofstream w(wrap.Join("squeue"));
    w << "#!/bin/sh\necho x >> '" << count << "'\nexec '" << real << "' \"$@\"\n";
  }
  ::chmod(wrap.Join("squeue").c_str(), 0755);
  std::string old_path = std::getenv("PATH");
  std::string path = StrCat(wrap.path(), ":", old_path);
  ::setenv("PATH", path.c_str(), 1);
  struct RestorePath {
    std::string path;
    ~RestorePath() { ::setenv("PATH", path.c_str(), 1); }
  } restore{old_path};
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());

  std::string yaml = "name: crowd\nstages:\n";
  for (int i = 0; i < 20; ++i) {
    yaml += StageYaml(StrCat("s", i), YamlList({BinPath("lh-testjob"), "--sleep", "300"}));
  }
  Result<int64_t> id = cluster().Submit(yaml);
  ASSERT_TRUE(id.ok()) << id.status().message();
  // All 20 submitted; most wait for the node's CPUs, and say so.
  Result<v1::Run> run = cluster().WaitForRun(
      *id,
      [](const v1::Run& r) {
        int queued = 0;
        bool resources = false;  // Slurm's next job in line waits for the node's CPUs
        for (int i = 0; i < 20; ++i) {
          const v1::Attempt* a = Current(r, StrCat("s", i));
          if (a != nullptr && a->state() == v1::ATTEMPT_STARTING &&
              StartsWith(a->reason(), "PENDING")) {
            ++queued;
            resources = resources || a->reason() == "PENDING (Resources)";
          }
        }
        return queued >= 10 && resources;
      },
      90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  CommandResult pending = cluster().Cli({"show", std::to_string(*id)});
  EXPECT_NE(pending.out.find("PENDING (Resources)"), std::string::npos) << pending.out;

  // Over the next polls, nothing ends: one squeue per poll, whatever the number of attempts.
  auto calls = [&] { return StrSplit(ReadText(count), '\n').size() - 1; };
  size_t before = calls();
  auto now_ms = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  int64_t t0 = now_ms();
  // An explicit wait with a deadline: at least 6 polls (500 ms apart) must happen.
  WaitFor([&] { return calls() >= before + 6; }, 30'000, 100);
  int64_t elapsed = now_ms() - t0;
  size_t made = calls() - before;
  EXPECT_GE(made, 6u) << "the agent did not poll";
  // At most one per 500 ms heartbeat (and one more for the tick in progress).
  EXPECT_LE(made, static_cast<size_t>(elapsed / 500 + 1))
      << made << " squeue calls in " << elapsed << " ms for 20 attempts";
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(*id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  run = cluster().WaitForRunEnd(*id, 90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_CANCELLED) << DescribeRun(*run);
}

}  // namespace
}  // namespace longhaul::testing
