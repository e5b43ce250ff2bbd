// `foreach`: a stage declared over a list or a matrix becomes one stage per item, with its
// own name, substituted run and env, its own cache key, and needs resolved per item.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/strings.h"
#include "daemon/workflow/cache_key.h"
#include "daemon/workflow/limits.h"
#include "daemon/workflow/workflow.h"
#include "tests/daemon/workflow/parse_error.h"
#include "tests/testing/test_util.h"

namespace longhaul::workflow {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Names(const Workflow& wf) {
  std::vector<std::string> out;
  for (const StageSpec& s : wf.stages) out.push_back(s.name);
  return out;
}

TEST(ForeachTest, AMatrixMakesOneStagePerCombinationFirstKeyOutermost) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  train: {run: [train]}
  bench:
    foreach: {tokens: [3, 5], engine: [vllm, sglang]}
    needs: [train]
    run: [bench, --tokens, "${item.tokens}", "--engine=${item.engine}", "$${item.tokens}"]
    env: {ENGINE: "${item.engine}"}
  report:
    needs: [bench]
    run: [report]
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_THAT(Names(*wf), ElementsAre("train", "bench-3-vllm", "bench-3-sglang", "bench-5-vllm",
                                      "bench-5-sglang", "report"));
  const StageSpec* one = wf->FindStage("bench-5-sglang");
  ASSERT_NE(one, nullptr);
  // "$${" stays a literal "${" for the template parser: not an item.
  EXPECT_THAT(one->run, ElementsAre("bench", "--tokens", "5", "--engine=sglang", "$${item.tokens}"));
  EXPECT_EQ(one->env.at("ENGINE"), "sglang");
  EXPECT_THAT(one->needs, ElementsAre("train"));
  // A stage that needs a foreach stage needs every item.
  EXPECT_THAT(wf->FindStage("report")->needs,
              ElementsAre("bench-3-vllm", "bench-3-sglang", "bench-5-vllm", "bench-5-sglang"));
}

TEST(ForeachTest, EachItemHasItsOwnCacheKey) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  s:
    foreach: [a, b]
    run: [echo, "${item}"]
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_THAT(Names(*wf), ElementsAre("s-a", "s-b"));
  StageFingerprint a = FingerprintStage(*wf->FindStage("s-a"), {}, {});
  StageFingerprint b = FingerprintStage(*wf->FindStage("s-b"), {}, {});
  EXPECT_NE(a.key, b.key);
  EXPECT_THAT(a.definition->run, ElementsAre("echo", "a"));
}

TEST(ForeachTest, AMatrixOverTheSameKeysNeedsTheSameItem) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  serve:
    foreach: {engine: [vllm, sglang]}
    kind: service
    run: [serve, "${item.engine}"]
  bench:
    foreach: {engine: [vllm, sglang], tokens: [3, 5]}
    needs: [serve]
    run: [bench, "${serve-${item.engine}.outputs.url}", "${item.tokens}"]
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_THAT(wf->FindStage("bench-vllm-5")->needs, ElementsAre("serve-vllm"));
  EXPECT_THAT(wf->FindStage("bench-sglang-3")->needs, ElementsAre("serve-sglang"));
  // Items are substituted before templates are read: an item can name its own upstream item.
  EXPECT_EQ(wf->FindStage("bench-sglang-3")->run[1], "${serve-sglang.outputs.url}");
}

TEST(ForeachTest, ValuesBecomeStageNameCharacters) {
  Result<Workflow> wf = ParseWorkflow(R"(name: sweep
stages:
  s: {foreach: [/models/a, "0.5"], run: [x, "${item}"]}
)",
                                      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_THAT(Names(*wf), ElementsAre("s-_models_a", "s-0_5"));
  EXPECT_EQ(wf->FindStage("s-_models_a")->run[1], "/models/a");
}

TEST(ForeachTest, BadMatricesAreReportedWithTheirPosition) {
  EXPECT_EQ(ParseError("name: w\nstages:\n  s:\n    foreach: {k: []}\n    run: [x]\n"),
            "wf.yaml:4:18: foreach.k in stage 's': expected at least one value");
  EXPECT_EQ(ParseError("name: w\nstages:\n  s:\n    foreach: [a, [b]]\n    run: [x]\n"),
            "wf.yaml:4:18: foreach[1] in stage 's': expected a string, got a list");
  EXPECT_EQ(ParseError("name: w\nstages:\n  s:\n    foreach: {k: [1]}\n    run: [x, \"${item.j}\"]\n"),
            "wf.yaml:5:15: run[1] in stage 's': ${item.j} is not an item of this stage's foreach "
            "(its keys: k)");
  EXPECT_EQ(ParseError("name: w\nstages:\n  s:\n    foreach: [1, 2]\n    env: {A: \"${item.k}\"}\n"
                  "    run: [x]\n"),
            "wf.yaml:5:15: env A in stage 's': ${item.k} is not an item of this stage's foreach "
            "(a plain list: write ${item})");
  EXPECT_EQ(ParseError("name: w\nstages:\n  s:\n    foreach: 3\n    run: [x]\n"),
            "wf.yaml:4:14: foreach in stage 's': expected a list of values or a mapping of KEY: "
            "[values], got '3'");
  EXPECT_EQ(ParseError("name: w\nstages:\n  s-a: {run: [x]}\n  s:\n    foreach: [a]\n    run: [x]\n"),
            "wf.yaml:4:3: foreach in stage 's' makes stage 's-a', a name already taken (line 3)");
}

TEST(ForeachTest, TheStageLimitCountsItems) {
  std::string values;
  for (int i = 0; i < 1000; ++i) values += StrCat(i == 0 ? "" : ", ", i);
  std::string text = StrCat("name: w\nstages:\n  s:\n    foreach: {a: [", values, "], b: [", values,
                            "]}\n    run: [x]\n");
  EXPECT_EQ(ParseError(text), StrCat("wf.yaml:3:3: 1000000 stages once foreach is expanded, over the "
                                "limit of ",
                                kMaxStages, " stages in one workflow"));
}

TEST(ForeachTest, TheShippedEagle3SweepExpandsToSixItemsPerSweptStage) {
  std::string path = testing::SourceDir() + "/workflows/examples/eagle3-sweep.yaml";
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  Result<Workflow> wf = ParseWorkflow(*text, path);
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->stages.size(), 24u);
  const StageSpec* bench = wf->FindStage("bench_spec-refengine-misaligned-5");
  ASSERT_NE(bench, nullptr);
  EXPECT_THAT(bench->needs, ElementsAre("spec_server-refengine-misaligned-5", "bench_baseline",
                                        "datagen"));
  EXPECT_EQ(bench->run[2], "${spec_server-refengine-misaligned-5.outputs.endpoint}");
  const StageSpec* server = wf->FindStage("spec_server-refengine-2");
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->run[2], "refengine");
  EXPECT_EQ(server->run[6], "num_speculative_tokens=2");
}

}  // namespace
}  // namespace longhaul::workflow
