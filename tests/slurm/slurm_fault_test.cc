// Faults of the real local Slurm (deploy/slurm-local.sh) under longhaul-agent --executor slurm
// (docs/slurm.md, "Faults"):
//   - Slurm's time limit (the stage's longer timeout capped at the partition's MaxTime) ends
//     an attempt that checkpoints: `timeout`, and the next attempt
//     resumes (LONGHAUL_RESUME=1) where the checkpoint says;
//   - `kill -9 slurmd`: no second job while Slurm still says the first runs; once the node is
//     DOWN the attempt ends node_fail and is retried outside retry.limit;
//   - the agent killed right after an sbatch, then `kill -9 slurmctld` for kOutage while the
//     job runs and another run is submitted: nothing fails, every attempt is one Slurm job.
// Killing Slurm's daemons needs root (they run as root); the tests skip without it. Each test
// brings the daemons back (`slurm-local.sh revive`) so that the next one finds the node idle.
#include <signal.h>
#include <unistd.h>

#include "tests/slurm/slurm_fixture.h"

namespace longhaul::testing {
namespace {

// How long slurmctld stays down: the product's promise, 2 minutes (every poll during it fails,
// and the squeue back-off reaches its 2-minute cap).
constexpr int64_t kOutageMs = 120'000;

std::string SlurmDir() {
  const char* d = std::getenv("LONGHAUL_SLURM_DIR");
  return d != nullptr && *d != '\0' ? d : "/var/tmp/longhaul-slurm";
}

pid_t DaemonPid(const std::string& name) {
  std::string t = ReadText(StrCat(SlurmDir(), "/run/", name, ".pid"));
  return t.empty() ? 0 : static_cast<pid_t>(std::stol(t));
}

// Modification time of `path` in ns since the epoch, 0 when it cannot be read.
int64_t MtimeNs(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// squeue's "STATE" of job `job` (all states), "" when it does not list it or fails.
std::string JobState(const std::string& job) {
  CommandResult r =
      RunCommand({"/usr/bin/env", "squeue", "-h", "-t", "all", "-j", job, "-o", "%T"}, {}, 30'000);
  std::string s = r.exit_code == 0 ? r.out : "";
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

// The Slurm jobs named lh-<attempt id> in `attempt_dir` (all states; earlier tests' attempts
// of the same id ran in other dirs).
std::vector<std::string> JobsOf(int64_t attempt_id, const std::string& attempt_dir) {
  CommandResult r = RunCommand({"/usr/bin/env", "squeue", "-h", "-t", "all",
                                StrCat("--name=lh-", attempt_id), "-o", "%i|%Z"},
                               {}, 30'000);
  std::vector<std::string> ids;
  for (const auto& l : StrSplit(r.out, '\n')) {
    size_t bar = l.find('|');
    if (bar != std::string::npos && l.substr(bar + 1) == attempt_dir) ids.push_back(l);
  }
  return ids;
}

class SlurmFaultTest : public SlurmTest {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "killing Slurm's daemons needs root";
    SlurmTest::SetUp();
  }

  void TearDown() override {
    // Whatever a failed test left down; a skipped one (no local Slurm) touched nothing.
    if (!IsSkipped()) Revive();
    if (!old_path_.empty()) ::setenv("PATH", old_path_.c_str(), 1);
    SlurmTest::TearDown();
  }

  void Kill(const std::string& daemon) {
    pid_t pid = DaemonPid(daemon);
    ASSERT_GT(pid, 0) << daemon << " has no pid file under " << SlurmDir();
    ASSERT_EQ(::kill(pid, SIGKILL), 0) << daemon;
  }

  // Starts the daemons that do not run, keeping the controller's jobs, and resumes the node.
  void Revive() {
    CommandResult r = RunCommand({SourceDir() + "/deploy/slurm-local.sh", "revive"}, {}, 90'000);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // sbatch through a wrapper first on PATH: each call appends "EXIT JOBID" to sbatch_log_;
  // after a successful one, if kill_file_ holds a pid, that process gets SIGKILL (the file
  // is removed first: once).
  void WrapSbatch() {
    std::string real = RunCommand({"/bin/sh", "-c", "command -v sbatch"}).out;
    while (!real.empty() && real.back() == '\n') real.pop_back();
    ASSERT_FALSE(real.empty());
    sbatch_log_ = wrap_.Join("sbatch.log");
    kill_file_ = wrap_.Join("kill-after-sbatch");
    std::ofstream w(wrap_.Join("sbatch"));
    w << "#!/bin/sh\nout=$('" << real << "' \"$@\")\nrc=$?\n"
      << "echo \"$rc $out\" >> '" << sbatch_log_ << "'\n"
      << "if [ $rc -eq 0 ] && [ -s '" << kill_file_ << "' ]; then\n"
      << "  pid=$(cat '" << kill_file_ << "'); rm -f '" << kill_file_ << "'; kill -9 $pid\n"
      << "fi\nprintf '%s\\n' \"$out\"\nexit $rc\n";
    w.close();
    ::chmod(wrap_.Join("sbatch").c_str(), 0755);
    old_path_ = std::getenv("PATH");
    ::setenv("PATH", StrCat(wrap_.path(), ":", old_path_).c_str(), 1);
  }

  // Job ids of the successful sbatch calls.
  std::vector<std::string> Submitted() {
    std::vector<std::string> ids;
    for (const auto& l : StrSplit(ReadText(sbatch_log_), '\n')) {
      if (StartsWith(l, "0 ")) ids.push_back(l.substr(2));
    }
    return ids;
  }

  TempDir wrap_;
  std::string sbatch_log_, kill_file_, old_path_;
};

TEST_F(SlurmFaultTest, SlurmTimeLimitEndsAnAttemptAsTimeoutAndTheNextResumesFromItsCheckpoint) {
  // Partition `short` gives every job 1 minute; USR1 comes 40 s before it, at slurmctld's
  // time-limit check (every 30 s). That check sends the signal as soon as the lead plus its
  // own period covers the time left (40 + 30 > 60): at its first pass after the job starts,
  // 0 to 30 s in. So attempt 1 may be cut before its first checkpoint (seen: after 1 s); the
  // attempts after it start just after a pass and run about 28 s. The work takes 55 s, so at
  // least one cut happens and at most four attempts finish it.
  // The stage's own timeout, 5 minutes, is over the partition's MaxTime: the agent caps
  // --time at 1 minute, or the job would stay PENDING (PartitionTimeLimit) and never run.
  ASSERT_NO_FATAL_FAILURE(
      StartSlurmCluster({"--slurm-partition", "short", "--slurm-signal-lead", "40s"}));
  constexpr int kItems = 110;
  Result<int64_t> id = cluster().Submit(
      "name: walltime\nstages:\n" +
      StageYaml("train",
                YamlList({BinPath("lh-testjob"), "--work", std::to_string(kItems), "--step-ms",
                          "500", "--checkpoint-every", "5"}),
                {}, {"timeout: 5m", "resume: true", "retry: {limit: 4, backoff: 1s}"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 300'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);
  const v1::Stage* st = FindStage(*run, "train");
  ASSERT_GE(st->attempts_size(), 2) << "Slurm's limit never cut the work: " << DescribeRun(*run);
  const v1::Attempt& first = st->attempts(0);
  EXPECT_EQ(first.state(), v1::ATTEMPT_KILLED) << DescribeRun(*run);
  EXPECT_TRUE(StartsWith(first.reason(), StrCat("timeout (Slurm job ", JobIdOf(first.id()))))
      << first.reason();
  // A later attempt resumed after an earlier one's last checkpoint, not from item 1 (attempt
  // 2 starts afresh when attempt 1 was cut before its first checkpoint).
  std::string errs;
  bool resumed = false;
  for (int i = 1; i < st->attempts_size(); ++i) {
    std::string err = ReadText(
        StrCat(cluster().AgentStateDir(0), "/attempts/", st->attempts(i).id(), "/stderr.log"));
    resumed = resumed || (err.find("lh-testjob: resuming after item ") != std::string::npos &&
                          err.find("resuming after item 0\n") == std::string::npos);
    errs += StrCat("--- attempt ", i + 1, ":\n", err);
  }
  EXPECT_TRUE(resumed) << errs;
  EXPECT_EQ(st->progress().done(), kItems);
  // Every item done exactly once over the attempts.
  CommandResult done = RunCommand(
      {"/bin/sh", "-c", StrCat("cat $(find ", cluster().AgentStateDir(0), " -name done.txt)")});
  std::vector<std::string> lines = StrSplit(done.out, '\n');
  ASSERT_EQ(lines.size(), static_cast<size_t>(kItems) + 1) << done.out;
  for (int i = 0; i < kItems; ++i) EXPECT_EQ(lines[i], std::to_string(i + 1));
}

TEST_F(SlurmFaultTest, KilledSlurmdIsNodeFailOnlyOnceSlurmSaysSoAndRetriedOnTheInfraBudget) {
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());
  int64_t id = 0;
  std::string job;
  ASSERT_NO_FATAL_FAILURE(StartLongStage(&id, &job, {"retry: {limit: 0, backoff: 1s}"}));
  Result<v1::Run> before = cluster().GetRun(id);
  ASSERT_TRUE(before.ok());
  int64_t first_id = Current(*before, "long")->id();
  ASSERT_NO_FATAL_FAILURE(Kill("slurmd"));
  // The stage still runs (slurmstepd outlives slurmd), and Slurm says RUNNING until the node
  // is DOWN (SlurmdTimeout=10 s): no second job meanwhile.
  std::string state;
  int polls_running = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        state = JobState(job);
        if (state == "RUNNING") {
          ++polls_running;
          Result<v1::Run> r = cluster().GetRun(id);
          EXPECT_TRUE(r.ok());
          if (r.ok()) {
            EXPECT_EQ(FindStage(*r, "long")->attempts_size(), 1)
                << "a second attempt while Slurm runs the first: " << DescribeRun(*r);
          }
        }
        return state == "NODE_FAIL";
      },
      120'000, 500))
      << "job " << job << " is " << state;
  EXPECT_GT(polls_running, 0);
  ASSERT_NO_FATAL_FAILURE(Revive());
  Result<v1::Run> run = cluster().WaitForRun(
      id,
      [](const v1::Run& r) {
        const v1::Stage* s = FindStage(r, "long");
        return s->attempts_size() >= 2 && s->attempts(1).state() != v1::ATTEMPT_STARTING;
      },
      90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  const v1::Attempt& a = FindStage(*run, "long")->attempts(0);
  EXPECT_EQ(a.id(), first_id);
  EXPECT_EQ(a.state(), v1::ATTEMPT_KILLED) << DescribeRun(*run);
  EXPECT_EQ(a.reason(), StrCat("node failure (Slurm job ", job, " NODE_FAIL)"))
      << DescribeRun(*run);
  // The retry (retry.limit 0: on the infrastructure budget) excludes the failed node, the
  // only one of this cluster: Slurm refuses it, and says so.
  const v1::Attempt& retry = FindStage(*run, "long")->attempts(1);
  EXPECT_NE(retry.reason().find("Requested node configuration is not available"), std::string::npos)
      << DescribeRun(*run);
  // The first copy's stage is stopped once slurmd is back.
  std::string pid_json =
      ReadText(StrCat(cluster().AgentStateDir(0), "/attempts/", first_id, "/pid.json"));
  size_t at = pid_json.find("\"stage_pid\":");
  ASSERT_NE(at, std::string::npos) << pid_json;
  pid_t stage = static_cast<pid_t>(std::stol(pid_json.substr(at + 12)));
  EXPECT_TRUE(WaitFor([&] { return ::kill(stage, 0) != 0; }, 60'000, 500))
      << "the first attempt's stage (pid " << stage << ") still runs after slurmd came back";
  cluster().Cli({"cancel", std::to_string(id)});
}

TEST_F(SlurmFaultTest, SlurmctldDownAndAnAgentKilledAfterSbatchLoseNothingAndSubmitOnce) {
  ASSERT_NO_FATAL_FAILURE(WrapSbatch());
  ASSERT_NO_FATAL_FAILURE(StartSlurmCluster());
  // The agent dies as soon as sbatch has submitted `a`, before it can record the job id.
  {
    std::ofstream k(kill_file_);
    k << cluster().agent_pid(0) << "\n";
  }
  Result<int64_t> id = cluster().Submit(
      "name: outage\nstages:\n" +
      StageYaml("a", YamlList({BinPath("lh-testjob"), "--sleep", "15", "--progress", "3"})) +
      StageYaml("b", YamlList({BinPath("lh-testjob"), "--exit", "0"}), {"a"}));
  ASSERT_TRUE(id.ok()) << id.status().message();
  ASSERT_TRUE(WaitFor([&] { return !cluster().AgentRunning(0); }, 60'000, 100))
      << "sbatch was not called";
  ASSERT_EQ(Submitted().size(), 1u);
  // Back at once (a longer silence is an agent lost, another fault): it must find lh-<a>
  // by name, not submit it again.
  Status restarted = cluster().RestartAgent(0);
  ASSERT_TRUE(restarted.ok()) << restarted.message();
  Result<v1::Run> run = cluster().GetRun(*id);
  ASSERT_TRUE(run.ok());
  int64_t a_id = Current(*run, "a")->id();
  std::string job = Submitted()[0];
  ASSERT_TRUE(WaitFor([&] { return JobState(job) == "RUNNING"; }, 60'000, 200));
  // slurmctld saves its jobs every few seconds: killed before it saved `a` running, it would
  // recover `a` as pending and start it a second time (Slurm's own doing: seen here as
  // "Duplicate jobid on nodes vm, set to state DRAIN"). So it dies once the state is saved.
  int64_t running_seen = NowNs();
  std::string job_state = StrCat(SlurmDir(), "/state/job_state");
  ASSERT_TRUE(WaitFor([&] { return MtimeNs(job_state) > running_seen; }, 60'000, 100))
      << job_state << " was not written";
  // Now slurmctld dies while `a` runs, and a second run is submitted during the outage.
  ASSERT_NO_FATAL_FAILURE(Kill("slurmctld"));
  auto down_at = std::chrono::steady_clock::now();
  Result<int64_t> id2 = cluster().Submit(
      "name: during\nstages:\n" + StageYaml("c", YamlList({BinPath("lh-testjob"), "--exit", "0"})));
  ASSERT_TRUE(id2.ok()) << id2.status().message();
  // Nothing fails while slurmctld is down: every poll and sbatch fails, which is "unknown".
  int checks = 0;
  while (std::chrono::steady_clock::now() < down_at + std::chrono::milliseconds(kOutageMs)) {
    for (int64_t r : {*id, *id2}) {
      Result<v1::Run> now = cluster().GetRun(r);
      ASSERT_TRUE(now.ok());
      ASSERT_EQ(now->status(), v1::RUN_RUNNING) << DescribeRun(*now);
      for (const auto& st : now->stages()) {
        ASSERT_LE(st.attempts_size(), 1) << DescribeRun(*now);
      }
    }
    ++checks;
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // the outage's length
  }
  EXPECT_GT(checks, 10);
  EXPECT_EQ(Submitted().size(), 1u) << "sbatch cannot succeed without slurmctld";
  ASSERT_NO_FATAL_FAILURE(Revive());
  for (int64_t r : {*id, *id2}) {
    Result<v1::Run> end = cluster().WaitForRunEnd(r, 120'000);
    ASSERT_TRUE(end.ok()) << end.status().message();
    EXPECT_EQ(end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*end);
    for (const auto& st : end->stages()) {
      ASSERT_EQ(st.attempts_size(), 1) << DescribeRun(*end);
      int64_t aid = st.attempts(0).id();
      EXPECT_EQ(JobsOf(aid, StrCat(cluster().AgentStateDir(0), "/attempts/", aid)).size(), 1u)
          << "stage " << st.name() << ": one Slurm job per attempt";
    }
  }
  EXPECT_EQ(Submitted().size(), 3u) << ReadText(sbatch_log_);
  EXPECT_EQ(JobIdOf(a_id), job) << "the restarted agent adopted the job it found by name";
}

}  // namespace
}  // namespace longhaul::testing
