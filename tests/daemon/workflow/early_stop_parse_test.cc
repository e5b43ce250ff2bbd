// `early_stop` on a foreach stage: read into one spec its items share, and every mistake
// reported at its own line and column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/workflow/workflow.h"
#include "tests/daemon/workflow/parse_error.h"

namespace longhaul::workflow {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(EarlyStopParseTest, TheItemsOfASweepShareItsRule) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  train:
    foreach: {lr: [1, 2, 3]}
    run: [train, "${item.lr}"]
    early_stop:
      metric: loss
      mode: min
      rule: asha
      rungs: [1, 2, 4]
      eta: 3
  report:
    needs: [train]
    run: [report]
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  const StageSpec* a = wf->FindStage("train-1");
  const StageSpec* c = wf->FindStage("train-3");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(a->early_stop, nullptr);
  EXPECT_EQ(a->early_stop, c->early_stop);  // one spec, shared
  EXPECT_EQ(a->early_stop->sweep, "train");
  EXPECT_EQ(a->early_stop->metric, "loss");
  EXPECT_FALSE(a->early_stop->maximize);
  EXPECT_EQ(a->early_stop->rule, EarlyStopSpec::Rule::kAsha);
  EXPECT_THAT(a->early_stop->rungs, ElementsAre(1, 2, 4));
  EXPECT_EQ(a->early_stop->eta, 3);
  EXPECT_EQ(wf->FindStage("report")->early_stop, nullptr);
}

TEST(EarlyStopParseTest, MedianHasDefaultsAndNeedsNoRungs) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  train:
    foreach: [a, b, c, d]
    run: [train, "${item}"]
    early_stop: {metric: accuracy, mode: max, rule: median}
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  const EarlyStopSpec& spec = *wf->FindStage("train-b")->early_stop;
  EXPECT_TRUE(spec.maximize);
  EXPECT_EQ(spec.rule, EarlyStopSpec::Rule::kMedian);
  EXPECT_TRUE(spec.rungs.empty());
  EXPECT_EQ(spec.min_items, 3);
}

TEST(EarlyStopParseTest, MistakesAreReportedWhereTheyAre) {
  std::string err = ParseError(R"(name: sweep
stages:
  train:
    foreach: [a, b]
    run: [train]
    early_stop:
      mode: lowest
      rule: ashe
      rungs: [2, 1]
      eta: 1
      patience: 3
  single:
    run: [x]
    early_stop: {metric: loss, rungs: [1]}
)");
  EXPECT_THAT(err, HasSubstr("wf.yaml:6:5: early_stop in stage 'train': missing required key "
                             "'metric'"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:7:13: early_stop.mode in stage 'train': expected min or "
                             "max, got 'lowest'"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:8:13: early_stop.rule in stage 'train': expected asha or "
                             "median"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:9:18: early_stop.rungs[1] in stage 'train': 1 after 2: "
                             "rungs are steps in ascending order"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:10:12: early_stop.eta in stage 'train'"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:11:7: unknown key 'patience' in early_stop in stage "
                             "'train'"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:14:5: early_stop in stage 'single': only a foreach stage "
                             "(a sweep) has one"));
}

TEST(EarlyStopParseTest, AshaNeedsRungsAndKeysBelongToTheirRule) {
  std::string err = ParseError(R"(name: sweep
stages:
  train:
    foreach: [a, b]
    run: [train]
    early_stop: {metric: loss, min_items: 4}
  tune:
    foreach: [a, b]
    run: [tune]
    early_stop: {metric: loss, rule: median, eta: 2}
)");
  EXPECT_THAT(err, HasSubstr("wf.yaml:6:5: early_stop in stage 'train': rule asha needs rungs"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:6:32: early_stop in stage 'train': min_items is for rule "
                             "median"));
  EXPECT_THAT(err, HasSubstr("wf.yaml:10:46: early_stop in stage 'tune': eta is for rule asha"));
}

}  // namespace
}  // namespace longhaul::workflow
