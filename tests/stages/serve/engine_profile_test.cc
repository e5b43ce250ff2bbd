#include "stages/serve/engine_profile.h"

#include <gtest/gtest.h>

#include "stages/serve/argv_template.h"
#include "tests/testing/test_util.h"

namespace longhaul::stages {
namespace {

std::string Error(const std::string& yaml) {
  auto p = ParseEngineProfile(yaml, "x.yaml");
  return p.ok() ? "" : std::string(p.status().message());
}

TEST(EngineProfileTest, ParsesEverySection) {
  auto p = ParseEngineProfile(R"(
name: e
argv: [run, "${model}"]
optional:
  - when: [drafter, k]
    argv: [--d, "${drafter}"]
defaults: {k: "4", empty:}
env: {A: "1"}
port: 8123
health: {path: /h, interval: 250ms, serving_interval: 2s, serving_failures: 5}
probe: {api: chat, model: "${served}", prompt: Hi, max_tokens: 2}
metrics: {path: /m, style: sglang, names: {accept_length: "sglang:spec_accept_length"}}
fatal_log_patterns: ['CUDA out of memory', '^Traceback']
fatal_while_serving: true
ready_log_line: 'fired up'
timeouts: {load: 10m, probe: 30s, stop_grace: 3s}
)",
                              "x.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->optional[0].when, (std::vector<std::string>{"drafter", "k"}));
  EXPECT_EQ(p->defaults.at("empty"), "");
  EXPECT_EQ(p->port, 8123);
  EXPECT_EQ(p->health_interval_ms, 250);
  EXPECT_EQ(p->serving_health_failures, 5);
  EXPECT_EQ(p->probe_api, OpenAiApi::kChat);
  EXPECT_EQ(p->probe_max_tokens, 2);
  EXPECT_EQ(p->metrics_style, "sglang");
  EXPECT_EQ(p->fatal_log_patterns.size(), 2u);
  EXPECT_TRUE(p->fatal_while_serving);
  ASSERT_TRUE(p->ready_log_line.has_value());
  EXPECT_EQ(p->load_timeout_ms, 600'000);
  EXPECT_EQ(p->stop_grace_ms, 3000);
}

TEST(EngineProfileTest, ErrorsNameFileLineAndColumn) {
  EXPECT_NE(Error("name: e\nargv: [a]\nhelth: {path: /x}\n")
                .find("x.yaml:3:1: unknown key 'helth' in the profile"),
            std::string::npos);
  EXPECT_NE(
      Error("name: e\nargv: [a]\ntimeouts:\n  load: soon\n").find("x.yaml:4:9: timeouts.load"),
      std::string::npos);
  EXPECT_NE(Error("name: e\nargv: [a]\nfatal_log_patterns: ['(unclosed']\n")
                .find("fatal_log_patterns[0]: bad regex '(unclosed'"),
            std::string::npos);
  EXPECT_NE(Error("name: e\n").find("missing 'argv'"), std::string::npos);
  EXPECT_NE(Error("name: e\nargv: [a\n").find("x.yaml:"), std::string::npos);
  EXPECT_NE(Error("name: e\nargv: [a]\nprobe: {api: grpc}\n").find("probe.api 'grpc'"),
            std::string::npos);
  EXPECT_NE(Error("name: e\nargv: [a]\nport: 99999\n").find("port: must be <= 65535"),
            std::string::npos);
}

// The profiles that ship with the project parse, and render what docs/engines.md says.
TEST(EngineProfileTest, ShippedProfilesRenderTheEnginesCommands) {
  std::string dir = testing::SourceDir() + "/workflows/engines/";
  for (const char* name : {"vllm", "sglang", "refengine"}) {
    auto p = LoadEngineProfile(dir + name + ".yaml");
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->name, name);
  }
  auto vllm = *LoadEngineProfile(dir + "vllm.yaml");
  TemplateVars v = vllm.defaults;
  v["model"] = "/models/t";
  v["served_model_name"] = "/models/t";
  v["draft_tp"] = "8";
  v["tp"] = "8";
  v["host"] = "0.0.0.0";
  v["port"] = "30000";
  v["drafter"] = "/ckpt/d";
  auto cmd = RenderCommand(vllm, v);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  std::vector<std::string> want = {
      "vllm",
      "serve",
      "/models/t",
      "--host",
      "0.0.0.0",
      "--port",
      "30000",
      "--tensor-parallel-size",
      "8",
      "--served-model-name",
      "/models/t",
      "--speculative-config",
      R"({"method": "eagle3", "model": "/ckpt/d", "num_speculative_tokens": 4, "draft_tensor_parallel_size": 8})"};
  EXPECT_EQ(cmd->argv, want);

  auto sgl = *LoadEngineProfile(dir + "sglang.yaml");
  TemplateVars s = sgl.defaults;
  s["model"] = s["served_model_name"] = "/models/t";
  s["host"] = "127.0.0.1";
  s["port"] = "1";
  s["drafter"] = "";
  cmd = RenderCommand(sgl, s);
  ASSERT_TRUE(cmd.ok()) << cmd.status();
  for (const auto& a : cmd->argv) EXPECT_EQ(a.find("--speculative"), std::string::npos);
  s["drafter"] = "/ckpt/d";
  cmd = RenderCommand(sgl, s);
  std::string joined;
  for (const auto& a : cmd->argv) joined += a + " ";
  EXPECT_NE(joined.find("--speculative-algorithm EAGLE3 --speculative-draft-model-path /ckpt/d "
                        "--speculative-num-steps 3 --speculative-eagle-topk 1 "
                        "--speculative-num-draft-tokens 4"),
            std::string::npos)
      << joined;
  EXPECT_EQ(sgl.ready_log_line->text, "The server is fired up and ready to roll!");
}

}  // namespace
}  // namespace longhaul::stages
