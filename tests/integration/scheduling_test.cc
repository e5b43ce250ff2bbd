// Shared GPU nodes with real daemons (docs/scheduling.md): on one agent with one fake GPU, a
// high-class run submitted after a low-class one starts first, and the low one's wait reason
// says who is ahead; a run with a tiny GPU-hour budget pauses with the reason and continues
// after `longhaul budget`; a high-class run preempts a low-class training stage, which resumes
// from its checkpoint once the high run is done; a class changed after submission moves a run
// in the queue, by the same --priority-allow rules as a submission's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using ::testing::HasSubstr;

// The blocker holds the GPU for the whole test: a higher class waits for it instead of
// preempting it (docs/scheduling.md, "Preemption").
constexpr char kNotPreemptible[] = "defaults: {preemptible: false}\n";

std::string OneGpuWorkflow(const std::string& name, int seconds, const std::string& extra = "") {
  return StrCat(
      "name: ", name, "\n", extra, "stages:\n",
      StageYaml("work", YamlList({BinPath("lh-testjob"), "--sleep", std::to_string(seconds)}), {},
                {"resources: {gpus: 1, cpus: 1}"}));
}

class SchedulingTest : public ClusterTest {
 protected:
  void StartOneGpu() {
    ClusterOptions o;
    o.agents = 1;
    o.cpus = 1;
    o.gpus = 1;
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  }
  // `longhaul submit FILE ARGS...`: the new run's id (0 on failure, reported).
  int64_t CliSubmit(const std::string& yaml, const std::string& file,
                    std::vector<std::string> args = {}) {
    std::vector<std::string> argv = {"submit", cluster().WriteFile(file, yaml)};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = cluster().Cli(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? std::stoll(r.out) : 0;
  }
  // A low-class `training` (stage train, lh-testjob --work into done.txt) preempted by a
  // 1-GPU high run once it has done 5 items; both must succeed, the training in two attempts.
  struct Preempted {
    int64_t low = 0;
    int64_t high = 0;
    v1::Attempt first;  // the training's first attempt while it ran
    v1::Run low_end;
    v1::Run high_end;
  };
  void RunPreempted(const std::string& training, Preempted* p) {
    p->low = CliSubmit(training, "training.yaml", {"--priority", "low"});
    ASSERT_GT(p->low, 0);
    Result<v1::Run> running = cluster().WaitForRun(p->low, [](const v1::Run& r) {
      const v1::Attempt* a = FindAttempt(r, "train", 1);
      return a != nullptr && a->state() == v1::ATTEMPT_RUNNING;
    });
    ASSERT_TRUE(running.ok()) << running.status().message();
    p->first = *FindAttempt(*running, "train", 1);
    std::string done_txt = p->first.output_dir() + "/done.txt";
    ASSERT_TRUE(WaitFor([&] { return NonBlankLines(done_txt, nullptr).size() >= 5; }, 20'000));

    // The high run's stage needs the only GPU: the training is stopped for it.
    p->high = CliSubmit(OneGpuWorkflow("urgent", 1), "urgent.yaml", {"--priority", "high"});
    ASSERT_GT(p->high, 0);
    Result<v1::Run> high_end = cluster().WaitForRunEnd(p->high, 60'000);
    ASSERT_TRUE(high_end.ok()) << high_end.status().message();
    EXPECT_EQ(high_end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*high_end);
    p->high_end = *high_end;
    Result<v1::Run> low_end = cluster().WaitForRunEnd(p->low, 60'000);
    ASSERT_TRUE(low_end.ok()) << low_end.status().message();
    ASSERT_EQ(low_end->status(), v1::RUN_SUCCEEDED) << DescribeRun(*low_end);
    ASSERT_EQ(FindStage(*low_end, "train")->attempts_size(), 2) << DescribeRun(*low_end);
    p->low_end = *low_end;
  }
};

TEST_F(SchedulingTest, AHighClassRunSubmittedLaterStartsBeforeALowOne) {
  ASSERT_NO_FATAL_FAILURE(StartOneGpu());
  int64_t blocker = CliSubmit(OneGpuWorkflow("blocker", 120, kNotPreemptible), "blocker.yaml");
  ASSERT_GT(blocker, 0);
  ASSERT_TRUE(cluster()
                  .WaitForRun(blocker,
                              [](const v1::Run& r) {
                                return FindStage(r, "work")->status() == v1::STAGE_RUNNING;
                              })
                  .ok());
  int64_t low = CliSubmit(OneGpuWorkflow("later", 1), "low.yaml", {"--priority", "low"});
  int64_t high = CliSubmit(OneGpuWorkflow("urgent", 120), "high.yaml", {"--priority", "high"});
  ASSERT_GT(low, 0);
  ASSERT_GT(high, 0);
  ASSERT_LT(low, high) << "the low run is the older one";

  // Both wait; the low one says the high one is ahead of it.
  std::string ahead = StrCat("2nd in line for 1 GPUs; ahead: run ", high, " (high)");
  Result<v1::Run> waiting = cluster().WaitForRun(low, [&](const v1::Run& r) {
    return r.stages(0).status() == v1::STAGE_READY &&
           r.stages(0).reason().find(ahead) != std::string::npos;
  });
  ASSERT_TRUE(waiting.ok()) << waiting.status().message();

  CommandResult runs = cluster().Cli({"runs"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_THAT(runs.out, HasSubstr("USER"));
  EXPECT_THAT(runs.out, HasSubstr("CLASS"));
  Result<v1::Run> high_run = cluster().GetRun(high);
  ASSERT_TRUE(high_run.ok());
  EXPECT_EQ(high_run->priority(), "high");
  EXPECT_EQ(high_run->user(), "local") << "without --tokens the caller is local";

  // The GPU frees: the high run takes it, the older low run waits on.
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(blocker)});
  ASSERT_EQ(cancel.exit_code, 0) << cancel.err;
  Result<v1::Run> started = cluster().WaitForRun(
      high, [](const v1::Run& r) { return r.stages(0).status() == v1::STAGE_RUNNING; });
  ASSERT_TRUE(started.ok()) << started.status().message();
  Result<v1::Run> still = cluster().GetRun(low);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->stages(0).status(), v1::STAGE_READY);
  EXPECT_EQ(still->stages(0).attempt_count(), 0);

  ASSERT_EQ(cluster().Cli({"cancel", std::to_string(high)}).exit_code, 0);
  Result<v1::Run> low_end = cluster().WaitForRunEnd(low, 60'000);
  ASSERT_TRUE(low_end.ok()) << low_end.status().message();
  EXPECT_EQ(low_end->status(), v1::RUN_SUCCEEDED);
}

TEST_F(SchedulingTest, AnUnknownClassIsRefusedNamingIt) {
  ASSERT_NO_FATAL_FAILURE(StartOneGpu());
  std::string path =
      cluster().WriteFile("bad.yaml", OneGpuWorkflow("bad", 1, "priority: urgent\n"));
  CommandResult r = cluster().Cli({"submit", path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("priority: unknown class 'urgent' (high, normal or low)"));
}

TEST_F(SchedulingTest, ARunPausesAtItsBudgetAndContinuesWhenAnAdminRaisesIt) {
  ASSERT_NO_FATAL_FAILURE(StartOneGpu());
  // 0.0003 GPU-h is about 1.1 s of one GPU: the first stage (3 s) goes past it.
  std::string yaml = StrCat("name: budgeted\nbudget: {gpu_hours: 0.0003}\nstages:\n",
                            StageYaml("first", YamlList({BinPath("lh-testjob"), "--sleep", "3"}),
                                      {}, {"resources: {gpus: 1, cpus: 1}"}),
                            StageYaml("second", YamlList({BinPath("lh-testjob"), "--sleep", "0"}),
                                      {"first"}, {"resources: {gpus: 1, cpus: 1}"}));
  int64_t id = CliSubmit(yaml, "budgeted.yaml");
  ASSERT_GT(id, 0);
  // The running stage finishes; the next one waits for the budget.
  Result<v1::Run> paused = cluster().WaitForRun(id, [id](const v1::Run& r) {
    const v1::Stage* second = FindStage(r, "second");
    return FindStage(r, "first")->status() == v1::STAGE_SUCCEEDED &&
           second->status() == v1::STAGE_READY &&
           second->reason().starts_with(StrCat("run ", id, "'s budget of 0.0003 GPU-h reached ("));
  });
  ASSERT_TRUE(paused.ok()) << paused.status().message();
  EXPECT_TRUE(paused->budget().reached());
  EXPECT_EQ(FindStage(*paused, "second")->attempt_count(), 0);

  CommandResult show = cluster().Cli({"show", std::to_string(id)});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_THAT(show.out, HasSubstr("budget:"));
  EXPECT_THAT(show.out, HasSubstr("reached: no new attempts until an admin raises it"));
  CommandResult runs = cluster().Cli({"runs"});
  ASSERT_EQ(runs.exit_code, 0) << runs.err;
  EXPECT_THAT(runs.out,
              ::testing::ContainsRegex(StrCat(id, " +budgeted +running \\(paused: budget\\) ")));

  CommandResult raise = cluster().Cli({"budget", std::to_string(id), "--gpu-hours", "1"});
  ASSERT_EQ(raise.exit_code, 0) << raise.err;
  EXPECT_THAT(raise.out, HasSubstr("new attempts may start"));
  Result<v1::Run> ended = cluster().WaitForRunEnd(id, 60'000);
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  EXPECT_EQ(ended->status(), v1::RUN_SUCCEEDED);
  EXPECT_EQ(ended->budget().raised_by(), "local");
  Result<std::string> audit =
      cluster().Query("SELECT action || ' ' || target FROM audit WHERE action = 'SetRunBudget'");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_THAT(*audit, HasSubstr(StrCat("SetRunBudget run ", id)));
}

// The training stage lh-testjob --work: items 1..N appended to done.txt, a checkpoint file and
// event after each, resuming after the checkpoint's item with LONGHAUL_RESUME=1.
TEST_F(SchedulingTest, AHighRunPreemptsALowTrainingThatResumesFromItsCheckpoint) {
  ASSERT_NO_FATAL_FAILURE(StartOneGpu());
  constexpr int kItems = 30;  // 150 ms each
  std::string training = StrCat(
      "name: training\nstages:\n",
      StageYaml(
          "train",
          YamlList({BinPath("lh-testjob"), "--work", std::to_string(kItems), "--step-ms", "150"}),
          {}, {"resources: {gpus: 1, cpus: 1}", "resume: true", "grace: 5s"}));
  Preempted p;
  ASSERT_NO_FATAL_FAILURE(RunPreempted(training, &p));
  int64_t low = p.low;
  int64_t high = p.high;
  const v1::Attempt& first = p.first;
  std::string done_txt = first.output_dir() + "/done.txt";
  const v1::Run* high_end = &p.high_end;
  const v1::Run* low_end = &p.low_end;
  const v1::Stage* train = FindStage(*low_end, "train");
  const v1::Attempt& stopped = train->attempts(0);
  const v1::Attempt& resumed = train->attempts(1);
  EXPECT_EQ(stopped.state(), v1::ATTEMPT_KILLED);
  EXPECT_THAT(stopped.reason(),
              ::testing::MatchesRegex(StrCat("preempted: room for run ", high,
                                             " stage work \\(high\\); [0-9.]+ GPU-min after its "
                                             "last checkpoint")));
  EXPECT_EQ(resumed.state(), v1::ATTEMPT_EXITED);
  // The high run's stage ran in between: after the stop, before the resumption.
  const v1::Attempt& urgent = high_end->stages(0).attempts(0);
  EXPECT_GE(urgent.started_at_ms(), stopped.ended_at_ms());
  EXPECT_LE(urgent.ended_at_ms(), resumed.started_at_ms());

  // Every item exactly once, in order; the second attempt went on from the checkpoint.
  EXPECT_EQ(ReadTextFile(done_txt), [] {
    std::string out;
    for (int i = 1; i <= kItems; ++i) out += StrCat(i, "\n");
    return out;
  }());
  EXPECT_EQ(resumed.checkpoint(), first.output_dir() + "/checkpoint.txt");
  std::string err = ReadTextFile(AttemptDirOf(cluster(), resumed) + "/stderr.log");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(err, m, std::regex("resuming after item ([0-9]+)"))) << err;
  EXPECT_GE(std::stoi(m[1].str()), 4) << "it had done 5 items before it was stopped";
  EXPECT_LT(std::stoi(m[1].str()), kItems);

  // Recorded: the infrastructure retry, the audit trail, the metrics.
  Result<std::string> retries = cluster().Query(
      StrCat("SELECT infra_retries_used || ' ' || retries_used FROM stages WHERE run_id = ", low));
  ASSERT_TRUE(retries.ok()) << retries.status().message();
  EXPECT_EQ(StripWhitespace(*retries), "1 0");
  Result<std::string> audit =
      cluster().Query("SELECT action || ' ' || target FROM audit WHERE action = 'PreemptAttempt'");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_EQ(StripWhitespace(*audit), StrCat("PreemptAttempt run ", low, " stage train attempt 1"));
  Result<HttpResult> metrics = HttpGet(cluster().http_address(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->body, HasSubstr("longhaul_preemptions_total{class=\"low\"} 1\n"));
  EXPECT_THAT(metrics->body, HasSubstr("longhaul_preemption_lost_gpu_seconds_total "));
}

TEST_F(SchedulingTest, AStageWithAPreemptNoticeCheckpointsOnItAndResumesWithNoItemLostOrTwice) {
  ASSERT_NO_FATAL_FAILURE(StartOneGpu());
  constexpr int kItems = 30;  // 150 ms each; no checkpoint of its own before the last item
  std::string training = StrCat(
      "name: training\nstages:\n",
      StageYaml(
          "train",
          YamlList({BinPath("lh-testjob"), "--work", std::to_string(kItems), "--step-ms", "150",
                    "--checkpoint-every", "1000", "--checkpoint-on-usr1"}),
          {},
          {"resources: {gpus: 1, cpus: 1}", "resume: true", "grace: 5s", "preempt_notice: 30s"}));
  Preempted p;
  ASSERT_NO_FATAL_FAILURE(RunPreempted(training, &p));
  int64_t high = p.high;
  const v1::Attempt& first = p.first;
  std::string done_txt = first.output_dir() + "/done.txt";
  const v1::Stage* train = FindStage(p.low_end, "train");
  const v1::Attempt& stopped = train->attempts(0);
  const v1::Attempt& resumed = train->attempts(1);
  EXPECT_EQ(stopped.state(), v1::ATTEMPT_KILLED);
  // Stopped at the checkpoint it wrote on the notice, well before the notice's 30 s.
  EXPECT_THAT(stopped.reason(),
              ::testing::MatchesRegex(StrCat("preempted: room for run ", high,
                                             " stage work \\(high\\); at the checkpoint it wrote "
                                             "on notice; [0-9.]+ GPU-min after its last "
                                             "checkpoint")));
  EXPECT_LT(stopped.ended_at_ms() - first.started_at_ms(), 25'000);

  // The item it checkpointed on the notice is the one the next attempt resumed after.
  std::string err1 = ReadTextFile(AttemptDirOf(cluster(), stopped) + "/stderr.log");
  std::string err2 = ReadTextFile(AttemptDirOf(cluster(), resumed) + "/stderr.log");
  std::smatch noticed, resumed_after;
  ASSERT_TRUE(
      std::regex_search(err1, noticed, std::regex("checkpoint on notice after item ([0-9]+)")))
      << err1;
  ASSERT_TRUE(std::regex_search(err2, resumed_after, std::regex("resuming after item ([0-9]+)")))
      << err2;
  EXPECT_EQ(noticed[1].str(), resumed_after[1].str());
  EXPECT_GE(std::stoi(noticed[1].str()), 5);
  EXPECT_LT(std::stoi(noticed[1].str()), kItems);
  // Every item exactly once, in order: none lost, none done twice.
  EXPECT_EQ(ReadTextFile(done_txt), [] {
    std::string out;
    for (int i = 1; i <= kItems; ++i) out += StrCat(i, "\n");
    return out;
  }());
  // The notice reached the stage as a control line too.
  std::string control = ReadTextFile(AttemptDirOf(cluster(), stopped) + "/control.jsonl");
  EXPECT_THAT(control, HasSubstr(R"({"preempt":{"deadline_ms":)"));
  EXPECT_THAT(control, HasSubstr(StrCat("preempted: room for run ", high, " stage work (high)")));
}

TEST_F(SchedulingTest, AClassChangedAfterSubmissionMovesTheRunInTheQueueByTheSameRules) {
  TempDir dir;
  Tokens t = MakeTokens(dir, {{"operator", "olga"}, {"admin", "ada"}});
  ClusterOptions o;
  o.cpus = 1;
  o.gpus = 1;
  o.coordinator_flags = {"--tokens", t.file, "--priority-allow", "high=user:boss"};
  o.client_token = t.by_name["olga"];
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  int64_t blocker = CliSubmit(OneGpuWorkflow("blocker", 120, kNotPreemptible), "blocker.yaml");
  ASSERT_GT(blocker, 0);
  ASSERT_TRUE(
      cluster()
          .WaitForRun(blocker,
                      [](const v1::Run& r) { return r.stages(0).status() == v1::STAGE_RUNNING; })
          .ok());
  int64_t older = CliSubmit(OneGpuWorkflow("older", 1), "older.yaml");
  int64_t younger = CliSubmit(OneGpuWorkflow("younger", 120), "younger.yaml");
  ASSERT_GT(older, 0);
  ASSERT_GT(younger, 0);

  // olga (operator) may not use high: the rule names boss only.
  CommandResult denied = cluster().Cli({"priority", std::to_string(younger), "high"});
  EXPECT_EQ(denied.exit_code, 7) << denied.err;
  EXPECT_EQ(denied.err,
            "longhaul: permission denied: priority class 'high' is not allowed for olga "
            "(operator): longhauld allows it only to user:boss (--priority-allow "
            "high=user:boss)\n");
  Result<v1::Run> unchanged = cluster().GetRun(younger);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_EQ(unchanged->priority(), "normal");
  // low is open to anyone.
  CommandResult lowered = cluster().Cli({"priority", std::to_string(blocker), "low"});
  EXPECT_EQ(lowered.exit_code, 0) << lowered.err;
  EXPECT_EQ(lowered.out, StrCat("run ", blocker,
                                ": class low; its waiting stages take their place in the queue, "
                                "running attempts go on\n"));

  // ada, an admin, may whatever the rule says; over HTTP here.
  Result<HttpResult> raised =
      HttpRequest(cluster().http_address(), "POST", StrCat("/api/v1/runs/", younger, "/priority"),
                  R"({"priority": "high"})", {{"Authorization", "Bearer " + t.by_name["ada"]}});
  ASSERT_TRUE(raised.ok()) << raised.status().message();
  EXPECT_EQ(raised->status, 200) << raised->body;
  EXPECT_THAT(raised->body, HasSubstr(R"("priority":"high")"));

  // The blocker, now low, keeps its GPU. When it frees, the younger run, now high, takes it.
  Result<v1::Run> still = cluster().GetRun(blocker);
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->stages(0).status(), v1::STAGE_RUNNING);
  EXPECT_EQ(still->stages(0).attempt_count(), 1);
  ASSERT_EQ(cluster().Cli({"cancel", std::to_string(blocker)}).exit_code, 0);
  Result<v1::Run> started = cluster().WaitForRun(
      younger, [](const v1::Run& r) { return r.stages(0).status() == v1::STAGE_RUNNING; });
  ASSERT_TRUE(started.ok()) << started.status().message();
  Result<v1::Run> waiting = cluster().GetRun(older);
  ASSERT_TRUE(waiting.ok());
  EXPECT_EQ(waiting->stages(0).status(), v1::STAGE_READY);
  EXPECT_EQ(waiting->stages(0).attempt_count(), 0);

  Result<std::string> audit = cluster().Query(
      "SELECT principal || ' ' || target || ' ' || detail || ' ' || result FROM audit "
      "WHERE action = 'SetRunPriority' ORDER BY id");
  ASSERT_TRUE(audit.ok()) << audit.status().message();
  EXPECT_THAT(*audit, HasSubstr(StrCat("olga run ", younger,
                                       " class high PERMISSION_DENIED: priority class 'high'")));
  EXPECT_THAT(*audit, HasSubstr(StrCat("olga run ", blocker, " class low OK")));
  EXPECT_THAT(*audit, HasSubstr(StrCat("ada run ", younger, " class high OK")));
  ASSERT_EQ(cluster().Cli({"cancel", std::to_string(younger)}).exit_code, 0);
}

}  // namespace
}  // namespace longhaul::testing
