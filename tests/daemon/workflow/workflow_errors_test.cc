// Each kind of error in a workflow file: its position (1-based line:col) and its text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/strings.h"
#include "daemon/workflow/limits.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {
namespace {

using ::testing::HasSubstr;

// The error lines of parsing `text` as "wf.yaml"; fails the test if it parses.
std::vector<std::string> Errors(const std::string& text) {
  Result<Workflow> wf = ParseWorkflow(text, "wf.yaml");
  EXPECT_FALSE(wf.ok()) << "parsed, but expected errors:\n" << text;
  if (wf.ok()) return {};
  EXPECT_EQ(wf.status().code(), absl::StatusCode::kInvalidArgument);
  return StrSplit(ToStd(wf.status().message()), '\n');
}

std::string OnlyError(const std::string& text) {
  std::vector<std::string> errors = Errors(text);
  EXPECT_EQ(errors.size(), 1u) << StrJoin(errors, "\n");
  return errors.empty() ? "" : errors[0];
}

TEST(WorkflowErrorsTest, FileOverTheSizeLimitIsRefusedBeforeParsing) {
  std::string text = "name: w\nstages:\n  a: {run: [x]}\n# ";
  text += std::string(kMaxWorkflowBytes - text.size(), 'x');
  EXPECT_TRUE(ParseWorkflow(text, "wf.yaml").ok());
  text += "x";
  EXPECT_EQ(OnlyError(text), StrCat("wf.yaml: the file is ", kMaxWorkflowBytes + 1,
                                    " bytes, over the limit of ", kMaxWorkflowBytes, " bytes (",
                                    kMaxWorkflowBytes >> 20, " MiB) for a workflow file"));
}

TEST(WorkflowErrorsTest, MoreStagesThanTheLimitAreRefused) {
  std::string text = "name: w\nstages:\n";
  for (size_t i = 0; i < kMaxStages; ++i) text += StrCat("  s", i, ": {run: [x]}\n");
  EXPECT_TRUE(ParseWorkflow(text, "wf.yaml").ok());
  text += "  one_more: {run: [x]}\n";
  EXPECT_EQ(OnlyError(text), StrCat("wf.yaml:3:3: ", kMaxStages + 1, " stages, over the limit of ",
                                    kMaxStages, " stages in one workflow"));
}

TEST(WorkflowErrorsTest, UnknownKeySuggestsTheClosest) {
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  datagen:
    run: [x]
    neds: [a]
)"),
            "wf.yaml:5:5: unknown key 'neds' in stage 'datagen' (did you mean 'needs'?)");
  EXPECT_EQ(OnlyError(R"(name: w
stage:
  a: {run: [x]}
stages:
  a: {run: [x]}
)"),
            "wf.yaml:2:1: unknown key 'stage' in the top level (did you mean 'stages'?)");
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    retry: {limti: 3}
)"),
            "wf.yaml:5:13: unknown key 'limti' in retry in stage 'a' (did you mean 'limit'?)");
  // Far from every key: no suggestion.
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    gpu_count: 3
)"),
            "wf.yaml:5:5: unknown key 'gpu_count' in stage 'a'");
}

TEST(WorkflowErrorsTest, RunAsShellStringIsRefused) {
  EXPECT_THAT(OnlyError(R"(name: w
stages:
  a:
    run: python train.py --lr 3
)"),
              HasSubstr("wf.yaml:4:10: run in stage 'a': run must be a list (argv), not a shell "
                        "string"));
}

TEST(WorkflowErrorsTest, WrongTypesSayWhatWasExpected) {
  std::vector<std::string> errors = Errors(R"(name: w
stages:
  a:
    run: [x]
    needs: b
    timeout: soon
    resume: maybe
    resources: {gpus: two, memory: 12X, cpus: -1}
    kind: daemon
    retry: {limit: -1, on: [exit, crash], exit_codes: [1, 300]}
    env: [A, B]
  b:
    run: [x, {a: 1}]
)");
  EXPECT_THAT(
      errors,
      ::testing::ElementsAre(
          "wf.yaml:5:12: needs in stage 'a': expected a list, got 'b'",
          "wf.yaml:6:14: timeout in stage 'a': expected a duration like 30s, got 'soon'",
          "wf.yaml:7:13: resume in stage 'a': expected true or false, got 'maybe'",
          "wf.yaml:8:23: resources.gpus in stage 'a': expected an integer from 0 to 1024, got "
          "'two'",
          "wf.yaml:8:36: resources.memory in stage 'a': expected a size like 16G or a number of "
          "bytes, got '12X'",
          "wf.yaml:8:47: resources.cpus in stage 'a': expected a number > 0, got '-1'",
          "wf.yaml:9:11: kind in stage 'a': expected task or service, got 'daemon'",
          "wf.yaml:10:20: retry.limit in stage 'a': expected an integer from 0 to 1000, got '-1'",
          "wf.yaml:10:35: retry.on in stage 'a': unknown failure kind 'crash' (expected one of "
          "exit, signal, timeout, stalled, lost, service_lost, preempted, node_fail, oom, "
          "cancelled_outside, gpu_fault, gpu_idle)",
          "wf.yaml:10:59: retry.exit_codes[1] in stage 'a': expected an integer from 0 to 255, "
          "got '300'",
          "wf.yaml:11:10: env in stage 'a': expected a mapping, got a list",
          "wf.yaml:13:14: run[1] in stage 'b': expected a string, got a mapping"));
}

TEST(WorkflowErrorsTest, DuplicateKeysAndStagesAreReported) {
  std::vector<std::string> errors = Errors(R"(name: w
params:
  model: a
  model: b
stages:
  a:
    run: [x]
    run: [y]
  b:
    run: [x]
  a:
    run: [z]
)");
  EXPECT_THAT(errors, ::testing::ElementsAre(
                          "wf.yaml:4:3: duplicate param 'model' in params (first at line 3)",
                          "wf.yaml:8:5: duplicate key 'run' in stage 'a' (first at line 7)",
                          "wf.yaml:11:3: duplicate stage 'a' in stages (first at line 6)"));
}

TEST(WorkflowErrorsTest, MissingRequiredKeys) {
  EXPECT_THAT(Errors(R"(description: nothing else
)"),
              ::testing::ElementsAre("wf.yaml:1:1: missing required key 'name'",
                                     "wf.yaml:1:1: missing required key 'stages'"));
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    needs: []
)"),
            "wf.yaml:3:3: stage 'a': missing required key 'run'");
  EXPECT_EQ(OnlyError(R"(name: w
stages: {}
)"),
            "wf.yaml:2:9: stages: expected at least one stage");
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: []
)"),
            "wf.yaml:4:10: run in stage 'a': expected a non-empty list (argv)");
}

TEST(WorkflowErrorsTest, BadNames) {
  EXPECT_EQ(OnlyError(R"(name: My Workflow
stages:
  a: {run: [x]}
)"),
            "wf.yaml:1:7: name: 'My Workflow' is not a workflow name (lower-case letters, "
            "digits, _ . and - only)");
  EXPECT_THAT(OnlyError(R"(name: w
stages:
  run: {run: [x]}
)"),
              HasSubstr("wf.yaml:3:3: stage name 'run' is reserved"));
  EXPECT_THAT(OnlyError(R"(name: w
stages:
  a.b: {run: [x]}
)"),
              HasSubstr("wf.yaml:3:3: stage name 'a.b'"));
}

TEST(WorkflowErrorsTest, UnknownNeedsAndSelfDependency) {
  EXPECT_THAT(Errors(R"(name: w
stages:
  a:
    run: [x]
  b:
    needs: [a, x, datgen, b, a]
    run: [x]
  datagen:
    run: [x]
)"),
              ::testing::ElementsAre(
                  "wf.yaml:6:16: stage 'b' needs 'x', which is not a stage",
                  "wf.yaml:6:19: stage 'b' needs 'datgen', which is not a stage (did you mean "
                  "'datagen'?)",
                  "wf.yaml:6:27: stage 'b' needs itself",
                  "wf.yaml:6:30: stage 'b' lists 'a' twice in needs"));
}

TEST(WorkflowErrorsTest, CyclesPrintTheCycle) {
  std::vector<std::string> errors = Errors(R"(name: w
stages:
  start:
    run: [x]
  a:
    needs: [start, c]
    run: [x]
  b:
    needs: [a]
    run: [x]
  c:
    needs: [b]
    run: [x]
  d:
    needs: [e]
    run: [x]
  e:
    needs: [d]
    run: [x]
)");
  EXPECT_THAT(errors, ::testing::ElementsAre(
                          "wf.yaml:5:3: cycle: a -> c -> b -> a (each stage needs the next)",
                          "wf.yaml:14:3: cycle: d -> e -> d (each stage needs the next)"));
}

TEST(WorkflowErrorsTest, TemplateErrorsPointIntoTheString) {
  std::vector<std::string> errors = Errors(R"(name: w
params:
  model: /m
stages:
  up:
    run: [x]
  side:
    run: [x]
  a:
    needs: [up]
    run: [x, "${params.modle}", --e, "${nope.outputs.url}", "${side.outputs.url}"]
    env:
      A: "pre ${params.model} ${bad}"
      B: "${up.outputs.x"
      C: "$${literal} and ${up.outputs.ok} and ${a.outputs.self}"
)");
  EXPECT_THAT(
      errors,
      ::testing::ElementsAre(
          "wf.yaml:11:15: run[1] in stage 'a': ${params.modle} is not a param (did you mean "
          "'model'?)",
          "wf.yaml:11:39: run[3] in stage 'a': ${nope.outputs.url}: 'nope' is not a stage",
          "wf.yaml:11:62: run[4] in stage 'a': ${side.outputs.url}: stage 'a' does not need "
          "'side' (add it to needs)",
          "wf.yaml:13:31: env A in stage 'a': malformed template: '${bad}' at offset 20: unknown "
          "reference (expected ${params.NAME}, ${STAGE.outputs.NAME}, ${output_dir}, "
          "${run.id}, ${workflow.dir}, ${tags.TAG.outputs.NAME} or ${tags.TAG.run}; write "
          "'$${bad}' for a literal '${bad}', as for a shell)",
          "wf.yaml:14:11: env B in stage 'a': malformed template: unclosed '${' at offset 0 "
          "(write '$${' for a literal '${')",
          "wf.yaml:15:48: env C in stage 'a': ${a.outputs.self}: a stage cannot use its own "
          "outputs"));
}

TEST(WorkflowErrorsTest, OutputsOfATransitiveUpstreamAreAllowed) {
  Result<Workflow> wf = ParseWorkflow(R"(name: w
stages:
  a: {run: [x]}
  b: {needs: [a], run: [x]}
  c: {needs: [b], run: [x, "${a.outputs.url}"]}
)",
                                      "wf.yaml");
  EXPECT_TRUE(wf.ok()) << wf.status();
}

TEST(WorkflowErrorsTest, ReadyTimeoutOnlyForServices) {
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    ready_timeout: 5m
)"),
            "wf.yaml:5:5: ready_timeout in stage 'a': only a service stage (kind: service) has "
            "one");
}

TEST(WorkflowErrorsTest, PreflightOnlyForAStageWithGpus) {
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    resources: {gpus: 0}
    preflight: true
)"),
            "wf.yaml:6:5: preflight in stage 'a': the pre-flight checks the stage's GPUs, and it "
            "asks for none (resources.gpus: 0)");
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    preflight: maybe
)"),
            "wf.yaml:5:16: preflight in stage 'a': expected true or false, got 'maybe'");
  // A default pre-flight applies to the stages that hold GPUs.
  auto wf = ParseWorkflow(R"(name: w
defaults: {preflight: true}
stages:
  train:
    run: [x]
    resources: {gpus: 2}
  report:
    run: [y]
  skip:
    run: [z]
    resources: {gpus: 1}
    preflight: false
)",
                          "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  std::map<std::string, bool> preflight;
  for (const auto& s : wf->stages) preflight[s.name] = s.preflight;
  EXPECT_EQ(preflight,
            (std::map<std::string, bool>{{"train", true}, {"report", false}, {"skip", false}}));
}

TEST(WorkflowErrorsTest, PreemptibleIsABoolAndDefaultsMayTurnItOff) {
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    preemptible: never
)"),
            "wf.yaml:5:18: preemptible in stage 'a': expected true or false, got 'never'");
  auto wf = ParseWorkflow(R"(name: w
defaults: {preemptible: false}
stages:
  serve:
    run: [x]
  train:
    run: [y]
    preemptible: true
)",
                          "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  std::map<std::string, bool> preemptible;
  for (const auto& s : wf->stages) preemptible[s.name] = s.preemptible;
  EXPECT_EQ(preemptible, (std::map<std::string, bool>{{"serve", false}, {"train", true}}));
  auto plain = ParseWorkflow("name: w\nstages:\n  a: {run: [x]}\n", "wf.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->stages[0].preemptible) << "a stage may be preempted unless it says not";
}

TEST(WorkflowErrorsTest, PreemptNoticeIsAPositiveDurationAndDefaultsMaySetIt) {
  EXPECT_EQ(OnlyError(R"(name: w
stages:
  a:
    run: [x]
    preempt_notice: soon
)"),
            "wf.yaml:5:21: preempt_notice in stage 'a': expected a duration like 30s, got "
            "'soon'");
  EXPECT_EQ(OnlyError(R"(name: w
defaults:
  preempt_notice: 0s
stages:
  a: {run: [x]}
)"),
            "wf.yaml:3:19: preempt_notice in defaults: must be longer than 0");
  auto wf = ParseWorkflow(R"(name: w
defaults: {preempt_notice: 2m}
stages:
  train:
    run: [x]
  eval:
    run: [y]
    preempt_notice: 30s
)",
                          "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  std::map<std::string, int64_t> notice;
  for (const auto& s : wf->stages) notice[s.name] = s.preempt_notice_ms.value_or(-1);
  EXPECT_EQ(notice, (std::map<std::string, int64_t>{{"train", 120'000}, {"eval", 30'000}}));
  auto plain = ParseWorkflow("name: w\nstages:\n  a: {run: [x]}\n", "wf.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->stages[0].preempt_notice_ms.has_value())
      << "no notice unless the stage asks for one: SIGUSR1 would kill a stage that ignores it";
}

TEST(WorkflowErrorsTest, DefaultsAcceptOnlyTheirKeys) {
  EXPECT_EQ(OnlyError(R"(name: w
defaults:
  resume: true
stages:
  a: {run: [x]}
)"),
            "wf.yaml:3:3: unknown key 'resume' in defaults");
}

TEST(WorkflowErrorsTest, InvalidYamlHasAPosition) {
  EXPECT_EQ(OnlyError("name: w\nstages:\n  a: {run: [x]\n  b: 1\n"),
            "wf.yaml:4:3: invalid YAML: end of map flow not found");
  EXPECT_THAT(OnlyError("name: w\n  bad: indent: here\n"), HasSubstr("wf.yaml:2:"));
  EXPECT_EQ(OnlyError(""), "wf.yaml:1:1: the file is empty: expected a workflow (name, stages)");
  EXPECT_EQ(OnlyError("- a\n- b\n"),
            "wf.yaml:1:1: expected a mapping with name and stages at the top level, got a list");
}

TEST(WorkflowErrorsTest, ReservedEnvAndBadEnvNames) {
  EXPECT_THAT(Errors(R"(name: w
stages:
  a:
    run: [x]
    env:
      LONGHAUL_EVENTS: /tmp/x
      1BAD: y
)"),
              ::testing::ElementsAre(
                  "wf.yaml:6:7: env in stage 'a': 'LONGHAUL_EVENTS' is set by longhaul "
                  "(LONGHAUL_* names are reserved)",
                  "wf.yaml:7:7: env in stage 'a': '1BAD' is not a variable name (letters, digits "
                  "and _)"));
}

TEST(WorkflowErrorsTest, ManyErrorsAreAllReportedInFileOrder) {
  std::vector<std::string> errors = Errors(R"(name: w
params:
  p: 1
stages:
  a:
    run: [x, "${params.q}"]
    timeout: later
  b:
    neeeds: [a]
    run: "x y"
  c:
    needs: [zz]
    run: [x]
    retry: {limit: many}
)");
  ASSERT_EQ(errors.size(), 6u) << StrJoin(errors, "\n");
  EXPECT_THAT(errors[0],
              HasSubstr("wf.yaml:6:15: run[1] in stage 'a': ${params.q} is not a param"));
  EXPECT_THAT(errors[1], HasSubstr("wf.yaml:7:14: timeout in stage 'a'"));
  EXPECT_THAT(errors[2], HasSubstr("wf.yaml:9:5: unknown key 'neeeds'"));
  EXPECT_THAT(errors[3], HasSubstr("wf.yaml:10:10: run in stage 'b': run must be a list"));
  EXPECT_THAT(errors[4], HasSubstr("wf.yaml:12:13: stage 'c' needs 'zz'"));
  EXPECT_THAT(errors[5], HasSubstr("wf.yaml:14:20: retry.limit in stage 'c'"));
}

}  // namespace
}  // namespace longhaul::workflow

namespace longhaul::workflow {
namespace {

TEST(WorkflowServiceTest, AServiceNothingNeedsIsRefused) {
  auto wf = ParseWorkflow(R"(name: lonely
stages:
  server: {kind: service, run: [serve]}
  other: {run: [prog]}
)",
                          "lonely.yaml");
  ASSERT_FALSE(wf.ok());
  EXPECT_NE(std::string(wf.status().message())
                .find("lonely.yaml:3:3: service 'server' is needed by no stage"),
            std::string::npos)
      << wf.status();
}

}  // namespace
}  // namespace longhaul::workflow

namespace longhaul::workflow {
namespace {

TEST(WorkflowNotifyTest, TheNotifyBlockIsRead) {
  Result<Workflow> wf = ParseWorkflow(R"(name: w
notify:
  on: [run_failed, stage_failed]
  webhook: http://hooks.internal:9000/longhaul
  format: slack
  command: [page-oncall, --team, ml]
stages:
  a: {run: [x]}
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->notify.on, (std::vector<std::string>{"run_failed", "stage_failed"}));
  EXPECT_EQ(wf->notify.webhooks, (std::vector<std::string>{"http://hooks.internal:9000/longhaul"}));
  EXPECT_EQ(wf->notify.format, "slack");
  EXPECT_EQ(wf->notify.command, (std::vector<std::string>{"page-oncall", "--team", "ml"}));
  EXPECT_TRUE(wf->notify.Wants("run_failed"));
  EXPECT_FALSE(wf->notify.Wants("run_succeeded"));
}

TEST(WorkflowNotifyTest, BadNotifyBlocksSayWhatAndWhere) {
  EXPECT_EQ(OnlyError("name: w\nnotify:\n  on: [run_faild]\n  webhook: http://h/x\n"
                      "stages:\n  a: {run: [x]}\n"),
            "wf.yaml:3:8: notify.on: unknown event 'run_faild' (did you mean 'run_failed'?); "
            "the events are run_succeeded, run_failed, run_cancelled, stage_failed, "
            "stage_stalled, service_lost, agent_lost, gpu_fault, stage_gpu_idle, budget_warning, "
            "budget_reached");
  EXPECT_EQ(OnlyError("name: w\nnotify:\n  webhook: ftp://h/x\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:3:12: notify.webhook: 'ftp://h/x': expected http://HOST[:PORT] or "
            "https://HOST[:PORT]");
  EXPECT_EQ(OnlyError("name: w\nnotify:\n  webhook: https://me:pw@h/x\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:3:12: notify.webhook: 'https://me:pw@h/x': user info is not supported");
  EXPECT_TRUE(ParseWorkflow("name: w\nnotify:\n  webhook: https://h/x\nstages:\n  a: {run: [x]}\n",
                            "wf.yaml")
                  .ok());
  EXPECT_EQ(OnlyError("name: w\nnotify:\n  webhook: [http://h/x]\n  format: teams\n"
                      "stages:\n  a: {run: [x]}\n"),
            "wf.yaml:4:11: notify.format: expected json or slack, got 'teams'");
  EXPECT_EQ(OnlyError("name: w\nnotify:\n  on: [run_failed]\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:2:1: notify: expected a webhook or a command to send notifications to");
  EXPECT_THAT(OnlyError("name: w\nnotify:\n  webhok: http://h/x\nstages:\n  a: {run: [x]}\n"),
              HasSubstr("wf.yaml:3:3: unknown key 'webhok' in notify (did you mean 'webhook'?)"));
}

TEST(WorkflowNotifyTest, FlagsAreCheckedLikeTheBlock) {
  NotifySpec spec;
  spec.webhooks = {"http://h:1/x"};
  EXPECT_TRUE(CheckNotifySpec(spec, "--notify-webhook").ok());
  spec.on = {"everything"};
  Status st = CheckNotifySpec(spec, "--notify-on");
  EXPECT_THAT(ToStd(st.message()), HasSubstr("--notify-on: unknown event 'everything'"));
}

}  // namespace
}  // namespace longhaul::workflow

namespace longhaul::workflow {
namespace {

TEST(WorkflowRunPolicyTest, PriorityAndBudgetAreReadAndCheckedAtTheTopLevel) {
  Result<Workflow> wf = ParseWorkflow(
      "name: w\npriority: low\nbudget: {gpu_hours: 2.5, hard: true}\nstages:\n  a: {run: [x]}\n",
      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status().message();
  EXPECT_EQ(wf->priority, "low");
  ASSERT_TRUE(wf->budget.gpu_hours.has_value());
  EXPECT_DOUBLE_EQ(*wf->budget.gpu_hours, 2.5);
  EXPECT_TRUE(wf->budget.hard);
  EXPECT_EQ(OnlyError("name: w\npriority: urgent\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:2:11: priority: unknown class 'urgent' (high, normal or low)");
  EXPECT_EQ(OnlyError("name: w\nbudget: {gpu_hours: 0}\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:2:21: budget.gpu_hours: expected a number > 0, got '0'");
  EXPECT_EQ(OnlyError("name: w\nbudget: {hard: true}\nstages:\n  a: {run: [x]}\n"),
            "wf.yaml:2:1: budget: expected gpu_hours (a number > 0), and optionally hard");
}

}  // namespace
}  // namespace longhaul::workflow
