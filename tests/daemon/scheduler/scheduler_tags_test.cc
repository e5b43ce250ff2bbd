// Tags through the scheduler: a later workflow's ${tags.NAME.outputs.OUT} and ${tags.NAME.run}
// reach its stage's argv as the tagged stage's recorded values; moving the tag changes the
// dependent stage's key, and the plan says why; bad tags and references are refused with
// messages that name them.
#include <gmock/gmock.h>

#include "core/strings.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kTrainer[] = R"(
name: trainer
params: {lr: "0.1"}
stages:
  train: {run: [train, "${params.lr}"]}
)";

constexpr char kConsumer[] = R"(
name: consumer
stages:
  bench:
    run: [bench, "${tags.best-drafter.outputs.drafter}", "run=${tags.best-drafter.run}"]
)";

class TagsTest : public SchedulerTest {
 protected:
  // Runs the one started stage to success, reporting output `drafter` = `value`.
  void FinishTrain(uint64_t session, const std::string& value) {
    auto starts = TakeStarts();
    ASSERT_EQ(starts.size(), 1u);
    Events(session, starts[0].attempt_id(),
           {StrCat(R"({"output": {"name": "drafter", "value": ")", value, R"("}})")});
    Exit(session, starts[0].attempt_id(), 0);
  }

  Result<v1::Tag> SetTag(const std::string& name, int64_t run, const std::string& stage,
                         bool force = false) {
    Result<v1::Tag> out = absl::UnknownError("not called");
    Batch([&] { out = scheduler_->SetTag(name, run, stage, force, "alice"); });
    return out;
  }

  Status SubmitError(const std::string& yaml) {
    auto wf = workflow::ParseWorkflow(yaml, "consumer.yaml");
    EXPECT_TRUE(wf.ok()) << wf.status();
    SubmitInput in;
    in.workflow = std::move(*wf);
    in.text = yaml;
    in.path = "consumer.yaml";
    Status st;
    Batch([&] { st = scheduler_->Submit(std::move(in)).status(); });
    return st;
  }
};

TEST_F(TagsTest, TaggedValueReachesTheStageAndMovingTheTagReplansIt) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kTrainer);
  FinishTrain(n1, "/out/first/drafter");
  Result<v1::Tag> tag = SetTag("best-drafter", first, "train");
  ASSERT_TRUE(tag.ok()) << tag.status();
  EXPECT_EQ(tag->set_by(), "alice");
  EXPECT_GT(tag->attempt_id(), 0);
  EXPECT_EQ(tag->previous(), "");

  int64_t consumer = Submit(kConsumer);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_THAT(starts[0].argv(), ElementsAre("bench", "/out/first/drafter", StrCat("run=", first)));
  EXPECT_EQ(GetStage(consumer, "bench").plan_reason(), "no earlier run");
  Exit(n1, starts[0].attempt_id(), 0);

  // The same tag again: the same key, so the result is reused.
  int64_t again = Submit(kConsumer);
  EXPECT_TRUE(TakeStarts().empty());
  EXPECT_EQ(GetStage(again, "bench").status(), v1::STAGE_CACHED);

  int64_t second = Submit(kTrainer, {{"lr", "0.2"}});
  FinishTrain(n1, "/out/second/drafter");
  // Set elsewhere: moving it is explicit.
  Result<v1::Tag> refused = SetTag("best-drafter", second, "train");
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), StrCat("tag 'best-drafter' is on run ", first,
                                               " train (set by alice); pass --force to move it"));
  Result<v1::Tag> moved = SetTag("best-drafter", second, "train", /*force=*/true);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(moved->previous(), StrCat("run ", first, " train"));

  int64_t after = Submit(kConsumer);
  starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_THAT(starts[0].argv(),
              ElementsAre("bench", "/out/second/drafter", StrCat("run=", second)));
  EXPECT_EQ(GetStage(after, "bench").plan_reason(),
            StrCat("tag best-drafter moved (run ", first, " train -> run ", second, " train)"));
}

TEST_F(TagsTest, ResolvedValuesSurviveARestartBeforeTheStageStarts) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kTrainer);
  FinishTrain(n1, "/out/first/drafter");
  ASSERT_TRUE(SetTag("best-drafter", first, "train").ok());
  // The agent's every CPU is taken: the consumer waits, with its values resolved and stored.
  Submit(R"(
name: blocker
stages:
  hold: {run: [hold], resources: {cpus: 4}}
)");
  ASSERT_EQ(TakeStarts().size(), 1u);
  int64_t consumer = Submit(R"(
name: consumer
stages:
  bench: {run: [bench, "${tags.best-drafter.outputs.drafter}"]}
)");
  EXPECT_TRUE(TakeStarts().empty());
  // Removing the tag now changes nothing for the run already submitted.
  Batch([&] { ASSERT_TRUE(scheduler_->RemoveTag("best-drafter").ok()); });

  NewScheduler();
  Connect("n2");
  std::vector<std::string> argv;
  for (const auto& s : TakeStarts()) {
    if (s.stage() == "bench") argv.assign(s.argv().begin(), s.argv().end());
  }
  EXPECT_THAT(argv, ElementsAre("bench", "/out/first/drafter"));
  EXPECT_EQ(GetRun(consumer).status(), v1::RUN_RUNNING);
}

TEST_F(TagsTest, BadTagsAndReferencesAreRefusedByName) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kTrainer);
  FinishTrain(n1, "/out/first/drafter");

  EXPECT_EQ(SetTag("best", 999, "train").status().message(), "no run 999");
  EXPECT_EQ(SetTag("best", first, "trian").status().message(),
            StrCat("run ", first, " has no stage 'trian' (did you mean 'train'?)"));
  EXPECT_EQ(SetTag("bad name", first, "train").status().code(), absl::StatusCode::kInvalidArgument);

  int64_t running = Submit(R"(
name: slow
stages:
  hold: {run: [hold]}
)");
  ASSERT_EQ(TakeStarts().size(), 1u);
  EXPECT_EQ(SetTag("best", running, "hold").status().message(),
            StrCat("stage 'hold' of run ", running,
                   " is running: only a succeeded (or cached) stage's result can be tagged"));

  // No such tag: the position of the reference, the tag, and how to set one.
  Status unknown = SubmitError(kConsumer);
  EXPECT_EQ(unknown.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(unknown.message()),
            "consumer.yaml:5:19: run[1] in stage 'bench': ${tags.best-drafter.outputs.drafter}: "
            "no tag 'best-drafter' (longhaul tags lists them; longhaul tag RUN STAGE "
            "best-drafter sets it)\n"
            "consumer.yaml:5:63: run[2] in stage 'bench': ${tags.best-drafter.run}: no tag "
            "'best-drafter' (longhaul tags lists them; longhaul tag RUN STAGE best-drafter sets "
            "it)");

  // An output the tagged stage did not record.
  ASSERT_TRUE(SetTag("best-drafter", first, "train").ok());
  Status no_output = SubmitError(R"(
name: consumer
stages:
  bench: {run: [bench, "${tags.best-drafter.outputs.model}"]}
)");
  EXPECT_THAT(std::string(no_output.message()),
              HasSubstr(StrCat("consumer.yaml:4:25: run[1] in stage 'bench': "
                               "${tags.best-drafter.outputs.model}: tag 'best-drafter' (run ",
                               first, " train) has no output 'model' (it recorded: drafter)")));

  // Removing it: the answer says where it was, and the name is free again.
  Result<v1::Tag> removed = absl::UnknownError("not called");
  Batch([&] { removed = scheduler_->RemoveTag("best-drafter"); });
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(removed->previous(), StrCat("run ", first, " train"));
  Batch([&] { removed = scheduler_->RemoveTag("best-drafter"); });
  EXPECT_EQ(removed.status().message(), "no tag 'best-drafter'");
}

}  // namespace
}  // namespace longhaul::scheduler
