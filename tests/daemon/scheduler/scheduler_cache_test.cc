#include <nlohmann/json.hpp>

#include "daemon/scheduler/planner.h"
#include "daemon/scheduler/watcher.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

constexpr char kChain[] = R"(
name: chain
params: {samples: "100", engine: vllm}
stages:
  gen: {run: [gen, "${params.samples}"]}
  train: {needs: [gen], run: [train, "${gen.outputs.data}"]}
  bench: {needs: [train], run: [bench, "${params.engine}", "${train.outputs.model}"]}
  report: {needs: [bench], run: [report], cache: false}
)";

void RunAll(SchedulerTest* t, uint64_t session,
            const std::function<std::vector<v1::StartAttempt>()>& take,
            const std::function<void(int64_t, const std::string&)>& finish) {
  for (;;) {
    auto starts = take();
    if (starts.empty()) return;
    for (const auto& s : starts) finish(s.attempt_id(), s.stage());
  }
}

class CacheTest : public SchedulerTest {
 protected:
  // Runs every stage to success, each reporting an output named after it.
  void Finish(uint64_t n1) {
    RunAll(this, n1, [this] { return TakeStarts(); },
           [&](int64_t id, const std::string& stage) {
             std::string out = stage == "gen" ? "data" : stage == "train" ? "model" : "x";
             Events(n1, id, {R"({"output": {"name": ")" + out + R"(", "value": "/out/)" + stage +
                             R"("}})"});
             Exit(n1, id, 0);
           });
  }
};

TEST_F(CacheTest, AnIdenticalRunReusesEveryCacheableStage) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kChain);
  Finish(n1);
  ASSERT_EQ(GetRun(first).status(), v1::RUN_SUCCEEDED);
  int64_t second = Submit(kChain);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "report");  // cache: false
  v1::Stage train = GetStage(second, "train");
  EXPECT_EQ(train.status(), v1::STAGE_CACHED);
  EXPECT_EQ(train.cached_from_run_id(), first);
  EXPECT_EQ(train.outputs().at("model"), "/out/train");
  EXPECT_EQ(train.plan_reason(), "same inputs as run " + std::to_string(first));
  EXPECT_EQ(GetStage(second, "report").plan_reason(), "cache: false");
  // A watcher of the running run sees where the cached stage comes from in its snapshot.
  auto w = std::make_shared<Watcher>();
  Batch([&] { ASSERT_TRUE(scheduler_->Watch(second, w).ok()); });
  v1::RunUpdate u;
  bool final = false;
  ASSERT_TRUE(w->Next(&u, &final, 0));
  ASSERT_TRUE(u.snapshot());
  bool seen = false;
  for (const auto& s : u.run().stages()) {
    if (s.name() != "train") continue;
    seen = true;
    EXPECT_EQ(s.cached_from_run_id(), first);
    EXPECT_EQ(s.cached_from_stage(), "train");
  }
  EXPECT_TRUE(seen);
}

TEST_F(CacheTest, StoresDescriptionsAndWhatWentIntoEachKey) {
  int64_t run = Submit(R"(
name: described
description: two stages that say what they are for
params: {samples: "100", unused: x}
stages:
  gen: {run: [gen, "${params.samples}"], env: {SEED: "7"}, description: makes the data}
  train: {needs: [gen], run: [train, "${gen.outputs.data}"], cache_version: "2"}
)");
  v1::Run got = GetRun(run);
  EXPECT_EQ(got.description(), "two stages that say what they are for");
  v1::Stage gen = GetStage(run, "gen");
  EXPECT_EQ(gen.description(), "makes the data");
  EXPECT_EQ(GetStage(run, "train").description(), "");
  nlohmann::json fp = nlohmann::json::parse(gen.fingerprint());
  EXPECT_EQ(fp["key"], gen.cache_key());
  EXPECT_EQ(fp["definition"]["run"], nlohmann::json({"gen", "${params.samples}"}));
  EXPECT_EQ(fp["definition"]["env"], nlohmann::json({{"SEED", "7"}}));
  EXPECT_EQ(fp["params"], nlohmann::json({{"samples", "100"}}));  // only what it uses
  nlohmann::json train = nlohmann::json::parse(GetStage(run, "train").fingerprint());
  EXPECT_EQ(train["definition"]["cache_version"], "2");
  EXPECT_EQ(train["upstream"], nlohmann::json({{"gen", gen.cache_key()}}));
}

TEST_F(CacheTest, AChangedParamRerunsOnlyTheStagesThatUseItAndWhatFollows) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kChain);
  Finish(n1);
  int64_t pivot = Submit(kChain, {{"engine", "sglang"}});
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "bench");
  EXPECT_EQ(starts[0].argv(2), "/out/train");  // the reused stage's output, by template
  EXPECT_EQ(GetStage(pivot, "gen").status(), v1::STAGE_CACHED);
  EXPECT_EQ(GetStage(pivot, "train").status(), v1::STAGE_CACHED);
  EXPECT_EQ(GetStage(pivot, "bench").plan_reason(), "param engine changed (vllm -> sglang)");

  // A param early in the chain changes every key downstream of it.
  int64_t more = Submit(kChain, {{"samples", "200"}});
  (void)more;
  auto plan = PlanRun(store_.get(), [&] {
    SubmitInput in;
    in.workflow = *workflow::ParseWorkflow(kChain, "c.yaml");
    in.overrides = {{"samples", "300"}};
    in.parent_run_id = first;
    return in;
  }());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->stages[0].action, "run");
  EXPECT_EQ(plan->stages[0].reason, "param samples changed (100 -> 300)");
  EXPECT_EQ(plan->stages[1].reason, "upstream 'gen' changed");
  EXPECT_EQ(plan->stages[2].action, "run");
}

TEST_F(CacheTest, NoCacheAndFromForceReruns) {
  uint64_t n1 = Connect("n1");
  int64_t first = Submit(kChain);
  Finish(n1);
  SubmitInput in;
  in.workflow = *workflow::ParseWorkflow(kChain, "c.yaml");
  in.parent_run_id = first;
  in.from_stage = "train";
  auto plan = PlanRun(store_.get(), in);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->stages[0].action, "reuse");
  EXPECT_EQ(plan->stages[1].reason, "--from train");
  EXPECT_EQ(plan->stages[2].reason, "downstream of --from train");
  in.from_stage = "nope";
  EXPECT_FALSE(PlanRun(store_.get(), in).ok());
  in.from_stage = "";
  in.no_cache = true;
  plan = PlanRun(store_.get(), in);
  for (const auto& sp : plan->stages) EXPECT_EQ(sp.action, "run") << sp.stage;
}

TEST_F(CacheTest, AFailedStageIsNotReused) {
  uint64_t n1 = Connect("n1");
  Submit(kChain);
  Exit(n1, TakeStarts()[0].attempt_id(), 1);  // gen fails
  int64_t second = Submit(kChain);
  auto starts = TakeStarts();
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].stage(), "gen");
  EXPECT_NE(GetStage(second, "gen").plan_reason().find("did not finish"), std::string::npos)
      << GetStage(second, "gen").plan_reason();
}

}  // namespace
}  // namespace longhaul::scheduler
