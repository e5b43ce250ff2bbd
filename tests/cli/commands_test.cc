// Commands run in-process against a scripted Coordinator, with a fake clock and sleeps that
// only move it: reconnecting watches and logs that outlast a coordinator restart, and `show`.
#include "cli/commands.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <sstream>

#include "cli/coordinator.h"
#include "cli/format.h"
#include "core/strings.h"
#include "daemon/workflow/cache_key.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// GetRun, WatchRun and ReadLog answer from scripts; every other call is unexpected.
class ScriptedCoordinator : public Coordinator {
 public:
  struct WatchCall {
    std::vector<v1::RunUpdate> updates;
    Status end;
  };
  std::deque<WatchCall> watch_calls;
  std::deque<Result<v1::ReadLogResponse>> log_answers;
  int watch_count = 0;
  std::map<int64_t, v1::Run> runs;

  Result<v1::SubmitRunResponse> SubmitRun(const v1::SubmitRunRequest&) override {
    return absl::UnimplementedError("");
  }
  Result<v1::Run> GetRun(const v1::GetRunRequest& req) override {
    auto it = runs.find(req.id());
    if (it == runs.end()) return absl::NotFoundError("no run");
    return it->second;
  }
  Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest&) override {
    v1::ListRunsResponse resp;
    for (const auto& [id, run] : runs) *resp.add_runs() = run;
    return resp;
  }
  Result<v1::Run> CancelRun(const v1::CancelRunRequest&) override {
    return absl::UnimplementedError("");
  }
  Result<v1::Run> RetryStage(const v1::RetryStageRequest&) override {
    return absl::UnimplementedError("");
  }
  Result<v1::ListAgentsResponse> ListAgents() override { return absl::UnimplementedError(""); }
  Result<v1::ReadLogResponse> ReadLog(const v1::ReadLogRequest&) override {
    if (log_answers.empty()) return absl::InternalError("script ran out");
    auto answer = log_answers.front();
    log_answers.pop_front();
    return answer;
  }
  Status WatchRun(int64_t, const std::function<void(const v1::RunUpdate&)>& on_update) override {
    ++watch_count;
    if (watch_calls.empty()) return Unreachable();
    WatchCall call = watch_calls.front();
    watch_calls.pop_front();
    for (const auto& u : call.updates) on_update(u);
    return call.end;
  }
  std::string address() const override { return "fake:1"; }

  static Status Unreachable() {
    return MarkCoordinatorUnreachable(
        absl::UnavailableError("cannot reach the coordinator at fake:1: connection refused"));
  }
};

class CommandsTest : public ::testing::Test {
 protected:
  CommandsTest() {
    env_.out = &out_;
    env_.err = &err_;
    env_.clock = &clock_;
    env_.sleep_ms = [this](int64_t ms) {
      slept_ms_ += ms;
      clock_.AdvanceMs(ms);
    };
    auto coordinator = std::make_unique<ScriptedCoordinator>();
    coordinator_ = coordinator.get();
    ctx_.coordinator = std::move(coordinator);
  }

  static v1::RunUpdate Update(v1::RunStatus status, bool snapshot) {
    v1::RunUpdate u;
    u.set_snapshot(snapshot);
    u.mutable_run()->set_id(5);
    u.mutable_run()->set_status(status);
    return u;
  }

  std::ostringstream out_, err_;
  testing::FakeClock clock_;
  int64_t slept_ms_ = 0;
  CliEnv env_;
  CommandContext ctx_{env_, "fake:1", false, nullptr};
  ScriptedCoordinator* coordinator_;
};

TEST_F(CommandsTest, WatchReconnectsAfterTheCoordinatorGoesAway) {
  coordinator_->watch_calls.push_back(
      {{Update(v1::RUN_RUNNING, true)}, absl::UnavailableError("Socket closed")});
  coordinator_->watch_calls.push_back({{}, ScriptedCoordinator::Unreachable()});
  coordinator_->watch_calls.push_back(
      {{Update(v1::RUN_RUNNING, true), Update(v1::RUN_SUCCEEDED, false)}, OkStatus()});
  EXPECT_EQ(Watch(ctx_, 5), 0) << err_.str();
  EXPECT_EQ(coordinator_->watch_count, 3);
  EXPECT_THAT(err_.str(), HasSubstr("lost the watch on run 5 (Socket closed); reconnecting"));
  EXPECT_EQ(slept_ms_, 200 + 400);
  EXPECT_THAT(out_.str(), HasSubstr("run 5 succeeded"));
}

TEST_F(CommandsTest, WatchGivesUpAfterFiveMinutesAway) {
  coordinator_->watch_calls.push_back(
      {{Update(v1::RUN_RUNNING, true)}, absl::UnavailableError("Socket closed")});
  // Every later call: unreachable.
  EXPECT_EQ(Watch(ctx_, 5), 4);
  EXPECT_GT(slept_ms_, 5 * 60'000);
  EXPECT_LT(slept_ms_, 6 * 60'000);
  EXPECT_THAT(err_.str(), HasSubstr("longhaul: cannot reach the coordinator at fake:1"));
}

TEST_F(CommandsTest, WatchFailsAtOnceWhenTheFirstCallFails) {
  EXPECT_EQ(Watch(ctx_, 5), 4);
  EXPECT_EQ(coordinator_->watch_count, 1);
  EXPECT_EQ(slept_ms_, 0);
}

TEST_F(CommandsTest, LogsFollowOutlastsACoordinatorRestart) {
  v1::ReadLogResponse first;
  first.set_data("a\n");
  first.set_next_offset(2);
  first.set_attempt(1);
  v1::ReadLogResponse end;
  end.set_next_offset(2);
  end.set_finished(true);
  coordinator_->log_answers = {first, ScriptedCoordinator::Unreachable(),
                               ScriptedCoordinator::Unreachable(), end};
  LogsOptions options;
  options.run_id = 5;
  options.stage = "s";
  options.follow = true;
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  EXPECT_EQ(out_.str(), "a\n");
  // The note once, not once per retry; then that reading resumed.
  std::string err = err_.str();
  size_t note = err.find("cannot reach the coordinator at fake:1");
  ASSERT_NE(note, std::string::npos);
  EXPECT_EQ(err.find("cannot reach the coordinator", note + 1), std::string::npos) << err;
  EXPECT_THAT(err, HasSubstr("reading the log again"));
}

TEST_F(CommandsTest, LogsOnATerminalAreEscapedUnlessRaw) {
  v1::ReadLogResponse first;
  first.set_data("\x1b]0;pwned\a\x1b[31mred\tline\n\xe2");
  first.set_next_offset(20);
  first.set_attempt(1);
  v1::ReadLogResponse second;
  second.set_data("\x82\xac euro\n");
  second.set_next_offset(30);
  second.set_attempt(1);
  v1::ReadLogResponse end;
  end.set_next_offset(30);
  end.set_finished(true);
  LogsOptions options;
  options.run_id = 5;
  options.stage = "s";
  options.follow = true;
  env_.stdout_is_tty = true;
  coordinator_->log_answers = {first, second, end};
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  // The euro sign cut between two reads is whole; controls other than tab and newline shown.
  EXPECT_EQ(out_.str(), "\\e]0;pwned\\a\\e[31mred\tline\n\xe2\x82\xac euro\n");

  out_.str("");
  options.raw = true;
  coordinator_->log_answers = {first, second, end};
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  EXPECT_EQ(out_.str(), first.data() + second.data());

  out_.str("");
  options.raw = false;
  env_.stdout_is_tty = false;  // a pipe gets the bytes
  coordinator_->log_answers = {first, second, end};
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  EXPECT_EQ(out_.str(), first.data() + second.data());
}

TEST_F(CommandsTest, LogsGrepPrintsWholeMatchingLinesAcrossReads) {
  v1::ReadLogResponse first;
  first.set_data("step 1 loss 2.0\nwarn: slow\nstep 2 lo");
  first.set_next_offset(36);
  first.set_attempt(1);
  v1::ReadLogResponse second;
  second.set_data("ss 1.5\nstep 3 loss 1.2");
  second.set_next_offset(59);
  second.set_attempt(1);
  v1::ReadLogResponse end;
  end.set_next_offset(59);
  end.set_finished(true);
  coordinator_->log_answers = {first, second, end};
  LogsOptions options;
  options.run_id = 5;
  options.stage = "s";
  options.follow = true;
  options.grep = "loss [0-9.]+$";
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  EXPECT_EQ(out_.str(), "step 1 loss 2.0\nstep 2 loss 1.5\nstep 3 loss 1.2");

  options.grep = "loss (";
  EXPECT_EQ(Logs(ctx_, options), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--grep 'loss (': not a regular expression"));
}

// --grep matches a line as the terminal shows it (colours left out), and on a terminal the
// line it prints still has its escapes shown, not obeyed.
TEST_F(CommandsTest, LogsGrepMatchesColouredLinesAsShown) {
  v1::ReadLogResponse first;
  first.set_data("\x1b[32mINFO\x1b[0m step 1\nplain step 2\n\x1b[31mERROR\x1b[0m 32m\n");
  first.set_next_offset(first.data().size());
  first.set_attempt(1);
  v1::ReadLogResponse end;
  end.set_next_offset(first.data().size());
  end.set_finished(true);
  LogsOptions options;
  options.run_id = 5;
  options.stage = "s";
  options.grep = "INFO step|32m";
  env_.stdout_is_tty = true;
  coordinator_->log_answers = {first, end};
  EXPECT_EQ(Logs(ctx_, options), 0) << err_.str();
  EXPECT_EQ(out_.str(), "\\e[32mINFO\\e[0m step 1\n\\e[31mERROR\\e[0m 32m\n");
}

// Run 5: bench, reused from run 3, with its description and fingerprint.
v1::Run RunWithFingerprint() {
  workflow::StageSpec spec;
  spec.name = "bench";
  spec.run = {"lh-bench", "--endpoint", "${serve.outputs.endpoint}", "--requests", "${params.n}"};
  spec.env = {{"SEED", "7"}};
  spec.needs = {"serve"};
  workflow::StageFingerprint fp =
      workflow::FingerprintStage(spec, {{"n", "32"}}, {{"serve", "k1"}});
  v1::Run run;
  run.set_id(5);
  v1::Stage* s = run.add_stages();
  s->set_name("bench");
  s->set_kind("task");
  s->set_status(v1::STAGE_CACHED);
  s->add_needs("serve");
  s->set_description("benchmark the server");
  s->set_plan_action("reuse");
  s->set_plan_reason("same inputs as run 3");
  s->set_cached_from_run_id(3);
  s->set_cache_key(fp.key);
  s->set_fingerprint(workflow::FingerprintToJson(fp).dump());
  return run;
}

ShowOptions Show(int64_t run_id, std::string stage = "", bool why = false) {
  ShowOptions options;
  options.run_id = run_id;
  options.stage = std::move(stage);
  options.why = why;
  return options;
}

TEST_F(CommandsTest, ShowPrintsStageDescriptions) {
  coordinator_->runs[5] = RunWithFingerprint();
  EXPECT_EQ(ShowRun(ctx_, Show(5)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\ndescriptions:\nSTAGE  DESCRIPTION\n"
                                    "bench  benchmark the server\n"));
}

// A run with a budget gives its GPU-hours as its budget line does: 0.00503 beside "0.00503
// used", not 0.01.
TEST_F(CommandsTest, ShowGivesGpuHoursAsTheBudgetLineDoesWhenTheRunHasABudget) {
  v1::Run run = RunWithFingerprint();
  run.set_gpu_hours(0.00503);
  coordinator_->runs[5] = run;
  EXPECT_EQ(ShowRun(ctx_, Show(5)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("  gpu-hours: 0.01"));
  run.mutable_budget()->set_gpu_hours(0.005);
  run.mutable_budget()->set_used_gpu_hours(0.00503);
  coordinator_->runs[5] = run;
  out_.str("");
  EXPECT_EQ(ShowRun(ctx_, Show(5)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("  budget:    0.005 GPU-h, 0.00503 used (100 %)"));
  EXPECT_THAT(out_.str(), HasSubstr("  gpu-hours: 0.00503  (stage time"));
}

// A stage's last message: on its own page with its level, and under warnings: when it warns.
TEST_F(CommandsTest, ShowSaysAStagesWarning) {
  v1::Run run = RunWithFingerprint();
  run.mutable_stages(0)->set_last_message("GPU 0 memory at 97%: near the limit");
  run.mutable_stages(0)->set_last_message_level("warn");
  coordinator_->runs[5] = run;
  EXPECT_EQ(ShowRun(ctx_, Show(5)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\nwarnings:\n  bench: GPU 0 memory at 97%: near the limit\n"));
  out_.str("");
  EXPECT_EQ(ShowRun(ctx_, Show(5, "bench")), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("  message:    warn: GPU 0 memory at 97%: near the limit\n"));

  run.mutable_stages(0)->set_last_message_level("info");
  coordinator_->runs[5] = run;
  out_.str("");
  EXPECT_EQ(ShowRun(ctx_, Show(5)), 0) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("warnings:")));
}

TEST_F(CommandsTest, ShowStageWhyPrintsWhatWentIntoTheKey) {
  coordinator_->runs[5] = RunWithFingerprint();
  const std::string key = coordinator_->runs[5].stages(0).cache_key();
  EXPECT_EQ(ShowRun(ctx_, Show(5, "bench", true)), 0) << err_.str();
  std::string out = out_.str();
  EXPECT_THAT(out, HasSubstr("run 5, stage bench\n  about:   benchmark the server\n"));
  EXPECT_THAT(out, Not(HasSubstr("  plan:       reuse")));  // said once, under why:
  EXPECT_THAT(out, HasSubstr("why:\n  plan:         reuse: same inputs as run 3\n"
                             "  reused from:  run 3\n  cache key:    " +
                             key + "\n"));
  EXPECT_THAT(out, HasSubstr("       kind:           task\n"
                             "       run:            lh-bench --endpoint "
                             "'${serve.outputs.endpoint}' --requests '${params.n}'\n"
                             "       env:            SEED=7\n"
                             "       cache_version:  -\n"));
  EXPECT_THAT(out, HasSubstr("    2. the params its templates use, with their values:\n"
                             "       n  32\n"
                             "    3. the keys of the stages it needs:\n"
                             "       serve  k1\n"));
}

TEST_F(CommandsTest, ShowStageSaysWhenTheFingerprintCannotBeRead) {
  v1::Run run = RunWithFingerprint();
  run.mutable_stages(0)->set_fingerprint(R"({"key": "x"})");
  coordinator_->runs[5] = run;
  EXPECT_EQ(ShowRun(ctx_, Show(5, "bench", true)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("what went into the key: cannot read it: fingerprint: "
                                    "'definition_hash' is missing or not a string\n"));
}

// A run whose budget pauses it goes on (its attempts run to their end): `runs` says both.
TEST_F(CommandsTest, RunsSaysARunIsPausedByABudget) {
  auto add = [&](int64_t id, v1::RunStatus status) -> v1::Run& {
    v1::Run& run = coordinator_->runs[id];
    run.set_id(id);
    run.set_workflow_name(StrCat("wf", id));
    run.set_status(status);
    return run;
  };
  add(1, v1::RUN_RUNNING).mutable_budget()->set_reached(true);  // its own budget
  add(2, v1::RUN_PENDING)
      .set_budget_hold("team vision's budget of 1 GPU-h for 30d reached (1 used)");
  add(3, v1::RUN_RUNNING).mutable_budget()->set_gpu_hours(10);  // within it
  add(4, v1::RUN_FAILED)
      .set_budget_hold("workflow wf4's budget of 1 GPU-h for 7d reached (1 used)");
  EXPECT_EQ(ListRuns(ctx_, RunsOptions()), 0) << err_.str();
  std::vector<std::string> lines = StrSplit(out_.str(), '\n');
  ASSERT_GE(lines.size(), 5u) << out_.str();
  EXPECT_THAT(lines[1], HasSubstr("wf1       running (paused: budget)  "));
  EXPECT_THAT(lines[2], HasSubstr("wf2       pending (paused: budget)  "));
  EXPECT_THAT(lines[3], HasSubstr("wf3       running   "));
  EXPECT_THAT(lines[3], Not(HasSubstr("paused")));
  EXPECT_THAT(lines[4], Not(HasSubstr("paused"))) << "an ended run is paused by nothing";

  out_.str("");
  EXPECT_EQ(ShowRun(ctx_, Show(2)), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("  status:    pending (paused: budget)  ("));
}

// A stage back in the queue after its attempt was preempted: its page says how that ended.
TEST_F(CommandsTest, ShowStageSaysHowTheLastAttemptEndedWhileItWaitsAgain) {
  v1::Run& run = coordinator_->runs[5];
  run.set_id(5);
  run.set_status(v1::RUN_RUNNING);
  v1::Stage* s = run.add_stages();
  s->set_name("train");
  s->set_status(v1::STAGE_READY);
  s->set_reason("preempted by run 41 stage eval (high) at 10:52:03 UTC; waiting for an agent");
  s->set_attempt_count(3);
  for (int n : {2, 3, 1}) {
    v1::Attempt* a = s->add_attempts();
    a->set_number(n);
    a->set_state(v1::ATTEMPT_KILLED);
    a->set_reason(StrCat("preempted: room for run ", 39 + n, " stage eval (high)"));
  }
  EXPECT_EQ(ShowRun(ctx_, Show(5, "train")), 0) << err_.str();
  EXPECT_THAT(
      out_.str(),
      HasSubstr("  previous:  attempt 3 killed preempted: room for run 42 stage eval (high)\n"));

  // Its next attempt runs: that one is what the page is about.
  v1::Attempt* next = s->add_attempts();
  next->set_number(4);
  next->set_state(v1::ATTEMPT_RUNNING);
  s->set_status(v1::STAGE_RUNNING);
  out_.str("");
  EXPECT_EQ(ShowRun(ctx_, Show(5, "train")), 0) << err_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("previous:")));
}

TEST_F(CommandsTest, ShowStageErrors) {
  coordinator_->runs[5] = RunWithFingerprint();
  EXPECT_EQ(ShowRun(ctx_, Show(5, "nosuch")), 3);
  EXPECT_THAT(err_.str(), HasSubstr("longhaul: run 5 has no stage 'nosuch' (its stages: bench)"));
  EXPECT_EQ(ShowRun(ctx_, Show(5, "", true)), 2);
  EXPECT_THAT(err_.str(), HasSubstr("--why explains one stage"));
}

// Runs 3 and 4 of one workflow: `train` held a GPU in both (run 4 used it better), `prep` held
// none, and `eval` ran on a GPU only in run 4.
v1::Run GpuRun(int64_t id) {
  const int64_t gib = int64_t{1} << 30;
  v1::Run run;
  run.set_id(id);
  run.set_workflow_name("ft");
  run.set_status(v1::RUN_SUCCEEDED);
  v1::Stage* prep = run.add_stages();
  prep->set_name("prep");
  prep->set_status(v1::STAGE_SUCCEEDED);
  v1::Stage* train = run.add_stages();
  train->set_name("train");
  train->set_status(v1::STAGE_SUCCEEDED);
  train->set_gpu_hours(id == 3 ? 4 : 2);
  v1::GpuUsage* u = train->mutable_gpu_usage();
  u->set_sampled_gpu_hours(id == 3 ? 4 : 2);
  u->set_idle_gpu_hours(id == 3 ? 1 : 0.05);
  u->set_mean_sm_util_pct(id == 3 ? 60 : 90);
  u->set_peak_mem_used_bytes((id == 3 ? 70 : 133) * gib);
  u->set_mem_total_bytes(140 * gib);
  u->set_energy_kwh(id == 3 ? 2 : 1.5);
  *run.mutable_gpu_usage() = *u;
  run.set_gpu_hours(train->gpu_hours());
  if (id == 4) {
    v1::Stage* eval = run.add_stages();
    eval->set_name("eval");
    eval->set_status(v1::STAGE_SUCCEEDED);
    eval->set_gpu_hours(0.5);  // on a GPU without telemetry
    run.set_gpu_hours(run.gpu_hours() + 0.5);
  }
  return run;
}

TEST_F(CommandsTest, CompareShowsWhatTheGpusDid) {
  coordinator_->runs[3] = GpuRun(3);
  coordinator_->runs[4] = GpuRun(4);
  CompareOptions options;
  options.a = 3;
  options.b = 4;
  ASSERT_EQ(CompareRuns(ctx_, options), 0) << err_.str();
  // After the metrics; prep, which held no GPU, has no rows.
  EXPECT_THAT(
      out_.str(),
      HasSubstr("eval   -          succeeded\n"
                "\n"
                "gpus:\n"
                "GPUS                 run 3        run 4    B/A\n"
                "GPU-hours             4.00         2.50  0.62x\n"
                "idle GPU-hours  1.00 (25%)  0.05 (2.5%)  0.05x\n"
                "mean SM                60%          90%  1.50x\n"
                "energy            2.00 kWh     1.50 kWh  0.75x\n"
                "\n"
                "gpus by stage:\n"
                "STAGE  GPU USE                         run 3                   "
                "run 4    B/A\n"
                "train  GPU-hours                        4.00                    "
                "2.00  0.50x\n"
                "train  mean SM                           60%                     "
                "90%  1.50x\n"
                "train  peak memory     70.0 GiB of 140.0 GiB  133.0 GiB of 140.0 "
                "GiB  1.90x\n"
                "train  energy                       2.00 kWh                1.50 kWh  0.75x\n"
                "train  idle GPU-hours             1.00 (25%)             0.05 "
                "(2.5%)  0.05x\n"
                "eval   GPU-hours                           -                    "
                "0.50\n"))
      << out_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("eval   mean SM"))) << "eval had no telemetry";

  // --json: the two runs as they are, each with its gpu_usage and its stages'.
  out_.str("");
  ctx_.json = true;
  ASSERT_EQ(CompareRuns(ctx_, options), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("\"gpu_usage\":{\"sampled_gpu_hours\":4"));
  EXPECT_THAT(out_.str(), HasSubstr("\"idle_gpu_hours\":0.05"));
}

TEST_F(CommandsTest, CompareSaysNothingOfGpusWhenNeitherRunHeldOne) {
  for (int64_t id : {3, 4}) {
    v1::Run run;
    run.set_id(id);
    run.add_stages()->set_name("prep");
    coordinator_->runs[id] = run;
  }
  CompareOptions options;
  options.a = 3;
  options.b = 4;
  ASSERT_EQ(CompareRuns(ctx_, options), 0) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("stages:\nSTAGE  run 3"));
  EXPECT_THAT(out_.str(), Not(HasSubstr("gpu"))) << out_.str();
  EXPECT_THAT(out_.str(), Not(HasSubstr("GPU"))) << out_.str();
}

// A stage that needs hundreds of stages: its NEEDS cell says how many and is cut, and no row
// is padded to the width of the whole list.
TEST_F(CommandsTest, ValidateBoundsTheNeedsColumn) {
  testing::TempDir dir;
  std::string items;
  for (int i = 0; i < 300; ++i) items += StrCat(i == 0 ? "" : ", ", "s", i);
  std::string file = dir.Join("wide.yaml");
  testing::WriteTextFile(file, StrCat("name: wide\nstages:\n  gen: {foreach: [", items,
                                      "], run: [prog, \"${item}\"]}\n",
                                      "  report: {needs: [gen], run: [report, --all]}\n"));
  ASSERT_EQ(Validate(ctx_, file), 0) << err_.str();
  std::vector<std::string> lines = StrSplit(out_.str(), '\n');
  ASSERT_EQ(lines.size(), 304u) << out_.str();  // the summary, the header, 301 rows, ""
  EXPECT_EQ(lines[1], "STAGE     KIND  NEEDS                                     RUN");
  EXPECT_EQ(lines[2], "gen-s0    task  -                                         prog s0");
  EXPECT_EQ(lines[302],
            "report    task  300 stages: gen-s0,gen-s1,gen-s2,gen-s3\u2026  report --all");
  for (const std::string& line : lines) EXPECT_LE(DisplayWidth(line), 80) << line;
}

}  // namespace
}  // namespace longhaul::cli
