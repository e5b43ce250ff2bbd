#include "stages/refmodel/tokenizer.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "stages/refmodel/chat_template.h"
#include "stages/refmodel/target_model.h"
#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refmodel {
namespace {

using testing::Target;

TEST(TokenizerTest, SplitsWordsPunctuationNewlinesAndSpecials) {
  std::vector<std::string_view> got =
      Tokenizer::Split("<|user|>\nWhat is 3 plus 4?<|end|>\n<think>x,y</think> ok.");
  std::vector<std::string_view> want = {"<|user|>", "\n", "What",     "is", "3",       "plus",
                                        "4",        "?",  "<|end|>",  "\n", "<think>", "x",
                                        ",",        "y",  "</think>", "ok", "."};
  EXPECT_EQ(got, want);
}

TEST(TokenizerTest, SpecialTokensHaveFixedIds) {
  const Tokenizer& tok = Target().tokenizer();
  EXPECT_EQ(tok.Find("<|unk|>"), Tokenizer::kUnkId);
  EXPECT_EQ(tok.Find("<|end|>"), Tokenizer::kEndId);
  EXPECT_EQ(tok.Find("<|user|>"), Tokenizer::kUserId);
  EXPECT_EQ(tok.Find("<|assistant|>"), Tokenizer::kAssistantId);
  EXPECT_EQ(tok.Find("<think>"), Tokenizer::kThinkStartId);
  EXPECT_EQ(tok.Find("</think>"), Tokenizer::kThinkEndId);
  EXPECT_GT(tok.size(), 1000);  // "a vocab of a few thousand"
  EXPECT_LT(tok.size(), 10000);
}

TEST(TokenizerTest, VocabularyIsDeterministic) {
  auto corpus = ReadFile(DefaultCorpusPath());
  ASSERT_TRUE(corpus.ok());
  Tokenizer a = Tokenizer::FromCorpus(*corpus);
  Tokenizer b = Tokenizer::FromCorpus(*corpus);
  ASSERT_EQ(a.size(), b.size());
  for (int32_t id = 0; id < a.size(); ++id) EXPECT_EQ(a.TokenText(id), b.TokenText(id));
  // Most frequent first after the specials.
  EXPECT_GE(a.counts()[Tokenizer::kNumSpecial], a.counts()[Tokenizer::kNumSpecial + 1]);
}

TEST(TokenizerTest, CorpusTextRoundTripsExactly) {
  auto corpus = ReadFile(DefaultCorpusPath());
  ASSERT_TRUE(corpus.ok());
  const Tokenizer& tok = Target().tokenizer();
  std::string slice = corpus->substr(0, 20000);
  slice = slice.substr(0, slice.rfind("<|end|>\n") + 8);
  std::vector<int32_t> ids = tok.Encode(slice);
  EXPECT_EQ(tok.Decode(ids), slice);
  for (int32_t id : ids) EXPECT_NE(id, Tokenizer::kUnkId);
}

TEST(TokenizerTest, IdsRoundTripThroughTextForAnySequence) {
  const Tokenizer& tok = Target().tokenizer();
  uint64_t x = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int32_t> ids;
    for (int i = 0; i < 30; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ids.push_back(static_cast<int32_t>((x >> 33) % tok.size()));
    }
    EXPECT_EQ(tok.Encode(tok.Decode(ids)), ids) << tok.Decode(ids);
  }
}

TEST(TokenizerTest, UnknownWordsBecomeUnk) {
  const Tokenizer& tok = Target().tokenizer();
  std::vector<int32_t> ids = tok.Encode("the zzqxunknownword .");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids[1], Tokenizer::kUnkId);
  EXPECT_NE(ids[0], Tokenizer::kUnkId);
}

TEST(ChatTemplateTest, RendersMarkersAndGenerationPrompt) {
  auto text = RenderChat({{"system", "Be brief.", ""}, {"user", "Hi?", ""}}, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "<|system|>\nBe brief.<|end|>\n<|user|>\nHi?<|end|>\n<|assistant|>\n");
  auto bad = RenderChat({{"tool", "x", ""}}, false);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("messages[0].role"), absl::string_view::npos);
}

TEST(ChatTemplateTest, LossMaskCoversExactlyTheAssistantTurn) {
  const Tokenizer& tok = Target().tokenizer();
  auto r = RenderChatTokens(tok, {{"user", "What is the capital of Lofoum?", ""},
                                  {"assistant", "It is Kepo.", "The user asks."}});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->ids.size(), r->loss_mask.size());
  std::string masked, unmasked;
  std::vector<int32_t> m, u;
  for (size_t i = 0; i < r->ids.size(); ++i) (r->loss_mask[i] ? m : u).push_back(r->ids[i]);
  EXPECT_EQ(tok.Decode(m), "<think>\nThe user asks.\n</think>\nIt is Kepo.<|end|>");
  EXPECT_EQ(tok.Decode(u), "<|user|>\nWhat is the capital of Lofoum?<|end|>\n<|assistant|>\n\n");
  // The same ids as encoding the rendered text in one go.
  auto text = RenderChat({{"user", "What is the capital of Lofoum?", ""},
                          {"assistant", "It is Kepo.", "The user asks."}},
                         false);
  EXPECT_EQ(tok.Encode(*text), r->ids);
}

TEST(ChatTemplateTest, DecodeAssistantTurnSplitsReasoning) {
  const Tokenizer& tok = Target().tokenizer();
  std::vector<int32_t> gen = tok.Encode("<think>\nThe user asks.\n</think>\nIt is Kepo.<|end|>");
  ChatMessage m = DecodeAssistantTurn(tok, gen);
  EXPECT_EQ(m.reasoning, "\nThe user asks.\n");
  EXPECT_EQ(m.content, "\nIt is Kepo.");
}

}  // namespace
}  // namespace longhaul::refmodel
