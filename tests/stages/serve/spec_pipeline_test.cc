// The speculative-decoding campaign on the client side, end to end on the reference engine:
// lh-datagen regenerates answers, lh-extract and lh-finetune train a drafter, lh-serve serves
// target and drafter, lh-bench measures acceptance and speed-up against the target alone.
#include <gtest/gtest.h>

#include "tests/stages/serve/refengine_harness.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

json Bench(const TempDir& dir, const std::string& endpoint, const std::string& name,
           const std::string& baseline = "") {
  std::vector<std::string> args = {"--endpoint",     endpoint,
                                   "--model",        "refengine",
                                   "--rate",         "20",
                                   "--num-requests", "40",
                                   "--prompts",      dir.Join("samples.jsonl"),
                                   "--max-tokens",   "48",
                                   "--temperature",  "0",
                                   "--out",          dir.Join(name + ".json")};
  if (!baseline.empty()) {
    args.push_back("--baseline");
    args.push_back(baseline);
  }
  auto r = RunStage("lh-bench", args, dir.Join(name + ".events.jsonl"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(ReadTextFile(dir.Join(name + ".json")));
}

std::string Serve(ServeProcess& serve, std::vector<std::string> args) {
  serve.Start(args);
  EXPECT_TRUE(serve.WaitReady()) << serve.Log();
  return serve.Output("endpoint");
}

TEST(SpecPipelineTest, TrainedDrafterIsAcceptedAndSpeedsUpDecoding) {
  TempDir dir;
  const std::string cost = "extra_args=--target-step-ms 2 --draft-step-ms 0.2";
  ServeProcess target(dir, "target");
  std::string endpoint = Serve(target, {"--set", cost});
  WriteQuestions(dir.Join("prompts.jsonl"), 200);
  auto r = RunStage(
      "lh-datagen",
      {"--endpoint", endpoint, "--model", "refengine", "--prompts", dir.Join("prompts.jsonl"),
       "--out", dir.Join("samples.jsonl"), "--samples", "200", "--max-tokens", "200",
       "--temperature", "0.8", "--seed", "3", "--concurrency", "32"},
      dir.Join("datagen.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json base = Bench(dir, endpoint, "baseline");
  EXPECT_EQ(base["spec_decoding"]["style"], "none");
  ASSERT_EQ(target.Stop(), 0);

  r = RunStage(
      "lh-extract",
      {"--backend", "refengine", "--data", dir.Join("samples.jsonl"), "--out", dir.Join("extract")},
      dir.Join("extract.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  r = RunStage("lh-finetune",
               {"--backend", "refengine", "--data", dir.Join("extract"), "--out",
                dir.Join("finetune"), "--epochs", "2"},
               dir.Join("finetune.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;

  ServeProcess spec(dir, "spec");
  endpoint = Serve(spec, {"--drafter", dir.Join("finetune/drafter"), "--set", cost});
  json res = Bench(dir, endpoint, "spec", dir.Join("baseline.json"));
  ASSERT_EQ(spec.Stop(), 0);

  const json& sd = res["spec_decoding"];
  ASSERT_EQ(sd["style"], "vllm") << sd.dump();
  double rate = sd["acceptance_rate"], length = sd["acceptance_length"];
  EXPECT_GT(rate, 0.05);
  EXPECT_LT(rate, 0.95);
  EXPECT_GT(length, 1.0);
  const json& pos = sd["per_position_acceptance"];
  ASSERT_GE(pos.size(), 2u);
  for (size_t i = 1; i < pos.size(); ++i) EXPECT_LE(pos[i].get<double>(), pos[i - 1].get<double>());
  EXPECT_EQ(sd["server_generation_tokens"].get<double>(),
            res["throughput"]["output_tokens"].get<double>());
  // Several tokens per verification step: each target step costs the same simulated time, so
  // the time per output token drops.
  EXPECT_GT(res["baseline"]["speedup_tpot"].get<double>(), 1.0) << res["baseline"].dump();

  // The integration bug of docs/engines.md: the drafter fed the wrong position's hidden state.
  ServeProcess bad(dir, "misaligned");
  endpoint = Serve(
      bad, {"--drafter", dir.Join("finetune/drafter"), "--set", cost + " --drafter-misaligned"});
  json mis = Bench(dir, endpoint, "misaligned");
  ASSERT_EQ(bad.Stop(), 0);
  EXPECT_LT(mis["spec_decoding"]["acceptance_rate"].get<double>(), rate);
}

}  // namespace
}  // namespace longhaul::testing
