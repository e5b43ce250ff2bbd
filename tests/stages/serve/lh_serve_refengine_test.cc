// The client stages against the real lh-refengine: lh-serve with the repository's refengine
// profile (slow load waited out, hang, crash, fatal line, stop), then lh-bench and lh-datagen
// against the endpoint it reports.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "tests/stages/serve/refengine_harness.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

class RefengineClientTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

TEST_F(RefengineClientTest, ServeThenBenchAndDatagenAgainstTheEndpoint) {
  ServeProcess serve(dir_, "serve");
  serve.Start({});
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  std::string endpoint = serve.Output("endpoint");
  EXPECT_EQ(serve.Output("model"), "refengine");

  auto r = RunStage(
      "lh-bench",
      {"--endpoint", endpoint, "--model", "refengine", "--rate", "100", "--num-requests", "50",
       "--random-input-len", "16", "--random-output-len", "24", "--out", dir_.Join("bench.json")},
      dir_.Join("bench.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadTextFile(dir_.Join("bench.json")));
  EXPECT_EQ(res["requests"]["completed"], 50);
  EXPECT_EQ(res["throughput"]["output_tokens"], 50 * 24);  // ignore_eos honoured
  // The client's count and the server's own agree.
  EXPECT_EQ(res["spec_decoding"]["server_generation_tokens"], 50 * 24.0);
  EXPECT_GT(res["latency_ms"]["ttft"]["p50"].get<double>(), 0.0);

  WriteQuestions(dir_.Join("prompts.jsonl"), 20);
  r = RunStage(
      "lh-datagen",
      {"--endpoint", endpoint, "--model", "refengine", "--prompts", dir_.Join("prompts.jsonl"),
       "--out", dir_.Join("samples.jsonl"), "--samples", "20", "--max-tokens", "120"},
      dir_.Join("datagen.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = StrSplit(ReadTextFile(dir_.Join("samples.jsonl")), '\n');
  EXPECT_EQ(lines.size(), 21u);  // 20 and the empty string after the last newline
  auto m = ReadMetrics(dir_.Join("datagen.events.jsonl"));
  EXPECT_EQ(m["samples"], 20);
  EXPECT_GT(m["output_tokens_per_s"], 0);

  pid_t engine = serve.EnginePid();
  EXPECT_EQ(serve.Stop(), 0) << serve.Log();
  EXPECT_FALSE(ProcessAlive(engine));
}

// lh-bench's figures against an engine whose cost is known: every target step takes 10 ms and
// the prompt costs nothing, so at concurrency 1 a 20-token answer has TPOT = 10 ms and its
// e2e is 20 steps. The cost model is a floor: the engine cannot be faster than its step timer
// (-5 % for timer granularity). It has no ceiling a test could rely on, since a loaded machine
// makes every step slower; what holds under any load is how the figures relate to each other.
TEST_F(RefengineClientTest, BenchFiguresMatchTheEnginesCostModel) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "extra_args=--target-step-ms 10"});
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  auto r = RunStage("lh-bench",
                    {"--endpoint", serve.Output("endpoint"), "--model", "refengine",
                     "--concurrency", "1", "--num-requests", "8", "--random-input-len", "8",
                     "--random-output-len", "20", "--out", dir_.Join("bench.json")},
                    dir_.Join("bench.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = json::parse(ReadTextFile(dir_.Join("bench.json")));
  EXPECT_EQ(res["throughput"]["output_tokens"], 8 * 20);
  double tpot = res["latency_ms"]["tpot"]["p50"].get<double>();
  EXPECT_GE(tpot, 10.0 * 0.95);
  double e2e = res["latency_ms"]["e2e"]["p50"].get<double>();
  EXPECT_GE(e2e, 20 * 10.0 * 0.95);
  double ttft = res["latency_ms"]["ttft"]["p50"].get<double>();
  EXPECT_GE(ttft, 10.0 * 0.95);  // the first token is one step
  // The first token is part of the answer, and the other 19 come at least a TPOT floor apart.
  EXPECT_LT(ttft, e2e);
  EXPECT_GE(e2e, ttft + 19 * 10.0 * 0.95);
  // One request at a time: the run lasts at least the sum of the e2e latencies, so no more
  // requests per second than one per mean e2e (1 % for rounding).
  double e2e_mean = res["latency_ms"]["e2e"]["mean"].get<double>();
  EXPECT_LE(res["throughput"]["requests_per_s"].get<double>(), 1.01 * 1000.0 / e2e_mean);
  serve.Stop();
}

TEST_F(RefengineClientTest, DatagenCapturesReasoningContent) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "reasoning_field=reasoning_content"});
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  WriteQuestions(dir_.Join("prompts.jsonl"), 40);
  auto r = RunStage("lh-datagen",
                    {"--endpoint", serve.Output("endpoint"), "--model", "refengine", "--prompts",
                     dir_.Join("prompts.jsonl"), "--out", dir_.Join("samples.jsonl"), "--samples",
                     "40", "--max-tokens", "200", "--seed", "1", "--temperature", "0.8"},
                    dir_.Join("datagen.events.jsonl"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int with_reasoning = 0;
  for (const auto& line : StrSplit(ReadTextFile(dir_.Join("samples.jsonl")), '\n')) {
    if (line.empty()) continue;
    json s = json::parse(line);
    if (s["reasoning"].is_string() && !s["reasoning"].get<std::string>().empty()) ++with_reasoning;
  }
  // The reference model opens a <think> segment in part of its answers.
  EXPECT_GT(with_reasoning, 0);
  auto m = ReadMetrics(dir_.Join("datagen.events.jsonl"));
  EXPECT_DOUBLE_EQ(m["reasoning_capture_rate"], with_reasoning / 40.0);
  serve.Stop();
}

TEST_F(RefengineClientTest, DatagenKilledMidRunResumesWithoutDuplicates) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "extra_args=--target-step-ms 2"});  // ~0.1 s per answer
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  const int n = 60;
  WriteQuestions(dir_.Join("prompts.jsonl"), n);
  std::vector<std::string> argv = {BinPath("lh-datagen"),
                                   "--endpoint",
                                   serve.Output("endpoint"),
                                   "--model",
                                   "refengine",
                                   "--prompts",
                                   dir_.Join("prompts.jsonl"),
                                   "--out",
                                   dir_.Join("samples.jsonl"),
                                   "--samples",
                                   std::to_string(n),
                                   "--max-tokens",
                                   "60",
                                   "--concurrency",
                                   "4"};
  auto lines = [&] {
    size_t count = 0;
    for (const auto& l : StrSplit(ReadTextFile(dir_.Join("samples.jsonl")), '\n')) {
      if (!l.empty()) ++count;
    }
    return count;
  };
  auto first = Subprocess::Start(argv, StageEnv(dir_.Join("d1.events.jsonl")), dir_.Join("d1.log"));
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(WaitFor([&] { return lines() >= 10; }, 60'000));
  (*first)->Signal(SIGKILL);
  (*first)->Wait(10'000);
  ASSERT_LT(lines(), static_cast<size_t>(n));
  auto r = RunCommand(argv, StageEnv(dir_.Join("d2.events.jsonl")), 120'000);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::multiset<std::string> ids;
  for (const auto& l : StrSplit(ReadTextFile(dir_.Join("samples.jsonl")), '\n')) {
    if (!l.empty()) ids.insert(json::parse(l)["id"].get<std::string>());
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(ids.count(StrCat("q", i)), 1u) << "q" << i;
  serve.Stop();
}

TEST_F(RefengineClientTest, SlowLoadIsWaitedOut) {
  auto start = std::chrono::steady_clock::now();
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "extra_args=--load-delay-s 1.5"});
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  EXPECT_GE(ReadMetrics(serve.events())["load_seconds"], 1.5);
  EXPECT_EQ(serve.Stop(), 0);
}

TEST_F(RefengineClientTest, HangIsDetected) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "extra_args=--hang", "--probe-timeout", "1s"});
  EXPECT_EQ(serve.ExitCode(60'000), 1);
  EXPECT_NE(serve.Log().find("healthy but no generation in 1 s"), std::string::npos) << serve.Log();
  EXPECT_FALSE(serve.Ready());
}

TEST_F(RefengineClientTest, CrashWhileServingEndsTheStage) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set", "extra_args=--crash-after 1"});  // the probe is request 1
  ASSERT_TRUE(serve.WaitReady()) << serve.Log();
  auto r = RunStage("lh-bench",
                    {"--endpoint", serve.Output("endpoint"), "--model", "refengine", "--rate", "10",
                     "--num-requests", "2", "--random-input-len", "4", "--random-output-len", "4",
                     "--out", dir_.Join("bench.json"), "--request-timeout", "5"},
                    dir_.Join("bench.events.jsonl"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(serve.ExitCode(30'000), 1);
  EXPECT_NE(serve.Log().find("while serving"), std::string::npos) << serve.Log();
}

// Fast means during the load: the engine would load for 600 s, and lh-serve has ended with the
// fatal line well before (the wait's deadline is a fifth of that), however loaded the machine.
TEST_F(RefengineClientTest, FatalLogLineFailsFast) {
  ServeProcess serve(dir_, "serve");
  serve.Start({"--set",
               "extra_args=--load-delay-s 600 --fatal-log-line 'torch.OutOfMemoryError: CUDA out "
               "of memory. Tried to allocate 20.00 MiB'"});
  EXPECT_EQ(serve.ExitCode(120'000), 1);
  EXPECT_NE(serve.Log().find("fatal log line matched 'CUDA out of memory': torch.OutOfMemoryError"),
            std::string::npos)
      << serve.Log();
}

}  // namespace
}  // namespace longhaul::testing
