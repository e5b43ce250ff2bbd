// longhaul-agent --executor slurm against the real local Slurm of deploy/slurm-local.sh: a
// workflow runs through sbatch, a job scancelled outside longhaul is reported so, a preempted
// one as preempted (and retried), a high-class run's job goes to the partition its class maps
// to and preempts a low-class run's, a queued one shows Slurm's reason, 50 queued attempts cost one
// squeue per poll, GPUs asked as gres reach the stage as Slurm assigned them, and a stage over
// its memory ends `oom`. Skipped (with the reason) when no slurmctld answers. Faults:
// slurm_fault_test.cc.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <map>

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
    // The attempt ends when its shim does; Slurm may still be COMPLETING the job (its epilog)
    // for a moment after that.
    CommandResult show;
    WaitFor(
        [&] {
          show = RunCommand({"/usr/bin/env", "scontrol", "-o", "show", "job", job}, {}, 10'000);
          return show.out.find("JobState=COMPLETED") != std::string::npos;
        },
        30'000, 100);
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

TEST_F(SlurmTest, AHighClassRunsJobGoesToItsPartitionAndPreemptsALowRunsJob) {
  // The local cluster's default partition is `low`; a `high` job that needs the node cancels
  // `low` jobs (PreemptType=preempt/partition_prio, PreemptMode=CANCEL).
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster({"--slurm-class-partition", "high=high"}));
  int64_t low = 0;
  std::string low_job;
  ASSERT_NO_FATAL_FAILURE(
      StartLongStage(&low, &low_job, {"retry: {limit: 0, backoff: 1s}"}, "priority: low\n"));
  auto partition_of = [](const std::string& job) {
    CommandResult show =
        RunCommand({"/usr/bin/env", "scontrol", "-o", "show", "job", job}, {}, 10'000);
    size_t at = show.out.find(" Partition=");
    if (at == std::string::npos) return "(no Partition in: " + show.out + show.err + ")";
    at += 11;
    return show.out.substr(at, show.out.find_first_of(" \n", at) - at);
  };
  EXPECT_EQ(partition_of(low_job), "low") << "low has no partition of its own: the default";

  CommandResult cpus = RunCommand({"/usr/bin/env", "sinfo", "-h", "-o", "%c"}, {}, 10'000);
  std::string n = StrSplit(cpus.out, '\n')[0];
  Result<int64_t> high =
      cluster().Submit("name: urgent\npriority: high\nstages:\n" +
                       StageYaml("take", YamlList({BinPath("lh-testjob"), "--sleep", "2"}), {},
                                 {StrCat("resources: {cpus: ", n, "}")}));
  ASSERT_TRUE(high.ok()) << high.status().message();
  Result<v1::Run> done = cluster().WaitForRunEnd(*high, 90'000);
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_EQ(done->status(), v1::RUN_SUCCEEDED) << DescribeRun(*done);
  EXPECT_EQ(partition_of(JobIdOf(Current(*done, "take")->id())), "high");

  // The low run's job was preempted for it, and the stage is tried again.
  Result<v1::Run> after = cluster().WaitForRun(
      low, [](const v1::Run& r) { return FindStage(r, "long")->attempts_size() >= 2; }, 60'000);
  ASSERT_TRUE(after.ok()) << after.status().message();
  const v1::Attempt& first = FindStage(*after, "long")->attempts(0);
  EXPECT_EQ(first.reason(), StrCat("preempted (Slurm job ", low_job, " PREEMPTED)"))
      << DescribeRun(*after);
  EXPECT_EQ(first.state(), v1::ATTEMPT_KILLED);
  ASSERT_EQ(cluster().Cli({"cancel", std::to_string(low)}).exit_code, 0);
  EXPECT_TRUE(cluster().WaitForRunEnd(low, 60'000).ok());
}

TEST_F(SlurmTest, QueuedAttemptsShowSlurmsReasonAndSqueueBacksOffWhileNothingChanges) {
  // squeue through a wrapper that logs the time of each call (ms); sbatch through one that
  // logs when each call began and ended, and takes 200 ms more, as a busy slurmctld would.
  TempDir wrap;
  std::string count = wrap.Join("squeue.calls");
  std::string submits = wrap.Join("sbatch.calls");
  auto real = [](const std::string& name) {
    std::string path = RunCommand({"/bin/sh", "-c", "command -v " + name}).out;
    while (!path.empty() && path.back() == '\n') path.pop_back();
    return path;
  };
  ASSERT_FALSE(real("squeue").empty());
  ASSERT_FALSE(real("sbatch").empty());
  const char kNowMs[] = "$(($(date +%s%N) / 1000000))";
  {
    std::ofstream w(wrap.Join("squeue"));
    w << "#!/bin/sh\necho " << kNowMs << " >> '" << count << "'\nexec '" << real("squeue")
      << "' \"$@\"\n";
  }
  {
    std::ofstream w(wrap.Join("sbatch"));
    w << "#!/bin/sh\nstart=" << kNowMs << "\nsleep 0.2\n'" << real("sbatch")
      << "' \"$@\"\nrc=$?\necho $start " << kNowMs << " >> '" << submits << "'\nexit $rc\n";
  }
  ::chmod(wrap.Join("squeue").c_str(), 0755);
  ::chmod(wrap.Join("sbatch").c_str(), 0755);
  std::string old_path = std::getenv("PATH");
  std::string path = StrCat(wrap.path(), ":", old_path);
  ::setenv("PATH", path.c_str(), 1);
  struct RestorePath {
    std::string path;
    ~RestorePath() { ::setenv("PATH", path.c_str(), 1); }
  } restore{old_path};
  // One query 1 s after a submit or a change, then 2 s, 4 s, 4 s ... while nothing changes.
  // The agent offers room for all of them at once.
  constexpr int kQueued = 50;
  ASSERT_NO_FATAL_FAILURE(
      StartSlurmCluster({"--slurm-poll", "1s", "--slurm-poll-max", "4s"}, /*cpus=*/kQueued + 8));

  std::string yaml = "name: crowd\nstages:\n";
  for (int i = 0; i < kQueued; ++i) {
    yaml += StageYaml(StrCat("s", i), YamlList({BinPath("lh-testjob"), "--sleep", "300"}));
  }
  Result<int64_t> id = cluster().Submit(yaml);
  ASSERT_TRUE(id.ok()) << id.status().message();
  // All submitted; most wait for the node's CPUs, and say so.
  Result<v1::Run> run = cluster().WaitForRun(
      *id,
      [](const v1::Run& r) {
        int queued = 0;
        bool resources = false;  // Slurm's next job in line waits for the node's CPUs
        for (int i = 0; i < kQueued; ++i) {
          const v1::Attempt* a = Current(r, StrCat("s", i));
          if (a != nullptr && a->state() == v1::ATTEMPT_STARTING &&
              StartsWith(a->reason(), "PENDING")) {
            ++queued;
            resources = resources || a->reason() == "PENDING (Resources)";
          }
        }
        return queued >= kQueued / 2 && resources;
      },
      90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  CommandResult pending = cluster().Cli({"show", std::to_string(*id)});
  EXPECT_NE(pending.out.find("PENDING (Resources)"), std::string::npos) << pending.out;

  auto calls = [&] {
    std::vector<int64_t> t;
    for (const auto& l : StrSplit(ReadText(count), '\n')) {
      if (!l.empty()) t.push_back(std::stoll(l));
    }
    return t;
  };
  // Every sbatch has answered (a query made after a submit comes 1 s later, whatever the
  // back-off had reached, so the back-off is checked once they are all done).
  auto submitted = [&] {
    size_t n = 0;
    for (const auto& l : StrSplit(ReadText(submits), '\n')) n += l.empty() ? 0 : 1;
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return submitted() >= static_cast<size_t>(kQueued); }, 60'000, 100))
      << submitted() << " of " << kQueued << " sbatch calls made";
  // Status queries do not wait behind submissions: one ran between the first sbatch's end and
  // the last one's start (the agent submits one at a time, 200+ ms each here).
  {
    int64_t first_end = INT64_MAX, last_start = 0;
    for (const auto& l : StrSplit(ReadText(submits), '\n')) {
      std::vector<std::string> f = StrSplit(l, ' ');
      if (f.size() != 2) continue;
      first_end = std::min<int64_t>(first_end, std::stoll(f[1]));
      last_start = std::max<int64_t>(last_start, std::stoll(f[0]));
    }
    std::vector<int64_t> q = calls();
    EXPECT_TRUE(std::any_of(q.begin(), q.end(),
                            [&](int64_t t) { return t > first_end && t < last_start; }))
        << "no squeue between " << first_end << " and " << last_start << " ms ("
        << ReadText(count) << ")";
  }

  // Nothing changes from here on: one squeue per query, whatever the number of attempts, and
  // the queries back off to the 4 s cap.
  size_t before = calls().size();
  // An explicit wait with a deadline: five more queries take about 1+2+4+4+4 s.
  WaitFor([&] { return calls().size() >= before + 5; }, 60'000, 100);
  std::vector<int64_t> t = calls();
  ASSERT_GE(t.size(), before + 5) << "the agent stopped querying Slurm";
  for (size_t k = before + 1; k < t.size(); ++k) {
    EXPECT_GE(t[k] - t[k - 1], 900) << "query " << k << " came " << t[k] - t[k - 1]
                                    << " ms after the one before, for " << kQueued << " attempts";
  }
  std::string gaps;
  for (size_t k = before + 1; k < t.size(); ++k) gaps += StrCat(" ", t[k] - t[k - 1]);
  EXPECT_GE(t.back() - t[t.size() - 2], 3'500) << "no back-off to the 4 s cap; gaps (ms):" << gaps;
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(*id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  run = cluster().WaitForRunEnd(*id, 90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_CANCELLED) << DescribeRun(*run);
}

// deploy/slurm-local.sh gives the node two GPUs as gres (character devices that are not GPUs).
// A stage asking for a GPU gets one from Slurm, and sees Slurm's CUDA_VISIBLE_DEVICES, not the
// index the coordinator counted it with: the agent offers 3 GPUs, Slurm has 2, so one stage is
// counted as GPU 2 by the coordinator, waits in Slurm's queue, and then runs on 0 or 1.
TEST_F(SlurmTest, GpusAsGresReachTheStageAsSlurmAssignedThem) {
  CommandResult gres = RunCommand({"/usr/bin/env", "sinfo", "-h", "-o", "%G"}, {}, 10'000);
  if (gres.out.find("gpu:2") == std::string::npos) {
    GTEST_SKIP() << "the local Slurm's node has no gpu gres (sinfo %G: " << gres.out
                 << "); deploy/slurm-local.sh makes two where mknod is allowed";
  }
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster({"--slurm-gres-gpus"}, 32, 3));
  std::string dir = cluster().dir().Join("gpus");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  // a and b wait for each other (so they hold both GPUs at once, up to 120 s); c does not.
  auto stage = [&](const std::string& name, bool barrier) {
    std::string script = StrCat("echo \"$CUDA_VISIBLE_DEVICES\" > ", dir, "/", name, ".cvd");
    if (barrier) {
      script +=
          StrCat("; touch ", dir, "/", name, ".up; i=0; while [ ! -e ", dir, "/a.up ] || [ ! -e ",
                 dir, "/b.up ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 3; sleep 0.1; done");
    }
    return StageYaml(name, YamlList({"/bin/sh", "-c", script}), {}, {"resources: {gpus: 1}"});
  };
  Result<int64_t> id = cluster().Submit("name: gpus\nstages:\n" + stage("a", true) +
                                        stage("b", true) + stage("c", false));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 180'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  std::map<std::string, std::string> cvd;
  for (const char* name : {"a", "b", "c"}) {
    std::string v = ReadText(StrCat(dir, "/", name, ".cvd"));
    while (!v.empty() && v.back() == '\n') v.pop_back();
    EXPECT_TRUE(v == "0" || v == "1") << name << " saw CUDA_VISIBLE_DEVICES='" << v << "'";
    cvd[name] = v;
  }
  EXPECT_NE(cvd["a"], cvd["b"]) << "a and b ran at the same time on the same GPU";
}

// Under task/cgroup (deploy/slurm-local.sh uses it where the cgroup v1 memory controller is
// mounted) a stage over its memory is killed by the kernel, Slurm ends the job OUT_OF_MEMORY,
// and the attempt fails `oom`, which the default retry policy does not retry.
TEST_F(SlurmTest, AStageOverItsMemoryEndsOutOfMemoryAndIsNotRetried) {
  CommandResult config = RunCommand({"/usr/bin/env", "scontrol", "show", "config"}, {}, 10'000);
  if (config.out.find("task/cgroup") == std::string::npos) {
    GTEST_SKIP() << "the local Slurm does not enforce memory (TaskPlugin is not task/cgroup; "
                    "deploy/slurm-local.sh uses it only with the cgroup v1 memory controller)";
  }
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());
  Result<int64_t> id = cluster().Submit(
      "name: hungry\nstages:\n" +
      StageYaml(
          "hungry",
          YamlList({"python3", "-c", "import time; b = bytearray(400 << 20); time.sleep(30)"}), {},
          {"resources: {memory: 64M}", "retry: {limit: 2, backoff: 1s}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 120'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);
  const v1::Stage* s = FindStage(*run, "hungry");
  ASSERT_EQ(s->attempts_size(), 1) << "oom is not in retry.on by default: " << DescribeRun(*run);
  std::string job = JobIdOf(s->attempts(0).id());
  EXPECT_EQ(s->attempts(0).reason(), StrCat("out of memory (Slurm job ", job, " OUT_OF_MEMORY)"))
      << DescribeRun(*run);
  CommandResult show = RunCommand({"/usr/bin/env", "scontrol", "show", "job", job}, {}, 10'000);
  EXPECT_THAT(show.out, ::testing::HasSubstr("JobState=OUT_OF_MEMORY"));
}

}  // namespace
}  // namespace longhaul::testing
