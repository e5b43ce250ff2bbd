// lh-datagen as a process, against the in-process fake OpenAI server over loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

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
using testing::WriteTextFile;

std::vector<json> Lines(const std::string& text) {
  std::vector<json> out;
  for (const auto& line : StrSplit(text, '\n')) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

class LhDatagenTest : public ::testing::Test {
 protected:
  void WritePrompts(int n) {
    std::string text;
    for (int i = 0; i < n; ++i) {
      text += json{{"id", StrCat("s", i)},
                   {"conversations",
                    {{{"role", "user"}, {"content", StrCat("question ", i)}},
                     {{"role", "assistant"}, {"content", "old answer"}}}}}
                  .dump() +
              "\n";
    }
    WriteTextFile(prompts(), text);
  }
  std::vector<std::string> Args(const FakeOpenAiServer& server, int samples,
                                std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BinPath("lh-datagen"),
                                     "--endpoint",
                                     server.url(),
                                     "--model",
                                     "fake-model",
                                     "--prompts",
                                     prompts(),
                                     "--out",
                                     out(),
                                     "--samples",
                                     std::to_string(samples),
                                     "--retry-initial-backoff",
                                     "0.01",
                                     "--retry-max-backoff",
                                     "0.05"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  testing::CommandResult Run(const FakeOpenAiServer& server, int samples,
                             std::vector<std::string> extra = {}) {
    return RunCommand(Args(server, samples, std::move(extra)),
                      {{"LONGHAUL_EVENTS", dir_.Join("events.jsonl")}}, 60'000);
  }
  std::map<std::string, double> Metrics() {
    return testing::ReadMetrics(dir_.Join("events.jsonl"));
  }
  std::string prompts() const { return dir_.Join("prompts.jsonl"); }
  std::string out() const { return dir_.Join("samples.jsonl"); }
  TempDir dir_;
};

TEST_F(LhDatagenTest, RegeneratesAnswersAndCapturesReasoning) {
  FakeOpenAiOptions opts;
  opts.reasoning = {"Let", " me", " think"};
  FakeOpenAiServer server(opts);
  server.Start();
  WritePrompts(12);
  auto r = Run(server, 10, {"--concurrency", "3", "--temperature", "0.7", "--max-tokens", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Lines(ReadTextFile(out()));
  ASSERT_EQ(samples.size(), 10u);
  std::set<std::string> ids;
  for (const auto& s : samples) {
    ids.insert(s["id"].get<std::string>());
    ASSERT_EQ(s["conversations"].size(), 2u);
    EXPECT_EQ(s["conversations"][1]["role"], "assistant");
    EXPECT_EQ(s["conversations"][1]["content"], "Hello there, my friend.");
    EXPECT_EQ(s["reasoning"], "Let me think");
  }
  EXPECT_EQ(ids.size(), 10u);
  EXPECT_EQ(ids.count("s10"), 0u);  // only the first 10
  auto reqs = server.requests();
  EXPECT_EQ(reqs[0]["messages"].size(), 1u);  // the old answer is not sent
  EXPECT_EQ(reqs[0]["temperature"], 0.7);
  EXPECT_EQ(reqs[0]["max_tokens"], 64);
  EXPECT_TRUE(reqs[0]["stream"].get<bool>());
  auto m = Metrics();
  EXPECT_EQ(m["samples"], 10);
  EXPECT_EQ(m["failed_samples"], 0);
  EXPECT_EQ(m["reasoning_capture_rate"], 1.0);
  EXPECT_GT(m["output_tokens_per_s"], 0);
  std::string events = ReadTextFile(dir_.Join("events.jsonl"));
  EXPECT_NE(events.find(R"({"progress":{"done":10.0,"total":10.0,"unit":"samples"}})"),
            std::string::npos)
      << events;
  EXPECT_NE(events.find(R"("output":{"name":"samples")"), std::string::npos);
  EXPECT_NE(events.find(R"("artifact":{"bytes":)"), std::string::npos);
}

TEST_F(LhDatagenTest, ReasoningContentFieldStreamedOrNot) {
  FakeOpenAiOptions opts;
  opts.reasoning = {"hmm"};
  opts.reasoning_field = "reasoning_content";
  FakeOpenAiServer server(opts);
  server.Start();
  WritePrompts(4);
  ASSERT_EQ(Run(server, 2).exit_code, 0);
  auto r = Run(server, 4, {"--no-stream"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Lines(ReadTextFile(out()));
  ASSERT_EQ(samples.size(), 4u);
  for (const auto& s : samples) EXPECT_EQ(s["reasoning"], "hmm") << s.dump();
  EXPECT_FALSE(server.requests().back()["stream"].get<bool>());
}

TEST_F(LhDatagenTest, ShareGptMultiTurnReplaysEachUserTurn) {
  FakeOpenAiServer server;
  server.Start();
  WriteTextFile(prompts(), R"([
  {"id": "conv-1", "conversations": [
    {"from": "system", "value": "be kind"},
    {"from": "human", "value": "first"}, {"from": "gpt", "value": "old 1"},
    {"from": "human", "value": "second"}, {"from": "gpt", "value": "old 2"}]}
])");
  auto r = Run(server, 1);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Lines(ReadTextFile(out()));
  ASSERT_EQ(samples.size(), 1u);
  const json& c = samples[0]["conversations"];
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0]["role"], "system");
  EXPECT_EQ(c[2]["content"], "Hello there, my friend.");
  EXPECT_EQ(c[3]["content"], "second");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[1]["messages"].size(), 4u);
  EXPECT_EQ(reqs[1]["messages"][2]["content"], "Hello there, my friend.");  // regenerated
}

TEST_F(LhDatagenTest, RetriesRateLimitsServerErrorsAndDrops) {
  FakeOpenAiServer server;
  server.Start();
  server.PushStatuses({429, 500, 503, FakeOpenAiServer::kDrop, FakeOpenAiServer::kDropMidStream});
  WritePrompts(6);
  auto r = Run(server, 6, {"--concurrency", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(ReadTextFile(out())).size(), 6u);
  auto m = Metrics();
  // The drop hits a kept-alive connection before any byte of the answer: the HTTP client
  // re-sends it once on a fresh connection itself (a stale keep-alive looks the same), so
  // four of the five faults cost a datagen retry.
  EXPECT_EQ(m["request_retries"], 4);
  EXPECT_EQ(m["rate_limited_responses"], 1);
  EXPECT_EQ(m["failed_samples"], 0);
  EXPECT_NE(ReadTextFile(dir_.Join("events.jsonl")).find("backing off"), std::string::npos);
}

TEST_F(LhDatagenTest, SampleThatFailsEveryRetryIsRecordedAndCounted) {
  FakeOpenAiServer server;
  server.Start();
  server.SetFailWhen([](const json& req) {
    std::string q = req["messages"][0]["content"];
    return q == "question 3" ? 500 : q == "question 5" ? 400 : 0;
  });
  WritePrompts(10);
  auto r = Run(server, 10, {"--max-request-retries", "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 2 of 10 > 1 %
  EXPECT_NE(r.err.find("2 of 10 samples failed"), std::string::npos) << r.err;
  auto failed = Lines(ReadTextFile(dir_.Join("samples.failed.jsonl")));
  ASSERT_EQ(failed.size(), 2u);
  std::map<std::string, json> by_id;
  for (const auto& f : failed) by_id[f["id"]] = f;
  EXPECT_EQ(by_id["s3"]["attempts"], 3);  // 1 + 2 retries
  EXPECT_EQ(by_id["s5"]["attempts"], 1);  // 400 is not retried
  EXPECT_NE(by_id["s5"]["error"].get<std::string>().find("HTTP 400"), std::string::npos);
  EXPECT_EQ(Lines(ReadTextFile(out())).size(), 8u);
  // The next attempt tries only the two failed samples again.
  server.SetFailWhen(nullptr);
  int64_t before = server.generation_requests();
  r = Run(server, 10, {"--max-request-retries", "2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(server.generation_requests() - before, 2);
  EXPECT_EQ(Lines(ReadTextFile(out())).size(), 10u);
  EXPECT_EQ(ReadTextFile(dir_.Join("samples.failed.jsonl")), "");
}

TEST_F(LhDatagenTest, KillNineMidRunThenResumeLosesAndDuplicatesNothing) {
  FakeOpenAiOptions opts;
  opts.chunk_interval_us = 5'000;  // ~45 ms per sample
  FakeOpenAiServer server(opts);
  server.Start();
  const int n = 60;
  WritePrompts(n);
  auto proc =
      testing::Subprocess::Start(Args(server, n, {"--concurrency", "4"}), {}, dir_.Join("log1"));
  ASSERT_TRUE(proc.ok());
  ASSERT_TRUE(testing::WaitFor([&] { return Lines(ReadTextFile(out())).size() >= 12; }, 20'000));
  (*proc)->SignalGroup(SIGKILL);
  (*proc)->Wait(10'000);
  size_t before_resume = Lines(ReadTextFile(out())).size();
  ASSERT_LT(before_resume, static_cast<size_t>(n));
  // A write torn by the kill: half a record with no newline.
  std::string text = ReadTextFile(out());
  WriteTextFile(out(), text + R"({"id":"s59","conversations":[{"ro)");
  int64_t requests_before = server.generation_requests();
  auto r = Run(server, n, {"--concurrency", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto samples = Lines(ReadTextFile(out()));
  std::multiset<std::string> ids;
  for (const auto& s : samples) ids.insert(s["id"].get<std::string>());
  EXPECT_EQ(samples.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) EXPECT_EQ(ids.count(StrCat("s", i)), 1u) << "s" << i;
  // Only what was not finished is generated again.
  EXPECT_EQ(server.generation_requests() - requests_before,
            static_cast<int64_t>(n - before_resume));
}

TEST_F(LhDatagenTest, SigtermStopsCleanlyAndTheNextAttemptFinishes) {
  FakeOpenAiOptions opts;
  opts.chunk_interval_us = 5'000;
  FakeOpenAiServer server(opts);
  server.Start();
  WritePrompts(40);
  auto proc = testing::Subprocess::Start(Args(server, 40, {"--concurrency", "2"}),
                                         {{"LONGHAUL_EVENTS", dir_.Join("events.jsonl")}},
                                         dir_.Join("log"));
  ASSERT_TRUE(proc.ok());
  ASSERT_TRUE(testing::WaitFor([&] { return Lines(ReadTextFile(out())).size() >= 4; }, 20'000));
  (*proc)->Signal(SIGTERM);
  auto st = (*proc)->Wait(10'000);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(WEXITSTATUS(*st), 143) << ReadTextFile(dir_.Join("log"));
  std::string text = ReadTextFile(out());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');  // whole lines only
  size_t kept = Lines(text).size();
  EXPECT_LT(kept, 40u);
  auto r = Run(server, 40, {"--concurrency", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(ReadTextFile(out())).size(), 40u);
}

TEST_F(LhDatagenTest, FailsFastWhenNothingWorks) {
  FakeOpenAiServer server;
  server.Start();
  server.SetFailWhen([](const json&) { return 404; });
  WritePrompts(100);
  auto r = Run(server, 100, {"--concurrency", "2"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the first 20 samples all failed; last error: HTTP 404"), std::string::npos)
      << r.err;
  EXPECT_LT(server.generation_requests(), 30);
}

TEST_F(LhDatagenTest, BadInputNamesTheProblem) {
  FakeOpenAiServer server;
  server.Start();
  auto r = Run(server, 3);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("prompts.jsonl"), std::string::npos) << r.err;
  WriteTextFile(prompts(), "{\"id\":1,\"conversations\":[{\"role\":\"user\"}]}\n");
  r = Run(server, 3);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("prompts.jsonl:1: conversations[0]: missing 'content'"), std::string::npos)
      << r.err;
  r = Run(server, 0);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--samples must be >= 1"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace longhaul
