#include "stages/common/openai.h"

#include <gtest/gtest.h>

namespace longhaul::stages {
namespace {

using nlohmann::json;

TEST(OpenAiTest, BuildsChatRequestWithStreamOptions) {
  GenerationParams p;
  p.model = "m";
  p.max_tokens = 16;
  p.temperature = 0.0;
  p.seed = 7;
  p.continuous_usage = true;
  p.extra = {{"top_k", 5}};
  json j = json::parse(BuildChatRequest({{"user", "hi"}}, p));
  EXPECT_EQ(j["model"], "m");
  EXPECT_EQ(j["messages"][0]["role"], "user");
  EXPECT_EQ(j["messages"][0]["content"], "hi");
  EXPECT_EQ(j["max_tokens"], 16);
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["stream"], true);
  EXPECT_EQ(j["stream_options"]["include_usage"], true);
  EXPECT_EQ(j["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(j["top_k"], 5);
  EXPECT_FALSE(j.contains("top_p"));
}

TEST(OpenAiTest, NonStreamingRequestHasNoStreamOptions) {
  GenerationParams p;
  p.model = "m";
  p.stream = false;
  json j = json::parse(BuildCompletionRequest("once upon", p));
  EXPECT_EQ(j["prompt"], "once upon");
  EXPECT_EQ(j["stream"], false);
  EXPECT_FALSE(j.contains("stream_options"));
}

TEST(OpenAiTest, ParsesChatDeltasAndBothReasoningNames) {
  auto d = ParseStreamEvent(
      R"({"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]})");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->content, "Hi");
  EXPECT_FALSE(d->done);
  d = ParseStreamEvent(R"({"choices":[{"delta":{"reasoning":"think"}}]})");
  EXPECT_EQ(d->reasoning, "think");
  d = ParseStreamEvent(R"({"choices":[{"delta":{"reasoning":null,"reasoning_content":"old"}}]})");
  EXPECT_EQ(d->reasoning, "old");
  d = ParseStreamEvent(R"({"choices":[{"delta":{},"finish_reason":"length"}]})");
  EXPECT_EQ(d->finish_reason, "length");
}

TEST(OpenAiTest, ParsesCompletionsTextUsageChunkAndDone) {
  auto d = ParseStreamEvent(R"({"choices":[{"text":" world"}]})");
  EXPECT_EQ(d->content, " world");
  d = ParseStreamEvent(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9}})");
  ASSERT_TRUE(d->usage.has_value());
  EXPECT_EQ(d->usage->prompt_tokens, 3);
  EXPECT_EQ(d->usage->completion_tokens, 9);
  d = ParseStreamEvent(" [DONE] ");
  EXPECT_TRUE(d->done);
}

TEST(OpenAiTest, OnlyTheFirstChoicesOwnFieldsCount) {
  auto d = ParseStreamEvent(
      R"({"id":"x","choices":[{"index":0,"delta":{"content":"a","tool_calls":[{"content":"no"}]},)"
      R"("logprobs":{"content":[{"token":"a","content":"no"}]},"finish_reason":null},)"
      R"({"index":1,"delta":{"content":"second"}}],"usage":{"completion_tokens":4.0}})");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->content, "a");
  ASSERT_TRUE(d->usage.has_value());
  EXPECT_EQ(d->usage->completion_tokens, 4);
  d = ParseStreamEvent(R"({"choices":[{"delta":{"content":"x"}}],"usage":null,"error":null})");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->usage.has_value());
  EXPECT_FALSE(ParseStreamEvent("[1,2]").ok());
  EXPECT_FALSE(ParseStreamEvent(R"({"a":1} trailing)").ok());
  d = ParseStreamEvent(R"({"error":"plain text"})");
  EXPECT_NE(d.status().message().find("plain text"), std::string::npos);
}

TEST(OpenAiTest, InStreamErrorsAndGarbageAreErrors) {
  auto d = ParseStreamEvent(R"({"error":{"message":"out of memory"}})");
  EXPECT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("out of memory"), std::string::npos);
  EXPECT_FALSE(ParseStreamEvent("{not json").ok());
}

TEST(OpenAiTest, ParsesWholeResponses) {
  auto c = ParseCompletionResponse(
      R"({"choices":[{"message":{"role":"assistant","content":"A","reasoning_content":"R"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->content, "A");
  EXPECT_EQ(c->reasoning, "R");
  EXPECT_EQ(c->finish_reason, "stop");
  EXPECT_EQ(c->usage->completion_tokens, 2);
  c = ParseCompletionResponse(R"({"choices":[{"text":"T"}]})");
  EXPECT_EQ(c->content, "T");
  EXPECT_FALSE(ParseCompletionResponse(R"({"choices":[]})").ok());
}

TEST(OpenAiTest, AccumulatesAStream) {
  Completion c;
  Accumulate(*ParseStreamEvent(R"({"choices":[{"delta":{"reasoning":"a"}}]})"), c);
  Accumulate(*ParseStreamEvent(R"({"choices":[{"delta":{"content":"b"}}]})"), c);
  Accumulate(*ParseStreamEvent(R"({"choices":[{"delta":{"content":"c"},"finish_reason":"stop"}]})"),
             c);
  EXPECT_EQ(c.content, "bc");
  EXPECT_EQ(c.reasoning, "a");
  EXPECT_EQ(c.finish_reason, "stop");
}

TEST(OpenAiTest, ErrorBodyText) {
  EXPECT_EQ(ErrorBodyText(R"({"error":{"message":"slow down"}})"), "slow down");
  EXPECT_EQ(ErrorBodyText(R"({"detail":"nope"})"), "nope");
  EXPECT_EQ(ErrorBodyText("Bad Gateway"), "Bad Gateway");
  EXPECT_EQ(ErrorBodyText(""), "(empty body)");
  EXPECT_FALSE(ParseOpenAiApi("chatt").ok());
  EXPECT_EQ(OpenAiApiPath(*ParseOpenAiApi("completions")), "/v1/completions");
}

}  // namespace
}  // namespace longhaul::stages
