// lh-bench as a process, against the in-process fake OpenAI server over loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "core/event.h"
#include "core/strings.h"
#include "tests/stages/common/fake_openai_server.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using nlohmann::json;
using testing::BinPath;
using testing::FakeOpenAiOptions;
using testing::FakeOpenAiServer;
using testing::ReadTextFile;
using testing::RunCommand;
using testing::TempDir;

class LhBenchTest : public ::testing::Test {
 protected:
  testing::CommandResult Bench(const FakeOpenAiServer& server, std::vector<std::string> args) {
    std::vector<std::string> argv = {BinPath("lh-bench"), "--endpoint", server.url(), "--model",
                                     "fake-model",        "--out",      result_path()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunCommand(argv, {{"LONGHAUL_EVENTS", dir_.Join("events.jsonl")}}, 60'000);
  }
  std::string result_path() const { return dir_.Join("result.json"); }
  json Result() const { return json::parse(ReadTextFile(result_path())); }
  std::vector<StageEvent> Events() const {
    return testing::ReadEvents(dir_.Join("events.jsonl"), /*strict=*/true);
  }
  TempDir dir_;
};

TEST_F(LhBenchTest, OpenLoopRunMeasuresLatencyAndSpeculativeMetrics) {
  FakeOpenAiOptions opts;
  opts.tokens_per_chunk = 3;  // each chunk = one round with 2 of 3 drafts accepted
  opts.num_spec_tokens = 3;
  opts.chunk_interval_us = 2000;
  FakeOpenAiServer server(opts);
  server.Start();
  auto r = Bench(server, {"--rate", "200", "--num-requests", "100", "--random-input-len", "16",
                          "--random-output-len", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  json res = Result();
  EXPECT_EQ(res["requests"]["completed"], 100);
  EXPECT_EQ(res["requests"]["failed"], 0);
  EXPECT_EQ(res["throughput"]["output_tokens"], 1200);
  // Loose: a loaded CI machine can stall the loop; bench/loadgen measures precision.
  EXPECT_NEAR(res["rate"]["achieved_vs_target"].get<double>(), 1.0, 0.1);
  // 12 tokens in 4 chunks 2 ms apart: at least 6 ms between first token and end.
  EXPECT_GE(res["latency_ms"]["e2e"]["p50"].get<double>() -
                res["latency_ms"]["ttft"]["p50"].get<double>(),
            6.0);
  EXPECT_GE(res["latency_ms"]["itl_per_chunk"]["p50"].get<double>(), 2.0);
  EXPECT_EQ(res["itl_per_token_source"], "usage_per_chunk");
  EXPECT_NEAR(res["latency_ms"]["itl_per_token"]["p50"].get<double>(),
              res["latency_ms"]["itl_per_chunk"]["p50"].get<double>() / 3, 0.5);
  const json& spec = res["spec_decoding"];
  EXPECT_EQ(spec["style"], "vllm");
  EXPECT_DOUBLE_EQ(spec["acceptance_rate"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(spec["acceptance_length"].get<double>(), 3.0);
  EXPECT_EQ(spec["per_position_acceptance"], json::array({1.0, 1.0, 0.0}));
  EXPECT_EQ(spec["server_generation_tokens"], 1200.0);
  ASSERT_EQ(res["records"].size(), 100u);
  EXPECT_NE(r.out.find("acceptance rate 0.6667"), std::string::npos) << r.out;

  bool final_progress = false, accept_metric = false, artifact = false;
  for (const auto& ev : Events()) {
    if (ev.type == EventType::kProgress && ev.done == 100 && ev.total == 100.0)
      final_progress = true;
    if (ev.type == EventType::kMetric && ev.name == "accept_rate") accept_metric = true;
    if (ev.type == EventType::kArtifact && ev.path == result_path()) artifact = true;
  }
  EXPECT_TRUE(final_progress);
  EXPECT_TRUE(accept_metric);
  EXPECT_TRUE(artifact);
}

// Open loop: sends follow the schedule, not the answers. The server holds each first chunk for
// 2 s while the schedule puts all 20 sends within 380 ms, so they all wait together; a client
// that waited for answers would never have more than one waiting. No wall-clock bound: a
// loaded machine that sends late still sends before any answer can come (how late it sent is
// the bench's own figure, schedule_error_ms: reported, not checked here).
TEST_F(LhBenchTest, OpenLoopDoesNotWaitForSlowResponses) {
  FakeOpenAiOptions opts;
  opts.first_chunk_delay_us = 2'000'000;
  FakeOpenAiServer server(opts);
  server.Start();
  auto r = Bench(server, {"--rate", "50", "--num-requests", "20", "--random-input-len", "4",
                          "--random-output-len", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = Result();
  EXPECT_GE(server.max_waiting_first_chunk(), 15);
  EXPECT_GE(res["requests"]["connections_opened"].get<int>(), 15);
  EXPECT_EQ(res["rate"]["target"].get<double>(), 50.0);
  // Lateness is measured, never negative: nothing is sent before its planned time.
  EXPECT_GE(res["schedule_error_ms"]["p50"].get<double>(), 0.0);
}

TEST_F(LhBenchTest, ConcurrencyCapCountsQueueingInLatency) {
  FakeOpenAiOptions opts;
  opts.first_chunk_delay_us = 50'000;
  FakeOpenAiServer server(opts);
  server.Start();
  auto r = Bench(server, {"--rate", "100", "--concurrency", "1", "--num-requests", "8",
                          "--random-input-len", "4", "--random-output-len", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = Result();
  // One at a time, 50 ms each, planned 10 ms apart: the last waits ~7 * 40 ms for its slot.
  EXPECT_GT(res["queue_ms"]["max"].get<double>(), 200.0);
  EXPECT_GT(res["latency_ms"]["e2e"]["max"].get<double>(),
            res["queue_ms"]["max"].get<double>() + 45.0);
  EXPECT_EQ(res["requests"]["connections_opened"], 1);
}

TEST_F(LhBenchTest, ClosedLoopKeepsConcurrencyRequestsInFlight) {
  FakeOpenAiOptions opts;
  opts.first_chunk_delay_us = 5'000;
  FakeOpenAiServer server(opts);
  server.Start();
  auto r = Bench(server, {"--concurrency", "4", "--num-requests", "40", "--api", "completions",
                          "--random-input-len", "4", "--random-output-len", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = Result();
  EXPECT_EQ(res["requests"]["completed"], 40);
  EXPECT_EQ(res["requests"]["connections_opened"], 4);  // the metrics scrapes use their own
  EXPECT_TRUE(server.requests()[0].contains("prompt"));
}

TEST_F(LhBenchTest, PromptsFileBaselineAndSpeedup) {
  FakeOpenAiServer server;
  server.Start();
  std::string prompts = dir_.Join("samples.jsonl");
  testing::WriteTextFile(
      prompts,
      R"({"id":"a","conversations":[{"role":"system","content":"be brief"},{"role":"user","content":"what is up"},{"role":"assistant","content":"sky"}]}
{"id":"b","conversations":[{"from":"human","value":"hello"},{"from":"gpt","value":"hi"}]}
)");
  auto r = Bench(server, {"--rate", "100", "--num-requests", "4", "--prompts", prompts,
                          "--max-tokens", "5", "--temperature", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0]["messages"].size(), 2u);  // system + user, not the old answer
  EXPECT_EQ(reqs[0]["messages"][1]["content"], "what is up");
  EXPECT_EQ(reqs[1]["messages"][0]["content"], "hello");
  EXPECT_EQ(reqs[2]["messages"][1]["content"], "what is up");  // cycled
  EXPECT_EQ(reqs[0]["max_tokens"], 5);
  EXPECT_EQ(reqs[0]["temperature"], 0.0);
  std::string base = dir_.Join("base.json");
  ASSERT_EQ(std::rename(result_path().c_str(), base.c_str()), 0);
  r = Bench(server,
            {"--rate", "100", "--num-requests", "4", "--prompts", prompts, "--baseline", base});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json res = Result();
  EXPECT_TRUE(res["baseline"]["speedup_output_throughput"].is_number());
  EXPECT_TRUE(res["baseline"]["speedup_tpot"].is_number());
}

TEST_F(LhBenchTest, FailedRequestsAreCountedAndFailTheStage) {
  FakeOpenAiServer server;
  server.Start();
  server.PushStatuses({500, 429});
  auto r = Bench(server, {"--rate", "100", "--num-requests", "10", "--random-input-len", "4",
                          "--random-output-len", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  json res = Result();
  EXPECT_EQ(res["requests"]["failed"], 2);
  EXPECT_EQ(res["requests"]["completed"], 8);
  EXPECT_EQ(res["errors"]["HTTP 500: injected status 500"], 1);
  r = Bench(server, {"--rate", "100", "--num-requests", "10", "--random-input-len", "4",
                     "--random-output-len", "2", "--max-failed-fraction", "0.5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LhBenchTest, BadInputGetsAClearError) {
  FakeOpenAiServer server;
  server.Start();
  auto r =
      Bench(server, {"--num-requests", "3", "--random-input-len", "4", "--random-output-len", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give --rate R or --concurrency C"), std::string::npos) << r.err;
  r = Bench(server, {"--rate", "1", "--num-requests", "3", "--prompts", dir_.Join("none.jsonl")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.jsonl"), std::string::npos) << r.err;
  testing::WriteTextFile(dir_.Join("bad.json"), "{}");
  r = Bench(server, {"--rate", "1", "--num-requests", "1", "--random-input-len", "4",
                     "--random-output-len", "2", "--baseline", dir_.Join("bad.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not an lh-bench result"), std::string::npos) << r.err;
  EXPECT_EQ(server.generation_requests(), 0);
}

TEST_F(LhBenchTest, SigtermWritesAPartialResult) {
  FakeOpenAiServer server;
  server.Start();
  std::vector<std::string> argv = {BinPath("lh-bench"),
                                   "--endpoint",
                                   server.url(),
                                   "--model",
                                   "m",
                                   "--out",
                                   result_path(),
                                   "--rate",
                                   "20",
                                   "--duration",
                                   "60",
                                   "--random-input-len",
                                   "4",
                                   "--random-output-len",
                                   "2"};
  auto proc = testing::Subprocess::Start(argv, {}, dir_.Join("log"));
  ASSERT_TRUE(proc.ok());
  ASSERT_TRUE(testing::WaitFor([&] { return server.completed() >= 5; }, 10'000));
  (*proc)->Signal(SIGTERM);
  auto st = (*proc)->Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 130) << ReadTextFile(dir_.Join("log"));
  json res = Result();
  EXPECT_TRUE(res["interrupted"].get<bool>());
  EXPECT_GE(res["requests"]["completed"].get<int>(), 5);
  EXPECT_LT(res["requests"]["sent"].get<int>(), 1200);
}

}  // namespace
}  // namespace longhaul
