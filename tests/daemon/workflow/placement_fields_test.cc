// `node_selector` and `retry.infra_limit`: parsed, merged from defaults, bad shapes refused
// with file:line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string ErrorText(const std::string& text) {
  Result<Workflow> wf = ParseWorkflow(text, "wf.yaml");
  EXPECT_FALSE(wf.ok()) << "parsed, but expected errors:\n" << text;
  return wf.ok() ? "" : ToStd(wf.status().message());
}

TEST(PlacementFieldsTest, NodeSelectorIsReadSortedAndDefaultsApply) {
  Result<Workflow> wf = ParseWorkflow(R"(
name: w
defaults:
  node_selector: {zone: a}
stages:
  train: {run: [x], node_selector: {gpu: h200, arch: x86_64}}
  other: {run: [x]}
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_THAT(wf->FindStage("train")->node_selector,
              ElementsAre(Pair("arch", "x86_64"), Pair("gpu", "h200")));  // replaced, not merged
  EXPECT_THAT(wf->FindStage("other")->node_selector, ElementsAre(Pair("zone", "a")));
  EXPECT_EQ(FormatNodeSelector(wf->FindStage("train")->node_selector),
            "{arch: x86_64, gpu: h200}");
}

TEST(PlacementFieldsTest, NodeSelectorOfTheWrongShapeSaysWhereAndWhat) {
  EXPECT_EQ(ErrorText("name: w\nstages:\n  a:\n    run: [x]\n    node_selector: [gpu, h200]\n"),
            "wf.yaml:5:20: node_selector in stage 'a': expected a mapping, got a list");
  EXPECT_EQ(ErrorText("name: w\nstages:\n  a:\n    run: [x]\n    node_selector: {gpu: {a: b}}\n"),
            "wf.yaml:5:26: node_selector.gpu in stage 'a': expected a string, got a mapping");
  EXPECT_EQ(ErrorText("name: w\nstages:\n  a:\n    run: [x]\n    node_selector: {'a=b': c}\n"),
            "wf.yaml:5:21: node_selector in stage 'a': 'a=b' is not a label key (letters, "
            "digits, _ - . /)");
}

TEST(PlacementFieldsTest, InfraLimitDefaultsToFiveAndIsSeparateFromLimit) {
  Result<Workflow> wf = ParseWorkflow(R"(
name: w
defaults:
  retry: {limit: 2}
stages:
  a: {run: [x]}
  b: {run: [x], retry: {infra_limit: 0}}
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->FindStage("a")->retry.limit, 2);
  EXPECT_EQ(wf->FindStage("a")->retry.infra_limit, 5);
  EXPECT_EQ(wf->FindStage("b")->retry.infra_limit, 0);
  EXPECT_EQ(wf->FindStage("b")->retry.limit, 2);
  EXPECT_EQ(ErrorText("name: w\nstages:\n  a: {run: [x], retry: {infra_limit: -1}}\n"),
            "wf.yaml:3:38: retry.infra_limit in stage 'a': expected an integer from 0 to 1000, "
            "got '-1'");
}

TEST(PlacementFieldsTest, InfraFailureKinds) {
  EXPECT_TRUE(IsInfraFailure("preempted"));
  EXPECT_TRUE(IsInfraFailure("node_fail"));
  EXPECT_TRUE(IsInfraFailure("lost"));
  EXPECT_FALSE(IsInfraFailure("exit"));
  EXPECT_FALSE(IsInfraFailure("oom"));
}

}  // namespace
}  // namespace longhaul::workflow
