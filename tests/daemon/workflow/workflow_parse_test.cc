#include <gtest/gtest.h>

#include "core/strings.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::workflow {
namespace {

constexpr char kCampaign[] = R"(name: eagle3-campaign
description: EAGLE-3 drafter, served and benchmarked
params:
  model: /models/target
  spec_engine: vllm
  samples: 10000
defaults:
  retry: {limit: 2, backoff: 30s, max_backoff: 10m, on: [exit, signal, stalled, lost]}
  timeout: 24h
  stall_timeout: 30m
  ready_timeout: 40m
  resources: {cpus: 2, memory: 8G}
  env: {HF_HOME: /cache/hf, LOG_LEVEL: info}
stages:
  bench:
    needs: [serve, finetune]
    run: [lh-bench, --endpoint, "${serve.outputs.endpoint}"]
  target_server:
    kind: service
    run: [lh-serve, --profile, vllm, --model, "${params.model}"]
    resources: {gpus: 8}
  datagen:
    description: generate training data
    needs: [target_server]
    run: [lh-datagen, --endpoint, "${target_server.outputs.endpoint}", --samples,
          "${params.samples}", --out, "${output_dir}/samples.jsonl"]
    resume: true
    retry: {limit: 5}
    env: {LOG_LEVEL: debug}
  finetune:
    needs: [datagen]
    run: [lh-finetune, --data, "${datagen.outputs.samples}"]
    resources: {gpus: 1, memory: 64Gi}
    timeout: 48h
    cache_version: "2"
    grace: 1m
  serve:
    kind: service
    needs: [finetune]
    run: [lh-serve, --profile, "${params.spec_engine}"]
    ready_timeout: 10m
    retry: {on: [service_lost], exit_codes: [1, 3]}
)";

TEST(WorkflowParseTest, ParsesTopLevelAndParams) {
  Result<Workflow> wf = ParseWorkflow(kCampaign, "eagle.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->name, "eagle3-campaign");
  EXPECT_EQ(wf->description, "EAGLE-3 drafter, served and benchmarked");
  EXPECT_EQ(wf->path, "eagle.yaml");
  ASSERT_EQ(wf->params.size(), 3u);
  EXPECT_EQ(wf->params[0].name, "model");
  EXPECT_EQ(wf->params[2].name, "samples");
  EXPECT_EQ(wf->params[2].default_value, "10000");
  EXPECT_EQ(wf->params[2].pos.line, 6);
  ASSERT_NE(wf->FindParam("spec_engine"), nullptr);
  EXPECT_EQ(wf->FindParam("spec_engine")->default_value, "vllm");
  EXPECT_EQ(wf->FindParam("nope"), nullptr);
}

TEST(WorkflowParseTest, StagesComeInTopologicalOrderTiesByFileOrder) {
  Result<Workflow> wf = ParseWorkflow(kCampaign, "eagle.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  std::vector<std::string> names;
  for (const StageSpec& s : wf->stages) names.push_back(s.name);
  EXPECT_EQ(StrJoin(names, " "), "target_server datagen finetune serve bench");
}

TEST(WorkflowParseTest, DefaultsMergeFieldByField) {
  Result<Workflow> wf = ParseWorkflow(kCampaign, "eagle.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();

  const StageSpec* datagen = wf->FindStage("datagen");
  ASSERT_NE(datagen, nullptr);
  EXPECT_EQ(datagen->pos.line, 22);
  EXPECT_EQ(datagen->pos.column, 3);
  EXPECT_EQ(datagen->description, "generate training data");
  // Own retry.limit, the defaults' backoff, max_backoff and on.
  EXPECT_EQ(datagen->retry.limit, 5);
  EXPECT_EQ(datagen->retry.backoff_ms, 30'000);
  EXPECT_EQ(datagen->retry.max_backoff_ms, 600'000);
  EXPECT_EQ(datagen->retry.on.names(), (std::set<std::string>{"exit", "signal", "stalled", "lost"}));
  EXPECT_TRUE(datagen->resume);
  EXPECT_TRUE(datagen->cache);
  EXPECT_EQ(datagen->timeout_ms, 24 * 3'600'000LL);
  EXPECT_EQ(datagen->stall_timeout_ms, 30 * 60'000LL);
  // A task does not take the defaults' ready_timeout.
  EXPECT_FALSE(datagen->ready_timeout_ms.has_value());
  EXPECT_EQ(datagen->resources.cpus, 2);
  EXPECT_EQ(datagen->resources.memory_bytes, 8LL << 30);
  EXPECT_EQ(datagen->env.at("HF_HOME"), "/cache/hf");
  EXPECT_EQ(datagen->env.at("LOG_LEVEL"), "debug");
  EXPECT_EQ(datagen->run.size(), 7u);
  EXPECT_EQ(datagen->run[4], "${params.samples}");
  EXPECT_EQ(datagen->needs, std::vector<std::string>{"target_server"});
  EXPECT_EQ(datagen->grace_ms, 10'000);

  const StageSpec* finetune = wf->FindStage("finetune");
  ASSERT_NE(finetune, nullptr);
  // resources merge per field: own gpus and memory, the defaults' cpus.
  EXPECT_EQ(finetune->resources.gpus, 1);
  EXPECT_EQ(finetune->resources.memory_bytes, 64LL << 30);
  EXPECT_EQ(finetune->resources.cpus, 2);
  EXPECT_EQ(finetune->timeout_ms, 48 * 3'600'000LL);
  EXPECT_EQ(finetune->cache_version, "2");
  EXPECT_EQ(finetune->grace_ms, 60'000);
  EXPECT_EQ(finetune->retry.limit, 2);

  const StageSpec* target = wf->FindStage("target_server");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->kind, StageKind::kService);
  EXPECT_EQ(target->ready_timeout_ms, 40 * 60'000LL);
  EXPECT_EQ(target->resources.gpus, 8);

  const StageSpec* serve = wf->FindStage("serve");
  ASSERT_NE(serve, nullptr);
  EXPECT_EQ(serve->ready_timeout_ms, 10 * 60'000LL);
  EXPECT_EQ(serve->retry.on.names(), (std::set<std::string>{"service_lost"}));
  EXPECT_EQ(serve->retry.exit_codes, (std::vector<int>{1, 3}));
  EXPECT_EQ(serve->retry.limit, 2);
}

TEST(WorkflowParseTest, BuiltInDefaultsWithoutDefaultsSection) {
  Result<Workflow> wf = ParseWorkflow(R"(name: tiny
stages:
  only:
    run: [echo, hi]
)",
                                      "tiny.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  ASSERT_EQ(wf->stages.size(), 1u);
  const StageSpec& s = wf->stages[0];
  EXPECT_EQ(s.kind, StageKind::kTask);
  EXPECT_EQ(s.retry.limit, 0);
  EXPECT_EQ(s.retry.on.size(), 10u);  // all kinds but oom and cancelled_outside
  EXPECT_EQ(s.retry.on.count("gpu_idle"), 1u);
  EXPECT_FALSE(s.gpu_idle_ms.has_value());
  EXPECT_FALSE(s.gpu_idle_fail);
  EXPECT_EQ(s.resources.cpus, 1);
  EXPECT_EQ(s.resources.gpus, 0);
  EXPECT_FALSE(s.timeout_ms.has_value());
  EXPECT_FALSE(s.resume);
  EXPECT_TRUE(s.cache);
  EXPECT_TRUE(s.env.empty());
}

TEST(WorkflowParseTest, ScalarsKeepTheirTextAndCacheCanBeOff) {
  Result<Workflow> wf = ParseWorkflow(R"(name: w.1-x_y
params: {flag: true, ratio: 0.50, quoted: "a b"}
stages:
  s:
    run: [prog, 8, 0.50, "with space", 'single']
    cache: false
    resources: {memory: 1073741824, cpus: 0.5}
)",
                                      "w.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  EXPECT_EQ(wf->FindParam("flag")->default_value, "true");
  EXPECT_EQ(wf->FindParam("ratio")->default_value, "0.50");
  EXPECT_EQ(wf->FindParam("quoted")->default_value, "a b");
  const StageSpec& s = wf->stages[0];
  EXPECT_EQ(s.run, (std::vector<std::string>{"prog", "8", "0.50", "with space", "single"}));
  EXPECT_FALSE(s.cache);
  EXPECT_EQ(s.resources.memory_bytes, 1073741824);
  EXPECT_EQ(s.resources.cpus, 0.5);
}

TEST(ResolveParamsTest, OverridesAndDefaults) {
  Result<Workflow> wf = ParseWorkflow(kCampaign, "eagle.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  auto params = ResolveParams(*wf, {{"spec_engine", "sglang"}});
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(params->at("spec_engine"), "sglang");
  EXPECT_EQ(params->at("model"), "/models/target");
  EXPECT_EQ(params->size(), 3u);
}

TEST(ResolveParamsTest, UnknownNameListsTheKnownParams) {
  Result<Workflow> wf = ParseWorkflow(kCampaign, "eagle.yaml");
  ASSERT_TRUE(wf.ok()) << wf.status();
  auto params = ResolveParams(*wf, {{"spec_engin", "sglang"}, {"modl", "x"}});
  ASSERT_FALSE(params.ok());
  EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
  std::string msg = ToStd(params.status().message());
  EXPECT_NE(msg.find("unknown params 'modl', 'spec_engin'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("model, spec_engine, samples"), std::string::npos) << msg;
}

}  // namespace
}  // namespace longhaul::workflow
