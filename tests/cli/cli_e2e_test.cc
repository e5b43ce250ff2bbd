// The real `longhaul` binary against a fake LonghaulService on loopback.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/cli/fake_longhaul_service.h"
#include "tests/testing/test_util.h"

namespace longhaul::cli {
namespace {

using longhaul::testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kT0 = 1'700'000'000'000;

constexpr char kHello[] = R"(name: hello
params:
  greeting: hello
stages:
  greet:
    run: [lh-testjob, --print, "${params.greeting}", --output, "word=${params.greeting}"]
  left:
    needs: [greet]
    run: [lh-testjob, --print, "${greet.outputs.word}"]
)";

v1::Stage MakeStage(const std::string& name, v1::StageStatus status) {
  v1::Stage s;
  s.set_name(name);
  s.set_kind("task");
  s.set_status(status);
  return s;
}

// Run 12: greet cached from run 7, left failed on its second attempt, with outputs, metrics,
// artifacts and attempts.
v1::Run FailedRun() {
  v1::Run run;
  run.set_id(12);
  run.set_workflow_name("hello");
  run.set_workflow_path("workflows/examples/hello.yaml");
  run.set_status(v1::RUN_FAILED);
  run.set_reason("stage 'left' failed");
  (*run.mutable_params())["greeting"] = "bonjour";
  run.set_created_at_ms(kT0);
  run.set_started_at_ms(kT0);
  run.set_ended_at_ms(kT0 + 65'000);
  run.set_parent_run_id(7);
  v1::Stage* greet = run.add_stages();
  *greet = MakeStage("greet", v1::STAGE_CACHED);
  greet->set_cached_from_run_id(7);
  (*greet->mutable_outputs())["word"] = "bonjour";
  v1::Stage* left = run.add_stages();
  *left = MakeStage("left", v1::STAGE_FAILED);
  left->set_reason("exit 3");
  left->set_attempt_count(2);
  left->set_agent_id("node-a");
  left->set_started_at_ms(kT0 + 1'000);
  left->set_ended_at_ms(kT0 + 64'000);
  left->mutable_progress()->set_done(5);
  left->mutable_progress()->set_total(20);
  left->mutable_progress()->set_unit("steps");
  v1::Metric* m = left->add_metrics();
  m->set_name("accept_rate");
  m->set_value(0.153);
  m->set_step(4);
  m->set_attempt(2);
  v1::Artifact* a = left->add_artifacts();
  a->set_name("samples");
  a->set_path("/data/runs/12/left/attempt-2/samples.jsonl");
  a->set_bytes(81'234'567);
  a->set_agent_id("node-a");
  for (int n : {1, 2}) {
    v1::Attempt* at = left->add_attempts();
    at->set_number(n);
    at->set_agent_id("node-a");
    at->set_state(n == 1 ? v1::ATTEMPT_LOST : v1::ATTEMPT_EXITED);
    at->set_reason(n == 1 ? "lost" : "exit 3");
    at->set_exit_code(n == 1 ? 0 : 3);
    at->set_started_at_ms(kT0 + n * 1'000);
    at->set_ended_at_ms(kT0 + n * 30'000);
  }
  return run;
}

class CliE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_.runs[12] = FailedRun();
    server_ = std::make_unique<FakeServer>(&service_);
    longhaul::testing::WriteTextFile(dir_.Join("hello.yaml"), kHello);
  }

  CommandResult Run(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> argv = {longhaul::testing::BinPath("longhaul"), "--coordinator",
                                     server_->address()};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("TZ", "UTC");
    return longhaul::testing::RunCommand(argv, env, 30'000);
  }

  longhaul::testing::TempDir dir_;
  FakeLonghaulService service_;
  std::unique_ptr<FakeServer> server_;
};

TEST_F(CliE2eTest, SubmitSendsTheFileAndPrintsTheRunId) {
  CommandResult r =
      Run({"submit", dir_.Join("hello.yaml"), "--set", "greeting=bonjour", "--no-cache"},
          {{"LONGHAUL_TOKEN", "s3cret"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "42\n");
  EXPECT_THAT(r.err, HasSubstr("submitted run 42 of workflow 'hello' (2 stages)"));
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.submits.size(), 1u);
  const v1::SubmitRunRequest& req = service_.submits[0];
  EXPECT_EQ(req.workflow_text(), kHello);
  EXPECT_EQ(req.workflow_path(), dir_.Join("hello.yaml"));
  EXPECT_EQ(req.params().at("greeting"), "bonjour");
  EXPECT_TRUE(req.no_cache());
  EXPECT_FALSE(req.dry_run());
  EXPECT_EQ(service_.authorization.back(), "Bearer s3cret");
}

TEST_F(CliE2eTest, SubmitWhoseAnswerWasLostAsksAgainWithTheSameSubmissionId) {
  {
    std::lock_guard<std::mutex> lock(service_.mu);
    service_.submit_failures = 2;
  }
  CommandResult r = Run({"submit", dir_.Join("hello.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "42\n");
  EXPECT_THAT(r.err, HasSubstr("asking again with the same submission id"));
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.submits.size(), 3u);
  const std::string& id = service_.submits[0].submission_id();
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(service_.submits[1].submission_id(), id);
  EXPECT_EQ(service_.submits[2].submission_id(), id);
}

TEST_F(CliE2eTest, SubmitGivesUpAfterThreeLostAnswers) {
  {
    std::lock_guard<std::mutex> lock(service_.mu);
    service_.submit_failures = 5;
  }
  CommandResult r = Run({"submit", dir_.Join("hello.yaml")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("did not answer"));
  std::lock_guard<std::mutex> lock(service_.mu);
  EXPECT_EQ(service_.submits.size(), 3u);
}

TEST_F(CliE2eTest, SubmitValidatesLocallyAndSendsNothingOnErrors) {
  longhaul::testing::WriteTextFile(dir_.Join("bad.yaml"),
                                   "name: bad\nstages:\n  a:\n    run: x y\n"
                                   "    neds: [b]\n");
  CommandResult r = Run({"submit", dir_.Join("bad.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(dir_.Join("bad.yaml") + ":4:10: run in stage 'a': run must be a "
                                                       "list (argv), not a shell string"));
  EXPECT_THAT(r.err, HasSubstr(":5:5: unknown key 'neds' in stage 'a' (did you mean 'needs'?)"));
  EXPECT_EQ(r.out, "");

  r = Run({"submit", dir_.Join("hello.yaml"), "--set", "greting=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown param 'greting' for workflow 'hello' (its params are: "
                               "greeting)"));
  r = Run({"submit", dir_.Join("hello.yaml"), "--set", "novalue"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("expected NAME=VALUE"));
  r = Run({"submit", dir_.Join("missing.yaml")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.yaml"));

  std::lock_guard<std::mutex> lock(service_.mu);
  EXPECT_TRUE(service_.submits.empty());
}

TEST_F(CliE2eTest, DryRunPrintsThePlan) {
  v1::PlanEntry reuse;
  reuse.set_stage("greet");
  reuse.set_action("reuse");
  reuse.set_reuse_run_id(7);
  reuse.set_reason("same cache key");
  v1::PlanEntry rerun;
  rerun.set_stage("left");
  rerun.set_action("run");
  rerun.set_reason("param greeting changed (hello -> bonjour)");
  service_.plan = {reuse, rerun};
  CommandResult r = Run({"submit", "--dry-run", dir_.Join("hello.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "STAGE  ACTION  REASON\n"
            "greet  reuse   same cache key (from run 7)\n"
            "left   run     param greeting changed (hello -> bonjour)\n");
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.submits.size(), 1u);
  EXPECT_TRUE(service_.submits[0].dry_run());
}

TEST_F(CliE2eTest, RunsListsATable) {
  v1::Run running;
  running.set_id(13);
  running.set_workflow_name("eagle3");
  running.set_status(v1::RUN_RUNNING);
  running.set_created_at_ms(kT0);
  (*running.mutable_stage_counts())["succeeded"] = 6;
  (*running.mutable_stage_counts())["cached"] = 1;
  (*running.mutable_stage_counts())["failed"] = 1;
  (*running.mutable_stage_counts())["skipped"] = 1;
  service_.runs[13] = running;
  CommandResult r = Run({"runs", "--status", "failed", "--workflow", "hello", "--limit", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = StrSplit(r.out, '\n');
  ASSERT_GE(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0],
            "ID  WORKFLOW  STATUS   STAGES                       CREATED              "
            "DURATION  PARENT  USER  CLASS");
  EXPECT_EQ(lines[1],
            "13  eagle3    running  7/9 ok, 1 failed, 1 skipped  2023-11-14 22:13:20  "
            "       -  -       -     normal");
  EXPECT_EQ(lines[2],
            "12  hello     failed   1/2 ok, 1 failed             2023-11-14 22:13:20  "
            "   1m05s  7       -     normal");
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.list_runs.size(), 1u);
  EXPECT_EQ(service_.list_runs[0].status(), "failed");
  EXPECT_EQ(service_.list_runs[0].workflow(), "hello");
  EXPECT_EQ(service_.list_runs[0].limit(), 5);
}

TEST_F(CliE2eTest, RunsRejectsAnUnknownStatus) {
  CommandResult r = Run({"runs", "--status", "done"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--status 'done': expected one of pending, running, succeeded, "
                               "failed, cancelled"));
}

TEST_F(CliE2eTest, JsonPrintsTheResponse) {
  CommandResult r = Run({"runs", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs["runs"].size(), 1u);
  EXPECT_EQ(runs["runs"][0]["id"], "12");  // int64 is a string in protobuf's JSON
  EXPECT_EQ(runs["runs"][0]["workflow_name"], "hello");

  r = Run({"--json", "show", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json run = nlohmann::json::parse(r.out);
  EXPECT_EQ(run["status"], "RUN_FAILED");
  EXPECT_EQ(run["stages"][1]["reason"], "exit 3");

  v1::AgentInfo agent;
  agent.set_id("node-a");
  service_.agents = {agent};
  r = Run({"agents", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["agents"][0]["id"], "node-a");

  r = Run({"submit", dir_.Join("hello.yaml"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["run"]["id"], "42");
}

TEST_F(CliE2eTest, ShowPrintsHeaderStagesOutputsMetricsArtifacts) {
  CommandResult r = Run({"show", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run 12\n"
                               "  workflow:  hello (workflows/examples/hello.yaml)\n"
                               "  status:    failed: stage 'left' failed  (1/2 ok, 1 failed)\n"
                               "  params:    greeting=bonjour\n"
                               "  created:   2023-11-14 22:13:20\n"
                               "  started:   2023-11-14 22:13:20\n"
                               "  ended:     2023-11-14 22:14:25  (took 1m05s)\n"
                               "  parent:    run 7\n"));
  EXPECT_THAT(r.out, HasSubstr("STAGE  KIND  STATUS  ATTEMPT  AGENT   PROGRESS          ELAPSED  "
                               "REASON\n"
                               "greet  task  cached        -  -       -                       -  "
                               "cached from run 7\n"
                               "left   task  failed        2  node-a  5/20 steps (25%)    1m03s  "
                               "exit 3\n"));
  EXPECT_THAT(r.out, HasSubstr("outputs:\nSTAGE  OUTPUT  VALUE\ngreet  word    bonjour\n"));
  EXPECT_THAT(r.out, HasSubstr("metrics:\nSTAGE  METRIC       VALUE  STEP  ATTEMPT\n"
                               "left   accept_rate  0.153     4  2\n"));
  EXPECT_THAT(r.out, HasSubstr("left   samples   77.5 MiB  node-a  "
                               "/data/runs/12/left/attempt-2/samples.jsonl"));
  EXPECT_THAT(r.out, Not(HasSubstr("attempts:")));

  r = Run({"show", "12", "--attempts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("attempts:\n"
                               "STAGE  ATTEMPT  AGENT   STATE   REASON  STARTED              "
                               "ENDED                EXIT\n"
                               "left         1  node-a  lost    lost    2023-11-14 22:13:21  "
                               "2023-11-14 22:13:50     -\n"
                               "left         2  node-a  exited  exit 3  2023-11-14 22:13:22  "
                               "2023-11-14 22:14:20     3\n"));
}

TEST_F(CliE2eTest, ShowPrintsParamsOutputsAndReasonsWithTheirControlCharactersEscaped) {
  v1::Run run = FailedRun();
  (*run.mutable_params())["title"] = "\x1b]0;pwned\a\x1b[31mred\nfake  row\xc2\x9b";
  (*run.mutable_stages(0)->mutable_outputs())["word"] = "\x1b[2Jgone\r";
  run.mutable_stages(1)->set_reason("exit 3\ngreet  task  succeeded");
  service_.runs[12] = run;
  CommandResult r = Run({"show", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  params:    greeting=bonjour, "
                               "title=\\e]0;pwned\\a\\e[31mred\\nfake  row\\u009b\n"));
  EXPECT_THAT(r.out, HasSubstr("greet  word    \\e[2Jgone\\r\n"));
  EXPECT_THAT(r.out, HasSubstr("exit 3\\ngreet  task  succeeded\n"));
  for (char c : r.out) {
    EXPECT_TRUE(c == '\n' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f))
        << "a control character reached the terminal: " << static_cast<int>(c);
  }
  r = Run({"--json", "show", "12"});  // JSON escapes by itself; the value is whole
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["params"]["title"],
            "\x1b]0;pwned\a\x1b[31mred\nfake  row\xc2\x9b");
}

// An attempt on borrowed GPUs says so beside its reason, or alone while it has none.
TEST_F(CliE2eTest, ShowAttemptsSaysWhichRanOnBorrowedGpus) {
  v1::Run run = FailedRun();
  v1::Stage* left = run.mutable_stages(1);
  ASSERT_EQ(left->attempts_size(), 2);
  left->mutable_attempts(0)->set_borrowed(true);
  left->mutable_attempts(0)->clear_reason();
  left->mutable_attempts(1)->set_borrowed(true);
  service_.runs[12] = run;
  CommandResult r = Run({"show", "12", "--attempts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  lost    borrowed from the pool  "));
  EXPECT_THAT(r.out, HasSubstr("  exited  exit 3 (borrowed from the pool)  "));
  r = Run({"--json", "show", "12", "--attempts"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["stages"][1]["attempts"][1]["borrowed"], true);
}

TEST_F(CliE2eTest, ShowWatchPrintsEachChangeAndExitsWithTheRunResult) {
  v1::Run running = FailedRun();
  running.set_status(v1::RUN_RUNNING);
  running.clear_reason();
  running.clear_ended_at_ms();
  running.clear_started_at_ms();  // nor a "running for" that moves
  running.mutable_stages(1)->set_status(v1::STAGE_RUNNING);
  running.mutable_stages(1)->clear_ended_at_ms();
  running.mutable_stages(1)->clear_reason();
  running.mutable_stages(1)->clear_started_at_ms();  // no elapsed time that moves
  // Two polls see it running (printed once: nothing changed), the third sees it failed.
  service_.run_steps[12] = {running, running, FailedRun()};
  CommandResult r = Run({"show", "12", "--watch", "--interval", "10ms"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(service_.get_runs, 3);
  auto first = r.out.find("  status:    running");
  auto last = r.out.find("  status:    failed: stage 'left' failed");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(last, std::string::npos) << r.out;
  EXPECT_LT(first, last);
  EXPECT_EQ(r.out.find("  status:    running", first + 1), std::string::npos) << r.out;

  service_.run_steps[12] = {FailedRun()};
  service_.run_steps[12][0].set_status(v1::RUN_SUCCEEDED);
  r = Run({"show", "12", "--watch"});  // already over: one frame, at once
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = Run({"show", "12", "--watch", "--interval", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--interval 'soon'"));
  r = Run({"show", "99", "--watch"});
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(CliE2eTest, ShowUnknownRunIsNotFound) {
  CommandResult r = Run({"show", "99"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "longhaul: no run 99\n");
  r = Run({"retry", "12", "nosuch"});
  EXPECT_EQ(r.exit_code, 3);
}

TEST_F(CliE2eTest, AnAnswerOverTheSizeLimitIsAClearError) {
  v1::Run huge = FailedRun();
  huge.set_id(13);
  huge.set_description(std::string(17 << 20, 'x'));  // over the CLI's 16 MiB
  service_.runs[13] = huge;
  CommandResult r = Run({"show", "13"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("is over a size limit"));
  EXPECT_THAT(r.err, HasSubstr("accepts answers up to 16 MiB"));
  EXPECT_THAT(r.err, HasSubstr("docs/security.md"));
}

TEST_F(CliE2eTest, AgentsTable) {
  v1::AgentInfo a;
  a.set_id("node-a");
  a.set_hostname("gpu01");
  a.set_state(v1::AGENT_CONNECTED);
  a.mutable_total()->set_cpus(64);
  a.mutable_total()->set_memory_bytes(512LL << 30);
  a.mutable_total()->set_gpus(8);
  a.mutable_free()->set_cpus(60.5);
  a.mutable_free()->set_memory_bytes(480LL << 30);
  a.mutable_free()->set_gpus(7);
  a.set_running_attempts(1);
  a.set_last_seen_ms(1);  // long ago
  (*a.mutable_labels())["zone"] = "a";
  (*a.mutable_labels())["gpu"] = "h200";
  a.add_shared_paths("/lustre");
  a.add_shared_paths("/nfs/home");
  service_.agents = {a};
  CommandResult r = Run({"agents"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = StrSplit(r.out, '\n');
  ASSERT_GE(lines.size(), 2u);
  EXPECT_THAT(
      lines[0],
      HasSubstr("ID      HOST   STATE         CPUS           MEMORY  GPUS  RUNNING  LAST SEEN"));
  EXPECT_THAT(lines[0], ::testing::EndsWith("LABELS           SHARED PATHS"));
  EXPECT_THAT(lines[1], ::testing::EndsWith(" ago  gpu=h200,zone=a  /lustre,/nfs/home"));
  EXPECT_THAT(lines[1],
              HasSubstr("node-a  gpu01  connected  60.5/64  480.0/512.0 GiB   7/8        1  "));
  EXPECT_THAT(lines[1], HasSubstr(" ago"));
}

TEST_F(CliE2eTest, LogsFollowKeepsPollingThroughAnAgentAway) {
  service_.log_steps = {"line 1\n", "", FakeLonghaulService::kAgentAway,
                        "line 2\n", "", "line 3\n"};
  CommandResult r = Run({"logs", "12", "left", "-f"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "line 1\nline 2\nline 3\n");
  EXPECT_THAT(r.err, HasSubstr("agent 'node-a' is not connected; retrying"));
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_GE(service_.read_logs.size(), 7u);
  EXPECT_EQ(service_.read_logs[0].attempt(), 0);  // the latest, then pinned to it
  EXPECT_EQ(service_.read_logs[1].attempt(), 2);
  EXPECT_EQ(service_.read_logs[1].offset(), 7);
  EXPECT_EQ(service_.read_logs[0].stream(), "stdout");
}

TEST_F(CliE2eTest, LogsWithoutFollowStopsAtTheEndSoFar) {
  service_.log_steps = {"abc", "", "never read"};
  CommandResult r = Run({"logs", "12", "left", "--stderr", "--tail", "3", "--attempt", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "abc");
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.read_logs.size(), 2u);
  EXPECT_EQ(service_.read_logs[0].offset(), -3);
  EXPECT_EQ(service_.read_logs[0].stream(), "stderr");
  EXPECT_EQ(service_.read_logs[0].attempt(), 1);
}

TEST_F(CliE2eTest, LogsWithoutFollowFailsWhileTheAgentIsAway) {
  service_.log_steps = {FakeLonghaulService::kAgentAway};
  CommandResult r = Run({"logs", "12", "left"});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_EQ(r.err, "longhaul: agent 'node-a' is not connected\n");
}

// Updates of a run that ends in `end`: a snapshot, a stage change, the last change.
std::vector<v1::RunUpdate> WatchUpdates(int64_t id, v1::RunStatus end) {
  v1::RunUpdate snap;
  snap.set_snapshot(true);
  v1::Run* run = snap.mutable_run();
  run->set_id(id);
  run->set_workflow_name("hello");
  run->set_status(v1::RUN_RUNNING);
  run->set_started_at_ms(kT0);
  *run->add_stages() = MakeStage("greet", v1::STAGE_RUNNING);
  *run->add_stages() = MakeStage("left", v1::STAGE_WAITING);
  v1::RunUpdate mid;
  *mid.mutable_run() = *run;
  mid.mutable_run()->clear_stages();
  v1::Stage* greet = mid.mutable_run()->add_stages();
  *greet = MakeStage("greet", v1::STAGE_SUCCEEDED);
  greet->set_attempt_count(1);
  v1::RunUpdate last;
  *last.mutable_run() = mid.run();
  last.mutable_run()->clear_stages();
  last.mutable_run()->set_status(end);
  last.mutable_run()->set_ended_at_ms(kT0 + 3'000);
  v1::Stage* left = last.mutable_run()->add_stages();
  *left = MakeStage("left", end == v1::RUN_SUCCEEDED ? v1::STAGE_SUCCEEDED
                            : end == v1::RUN_FAILED  ? v1::STAGE_FAILED
                                                     : v1::STAGE_CANCELLED);
  left->set_attempt_count(1);
  if (end == v1::RUN_FAILED) {
    left->set_reason("exit 3");
    last.mutable_run()->set_reason("stage 'left' failed");
  }
  return {snap, mid, last};
}

TEST_F(CliE2eTest, WatchPrintsPlainLinesAndExitsWithTheRunResult) {
  service_.watch_updates = WatchUpdates(12, v1::RUN_SUCCEEDED);
  CommandResult r = Run({"watch", "12"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = StrSplit(r.out, '\n');
  ASSERT_EQ(lines.size(), 8u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("  run 12  hello  running"));
  EXPECT_THAT(lines[1], HasSubstr("  greet  running"));
  EXPECT_THAT(lines[2], HasSubstr("  left  waiting"));
  EXPECT_THAT(lines[3], HasSubstr("  greet  succeeded  attempt 1"));
  EXPECT_THAT(lines[4], HasSubstr("  run 12  hello  succeeded"));
  EXPECT_THAT(lines[5], HasSubstr("  left  succeeded  attempt 1"));
  EXPECT_EQ(lines[6], "run 12 succeeded in 3s");
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b[")));  // piped: no terminal control

  service_.watch_updates = WatchUpdates(12, v1::RUN_FAILED);
  r = Run({"watch", "12"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("left  failed  attempt 1  exit 3"));
  EXPECT_THAT(r.out, HasSubstr("run 12 failed after 3s: stage 'left' failed"));

  service_.watch_updates = WatchUpdates(12, v1::RUN_CANCELLED);
  r = Run({"watch", "12"});
  EXPECT_EQ(r.exit_code, 5) << r.err;

  r = Run({"watch", "99"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err, "longhaul: no run 99\n");
}

TEST_F(CliE2eTest, WatchJsonPrintsOneUpdatePerLine) {
  service_.watch_updates = WatchUpdates(12, v1::RUN_FAILED);
  CommandResult r = Run({"watch", "12", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::vector<std::string> lines = StrSplit(r.out, '\n');
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(nlohmann::json::parse(lines[0])["snapshot"], true);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["run"]["status"], "RUN_FAILED");
}

TEST_F(CliE2eTest, SubmitWatchFollowsTheNewRun) {
  service_.watch_updates = WatchUpdates(42, v1::RUN_FAILED);
  CommandResult r = Run({"submit", dir_.Join("hello.yaml"), "--watch"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("42\n", 0), 0u) << r.out;
  EXPECT_THAT(r.out, HasSubstr("run 42 failed after 3s"));
}

TEST_F(CliE2eTest, CancelAndRetryPrintTheRunStatus) {
  CommandResult r = Run({"cancel", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "run 12: cancelled: cancelled by the user  (1/2 ok, 1 failed)\n");
  // longhauld's own reason for a cancel is the status again: said once.
  {
    std::lock_guard<std::mutex> lock(service_.mu);
    service_.runs[12].set_reason("cancelled");
  }
  r = Run({"show", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  status:    cancelled  (1/2 ok, 1 failed)\n"));
  r = Run({"retry", "12", "left"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "run 12: running  (1/2 ok, 1 failed)\n");
  r = Run({"retry", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::lock_guard<std::mutex> lock(service_.mu);
  ASSERT_EQ(service_.retries.size(), 2u);
  EXPECT_EQ(service_.retries[0].stage(), "left");
  EXPECT_EQ(service_.retries[1].stage(), "");
}

TEST_F(CliE2eTest, ValidateIsLocal) {
  CommandResult r = longhaul::testing::RunCommand(
      {longhaul::testing::BinPath("longhaul"), "validate", dir_.Join("hello.yaml")}, {}, 30'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("workflow 'hello' is valid, 2 stages\nparams: greeting=hello\n"
                               "STAGE  KIND  NEEDS  RUN\n"
                               "greet  task  -      lh-testjob --print '${params.greeting}' "
                               "--output 'word=${params.greeting}'\n"
                               "left   task  greet  lh-testjob --print "
                               "'${greet.outputs.word}'\n"));
  longhaul::testing::WriteTextFile(dir_.Join("cycle.yaml"),
                                   "name: c\nstages:\n  a: {needs: [b], run: [x]}\n"
                                   "  b: {needs: [a], run: [x]}\n");
  r = longhaul::testing::RunCommand(
      {longhaul::testing::BinPath("longhaul"), "validate", dir_.Join("cycle.yaml")}, {}, 30'000);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, dir_.Join("cycle.yaml") +
                       ":3:3: cycle: a -> b -> a (each stage needs the "
                       "next)\n");
}

TEST_F(CliE2eTest, UsageErrorsExit2) {
  EXPECT_EQ(Run({}).exit_code, 2);
  EXPECT_EQ(Run({"show"}).exit_code, 2);
  EXPECT_EQ(Run({"show", "twelve"}).exit_code, 2);
  EXPECT_EQ(Run({"frobnicate"}).exit_code, 2);
  CommandResult help = Run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("Exit codes:"));
}

TEST_F(CliE2eTest, UsageErrorsSayWhatIsWrongInTheCliOwnForm) {
  CommandResult r = Run({"show", "abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "longhaul: show: run: 'abc' is not a run id (a number such as 12) (`longhaul show "
            "--help` says how it is used)\n");
  r = Run({"compare", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "longhaul: compare: needs two runs, as in `longhaul compare 3 4` (only run 1 was "
            "given)\n");
  r = Run({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "longhaul: unknown command 'frobnicate' (`longhaul --help` lists the commands)\n");
  r = Run({});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "longhaul: no command given (`longhaul --help` lists them)\n");
  r = Run({"watch", "12", "--interval", "soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "longhaul: --interval 'soon': expected a duration such as 10s\n");
  r = Run({"logs", "99", "x"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, ::testing::StartsWith("longhaul: no run"));
}

TEST_F(CliE2eTest, UnreachableCoordinatorExits4AndSaysSoOnce) {
  // A port that was free a moment ago: nothing listens there.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  std::string where = StrCat("127.0.0.1:", ntohs(addr.sin_port));
  close(fd);
  for (const std::vector<std::string>& cmd : std::vector<std::vector<std::string>>{
           {"runs"}, {"show", "12"}, {"agents"}, {"watch", "12"}, {"logs", "12", "left", "-f"}}) {
    std::vector<std::string> argv = {longhaul::testing::BinPath("longhaul"), "--coordinator",
                                     where};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    CommandResult r = longhaul::testing::RunCommand(argv, {}, 30'000);
    EXPECT_EQ(r.exit_code, 4) << cmd[0] << ": " << r.err;
    std::string needle = "cannot reach the coordinator at " + where;
    size_t first = r.err.find(needle);
    EXPECT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(needle, first + 1), std::string::npos) << "said twice: " << r.err;
  }
}

}  // namespace
}  // namespace longhaul::cli
