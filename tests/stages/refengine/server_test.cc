// lh-refengine over real HTTP on loopback: the binary is started as a subprocess.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <memory>

#include "core/strings.h"
#include "stages/refmodel/drafter.h"
#include "tests/stages/refengine/http_test_client.h"
#include "tests/stages/refengine/refengine_process.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul::refengine {
namespace {

using json = nlohmann::json;
using longhaul::testing::BinPath;
using longhaul::testing::ReadTextFile;
using longhaul::testing::TempDir;
using longhaul::testing::WaitFor;
using testing::HttpGet;
using testing::MetricValue;
using testing::PostJson;
using testing::SseEvents;
using testing::StartRefengine;

using Server = testing::RefengineServer;

json Chat(const std::string& question, double temperature = 0, int max_tokens = 60) {
  return {{"model", "refengine"},
          {"messages", json::array({{{"role", "user"}, {"content", question}}})},
          {"temperature", temperature},
          {"max_tokens", max_tokens}};
}

std::string Metrics(int port) { return HttpGet(port, "/metrics").body; }

TEST(RefEngineServerTest, ChatAndCompletionsAnswerDeterministically) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {});
  auto r = PostJson(s.port, "/v1/chat/completions", Chat("What is the capital of Lofoum?"));
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "refengine");
  const json& msg = j["choices"][0]["message"];
  EXPECT_EQ(msg["role"], "assistant");
  EXPECT_TRUE(msg["content"].is_string());
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 5);
  EXPECT_GT(j["usage"]["completion_tokens"].get<int>(), 0);
  EXPECT_LE(j["usage"]["completion_tokens"].get<int>(), 60);
  // Greedy is deterministic.
  auto again = PostJson(s.port, "/v1/chat/completions", Chat("What is the capital of Lofoum?"));
  EXPECT_EQ(json::parse(again.body)["choices"][0]["message"], msg);
  // A seed makes sampling reproducible.
  json sampled = Chat("Tell me about Lofoum.", 0.9, 40);
  sampled["seed"] = 5;
  auto s1 = PostJson(s.port, "/v1/chat/completions", sampled);
  auto s2 = PostJson(s.port, "/v1/chat/completions", sampled);
  EXPECT_EQ(json::parse(s1.body)["choices"], json::parse(s2.body)["choices"]);

  auto c = PostJson(s.port, "/v1/completions",
                    {{"prompt", "The capital of"}, {"max_tokens", 5}, {"temperature", 0}});
  ASSERT_EQ(c.status, 200) << c.body;
  json cj = json::parse(c.body);
  EXPECT_EQ(cj["object"], "text_completion");
  EXPECT_TRUE(cj["choices"][0]["text"].is_string());
  EXPECT_FALSE(cj["choices"][0]["text"].get<std::string>().empty());

  auto models = HttpGet(s.port, "/v1/models");
  EXPECT_EQ(json::parse(models.body)["data"][0]["id"], "refengine");
}

TEST(RefEngineServerTest, StreamingSendsChunksUsageAndDone) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {});
  json req = Chat("What is 12 plus 30?", 0, 80);
  auto whole = PostJson(s.port, "/v1/chat/completions", req);
  json whole_j = json::parse(whole.body);
  req["stream"] = true;
  req["stream_options"] = {{"include_usage", true}};
  auto r = PostJson(s.port, "/v1/chat/completions", req);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/event-stream");
  EXPECT_EQ(r.headers["transfer-encoding"], "chunked");
  bool done = false;
  std::vector<json> events = SseEvents(r.body, &done);
  EXPECT_TRUE(done);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[0]["choices"][0]["delta"]["role"], "assistant");
  std::string content, reasoning, finish;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    const json& choice = events[i]["choices"][0];
    EXPECT_EQ(events[i]["object"], "chat.completion.chunk");
    content += choice["delta"].value("content", "");
    reasoning += choice["delta"].value("reasoning", "");
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  const json& usage_chunk = events.back();
  EXPECT_TRUE(usage_chunk["choices"].empty());
  EXPECT_EQ(usage_chunk["usage"], whole_j["usage"]);
  EXPECT_EQ(finish, whole_j["choices"][0]["finish_reason"]);
  EXPECT_EQ(content, whole_j["choices"][0]["message"]["content"]);
  EXPECT_EQ(reasoning, whole_j["choices"][0]["message"].value("reasoning", ""));

  // Completions stream too, without usage unless asked.
  auto c = PostJson(s.port, "/v1/completions",
                    {{"prompt", "The capital of"}, {"max_tokens", 4}, {"stream", true}});
  std::vector<json> cev = SseEvents(c.body, &done);
  EXPECT_TRUE(done);
  ASSERT_FALSE(cev.empty());
  EXPECT_EQ(cev.back()["choices"][0]["finish_reason"].is_string(), true);
  for (const json& e : cev) EXPECT_FALSE(e.contains("usage"));
}

TEST(RefEngineServerTest, ReasoningGoesToTheConfiguredField) {
  TempDir dir;
  for (std::string field : {"reasoning", "reasoning_content"}) {
    Server s = StartRefengine(dir, field, {"--reasoning-field", field});
    // Greedy answers to this prompt open with a <think> segment.
    auto r =
        PostJson(s.port, "/v1/chat/completions", Chat("What is the capital of Lofoum?", 0, 30));
    json msg = json::parse(r.body)["choices"][0]["message"];
    ASSERT_TRUE(msg.contains(field)) << msg;
    EXPECT_FALSE(msg[field].get<std::string>().empty());
    EXPECT_EQ(msg[field].get<std::string>().find("<think>"), std::string::npos);
    std::string other = field == "reasoning" ? "reasoning_content" : "reasoning";
    EXPECT_FALSE(msg.contains(other));
  }
}

TEST(RefEngineServerTest, BadRequestsGetClearErrors) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {});
  auto bad_json = testing::HttpPost(s.port, "/v1/chat/completions", "{not json");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_NE(bad_json.body.find("not JSON"), std::string::npos);
  json req = Chat("hi");
  req["temperature"] = -1;
  auto bad_t = PostJson(s.port, "/v1/chat/completions", req);
  EXPECT_EQ(bad_t.status, 400);
  EXPECT_NE(bad_t.body.find("'temperature'"), std::string::npos) << bad_t.body;
  req = Chat("hi");
  req["messages"][0]["role"] = "tool";
  auto bad_role = PostJson(s.port, "/v1/chat/completions", req);
  EXPECT_EQ(bad_role.status, 400);
  EXPECT_NE(bad_role.body.find("messages[0].role"), std::string::npos) << bad_role.body;
  req = Chat("hi");
  req["model"] = "gpt-9";
  EXPECT_EQ(PostJson(s.port, "/v1/chat/completions", req).status, 404);
  EXPECT_EQ(HttpGet(s.port, "/nope").status, 404);
  EXPECT_EQ(HttpGet(s.port, "/v1/chat/completions").status, 405);
}

TEST(RefEngineServerTest, HungServerIsHealthyButNeverGenerates) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {"--hang", "--health-generate-timeout-s", "0.3"});
  EXPECT_EQ(HttpGet(s.port, "/health").status, 200);
  auto gen = PostJson(s.port, "/v1/chat/completions", Chat("hi", 0, 1), /*timeout_ms=*/800);
  EXPECT_EQ(gen.status, 0);
  EXPECT_TRUE(gen.timed_out);
  EXPECT_EQ(HttpGet(s.port, "/health_generate").status, 503);
  EXPECT_EQ(HttpGet(s.port, "/health").status, 200);  // still "healthy"
  EXPECT_EQ(MetricValue(Metrics(s.port), "vllm:generation_tokens_total"), 0);
}

TEST(RefEngineServerTest, HealthGenerateSucceedsOnAWorkingServer) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {"--health-generate-timeout-s", "5"});
  EXPECT_EQ(HttpGet(s.port, "/health_generate").status, 200);
}

TEST(RefEngineServerTest, CrashAfterExitsAbruptlyOnTheNextRequest) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {"--crash-after", "2"});
  EXPECT_EQ(PostJson(s.port, "/v1/chat/completions", Chat("hi", 0, 3)).status, 200);
  EXPECT_EQ(PostJson(s.port, "/v1/completions", {{"prompt", "The"}, {"max_tokens", 2}}).status,
            200);
  auto third = PostJson(s.port, "/v1/chat/completions", Chat("hi", 0, 3));
  EXPECT_EQ(third.status, 0);
  auto status = s.proc->Wait(5000);
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status));
  EXPECT_EQ(WEXITSTATUS(*status), 1);
  EXPECT_NE(ReadTextFile(s.log).find("--crash-after"), std::string::npos);
}

TEST(RefEngineServerTest, SlowLoadAnswers503UntilLoaded) {
  TempDir dir;
  auto t0 = std::chrono::steady_clock::now();
  Server s =
      StartRefengine(dir, "a", {"--load-delay-s", "1.5", "--fatal-log-line", "CUDA error: test"},
                     /*wait_healthy=*/false);
  auto h = HttpGet(s.port, "/health");
  EXPECT_EQ(h.status, 503);
  EXPECT_EQ(PostJson(s.port, "/v1/chat/completions", Chat("hi", 0, 2)).status, 503);
  EXPECT_TRUE(WaitFor([&] { return HttpGet(s.port, "/health").status == 200; }, 10000));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(waited, 1.4);
  std::string log = ReadTextFile(s.log);
  EXPECT_NE(log.find("listening on 127.0.0.1:"), std::string::npos);
  EXPECT_NE(log.find("ready: model refengine"), std::string::npos);
  EXPECT_NE(log.find("CUDA error: test"), std::string::npos);
  EXPECT_EQ(PostJson(s.port, "/v1/chat/completions", Chat("hi", 0, 2)).status, 200);
}

TEST(RefEngineServerTest, RejectsADrafterTrainedForAnotherTarget) {
  TempDir dir;
  refmodel::Drafter d = refmodel::testing::MakeDrafter(0, 32, 8);
  d.mutable_config().target_model_hash = std::string(64, '0');
  ASSERT_TRUE(d.Save(dir.Join("drafter")).ok());
  auto r = longhaul::testing::RunCommand(
      {BinPath("lh-refengine"), "--port", "0", "--drafter", dir.Join("drafter")}, {}, 20000);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("trained for target model"), std::string::npos) << r.err;
}

// Speculative decoding over HTTP: the counters move by exactly what the requests did, the
// output equals the target-only server's at temperature 0, and the misaligned feed accepts
// far less.
TEST(RefEngineServerTest, SpeculativeMetricsAreHonestAndOutputIsLossless) {
  TempDir dir;
  refmodel::Drafter d = refmodel::testing::MakeDrafter(3);
  ASSERT_TRUE(d.Save(dir.Join("drafter")).ok());
  Server plain = StartRefengine(dir, "plain", {});
  Server spec = StartRefengine(dir, "spec",
                               {"--drafter", dir.Join("drafter"), "--num-speculative-tokens", "3",
                                "--metrics-style", "both"});
  Server bad = StartRefengine(
      dir, "bad",
      {"--drafter", dir.Join("drafter"), "--num-speculative-tokens", "3", "--drafter-misaligned"});
  const auto& prompts = refmodel::testing::Prompts();
  std::string before = Metrics(spec.port);
  EXPECT_EQ(MetricValue(before, "vllm:spec_decode_num_drafts_total"), 0);
  int64_t prompt_tokens = 0, completion_tokens = 0;
  const int n = 12;
  for (int i = 0; i < n; ++i) {
    json req = Chat(prompts[300 + i].messages[0].content, 0, 80);
    auto a = PostJson(plain.port, "/v1/chat/completions", req);
    auto b = PostJson(spec.port, "/v1/chat/completions", req);
    auto c = PostJson(bad.port, "/v1/chat/completions", req);
    ASSERT_EQ(b.status, 200) << b.body;
    json ja = json::parse(a.body), jb = json::parse(b.body), jc = json::parse(c.body);
    EXPECT_EQ(ja["choices"], jb["choices"]) << "prompt " << i;  // lossless
    EXPECT_EQ(ja["choices"], jc["choices"]) << "prompt " << i;  // still correct
    prompt_tokens += jb["usage"]["prompt_tokens"].get<int64_t>();
    completion_tokens += jb["usage"]["completion_tokens"].get<int64_t>();
  }
  std::string m = Metrics(spec.port);
  EXPECT_EQ(MetricValue(m, "vllm:prompt_tokens_total"), prompt_tokens);
  EXPECT_EQ(MetricValue(m, "vllm:generation_tokens_total"), completion_tokens);
  EXPECT_EQ(MetricValue(m, "sglang:generation_tokens_total"), completion_tokens);
  EXPECT_EQ(MetricValue(m, "vllm:request_success_total"), n);
  EXPECT_EQ(MetricValue(m, "vllm:time_to_first_token_seconds_count"), n);
  EXPECT_EQ(MetricValue(m, "vllm:e2e_request_latency_seconds_count"), n);
  EXPECT_EQ(MetricValue(m, "vllm:num_requests_running"), 0);
  double drafts = MetricValue(m, "vllm:spec_decode_num_drafts_total");
  double draft_tokens = MetricValue(m, "vllm:spec_decode_num_draft_tokens_total");
  double accepted = MetricValue(m, "vllm:spec_decode_num_accepted_tokens_total");
  EXPECT_GT(drafts, 0);
  EXPECT_EQ(draft_tokens, 3 * drafts);
  EXPECT_LE(accepted, draft_tokens);
  double per_pos_sum = 0, prev = drafts;
  for (int i = 0; i < 3; ++i) {
    double v = MetricValue(m, "vllm:spec_decode_num_accepted_tokens_per_pos_total",
                           StrCat("position=\"", i, "\""));
    EXPECT_LE(v, prev);
    prev = v;
    per_pos_sum += v;
  }
  EXPECT_EQ(per_pos_sum, accepted);
  // Every generated token came from a prefill or a verify round: n prefills + drafts rounds
  // produce between them at least the tokens sent (rounds cut short at the end lose some).
  EXPECT_GE(n + drafts + accepted, completion_tokens);
  EXPECT_GE(MetricValue(m, "sglang:spec_accept_length"), 1.0);
  json info = json::parse(HttpGet(spec.port, "/get_server_info").body);
  EXPECT_NEAR(info["internal_states"][0]["avg_spec_accept_length"].get<double>(),
              1 + accepted / drafts, 1e-9);

  std::string bm = Metrics(bad.port);
  double bad_rate = MetricValue(bm, "vllm:spec_decode_num_accepted_tokens_total") /
                    MetricValue(bm, "vllm:spec_decode_num_draft_tokens_total");
  double rate = accepted / draft_tokens;
  std::cout << "HTTP greedy acceptance: correct " << rate << " (mean length "
            << 1 + accepted / drafts << "), misaligned " << bad_rate << "\n";
  EXPECT_GT(rate, 0.3);
  EXPECT_LT(bad_rate, rate / 2);
}

// The cost model: with a 20 ms target step, a 40-token greedy answer takes about 40 steps
// without a drafter and far fewer with one; the server never blocks while it waits (a second
// request is served in the same steps).
TEST(RefEngineServerTest, StepCostIsSimulatedWithTimers) {
  TempDir dir;
  Server s = StartRefengine(dir, "a", {"--target-step-ms", "20"});
  auto t0 = std::chrono::steady_clock::now();
  json req = Chat("What is the capital of Lofoum?", 0, 20);
  req["ignore_eos"] = true;
  auto r = PostJson(s.port, "/v1/chat/completions", req);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 20);
  EXPECT_GE(took, 20 * 0.020 * 0.95);  // 20 steps of 20 ms each, by timer
  double e2e = MetricValue(Metrics(s.port), "vllm:e2e_request_latency_seconds_sum");
  EXPECT_GE(e2e, 0.38);
}

}  // namespace
}  // namespace longhaul::refengine
