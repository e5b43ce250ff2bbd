// `cache: {key_on: [...]}` in a workflow file: the names it takes and the errors it gives.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {
namespace {

TEST(CacheKeyOnTest, NamesSetTheirBitsAndKeepTheStageCacheable) {
  Result<Workflow> wf = ParseWorkflow(
      "name: w\nstages:\n"
      "  a: {run: [x]}\n"
      "  b: {run: [lh-serve], cache: {key_on: [engine_version]}}\n"
      "  c:\n    run: [y]\n    cache:\n      key_on: [executable, engine_version]\n",
      "wf.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->FindStage("a")->cache_key_on, 0);
  EXPECT_EQ(wf->FindStage("b")->cache_key_on, kKeyOnEngineVersion);
  EXPECT_TRUE(wf->FindStage("b")->cache);
  EXPECT_EQ(wf->FindStage("c")->cache_key_on, kKeyOnEngineVersion | kKeyOnExecutable);
}

TEST(CacheKeyOnTest, AnUnknownNameIsAnErrorAtItsPosition) {
  Result<Workflow> wf = ParseWorkflow(
      "name: w\nstages:\n  b:\n    run: [x]\n    cache: {key_on: [engine_version, engine]}\n",
      "wf.yaml");
  ASSERT_FALSE(wf.ok());
  EXPECT_EQ(ToStd(wf.status().message()),
            "wf.yaml:5:38: cache.key_on in stage 'b': unknown name 'engine' (expected one of "
            "engine_version, executable)");
}

TEST(CacheKeyOnTest, AnUnknownKeyOrAScalarKeyOnIsAnError) {
  Result<Workflow> wf = ParseWorkflow(
      "name: w\nstages:\n  b:\n    run: [x]\n    cache: {keyon: [executable]}\n", "wf.yaml");
  ASSERT_FALSE(wf.ok());
  EXPECT_EQ(ToStd(wf.status().message()),
            "wf.yaml:5:13: unknown key 'keyon' in cache in stage 'b' (did you mean 'key_on'?)");
  Result<Workflow> scalar = ParseWorkflow(
      "name: w\nstages:\n  b:\n    run: [x]\n    cache: {key_on: executable}\n", "wf.yaml");
  ASSERT_FALSE(scalar.ok());
  EXPECT_NE(ToStd(scalar.status().message()).find("wf.yaml:5:"), std::string::npos)
      << scalar.status().message();
}

}  // namespace
}  // namespace longhaul::workflow
