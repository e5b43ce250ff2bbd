#include "stages/refmodel/target_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refmodel {
namespace {

using testing::PromptIds;
using testing::Target;

double Sum(const std::vector<float>& p) { return std::accumulate(p.begin(), p.end(), 0.0); }

TEST(TargetModelTest, DistributionsSumToOneAndCoverTheVocab) {
  const TargetModel& m = Target();
  std::vector<float> p;
  std::vector<std::vector<int32_t>> contexts = {
      {}, {Tokenizer::kUserId}, PromptIds(0), PromptIds(5)};
  // Random contexts too, including unseen n-grams and the copy/repeat paths.
  uint64_t x = 99;
  for (int i = 0; i < 50; ++i) {
    std::vector<int32_t> ctx = PromptIds(i % 20);
    for (int j = 0; j < 1 + i; ++j) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      ctx.push_back(static_cast<int32_t>((x >> 33) % m.vocab_size()));
    }
    contexts.push_back(ctx);
  }
  for (const auto& ctx : contexts) {
    m.NextTokenProbs(ctx, &p);
    ASSERT_EQ(p.size(), static_cast<size_t>(m.vocab_size()));
    EXPECT_NEAR(Sum(p), 1.0, 1e-4);
    for (float v : p) ASSERT_GT(v, 0.0f);
  }
}

TEST(TargetModelTest, LearnsTheChatTemplate) {
  const TargetModel& m = Target();
  std::vector<float> p;
  // After a user turn's <|end|> comes a newline, then <|assistant|>.
  std::vector<int32_t> ctx = m.tokenizer().Encode("<|user|>\nWhat is 3 plus 4?<|end|>\n");
  m.NextTokenProbs(ctx, &p);
  EXPECT_GT(p[Tokenizer::kAssistantId], 0.8);
  // An answer copies the question's entity: "capital of X" names X.
  ctx = m.tokenizer().Encode(
      "<|user|>\nWhat is the capital of Lofoum?<|end|>\n<|assistant|>\nThe capital of");
  m.NextTokenProbs(ctx, &p);
  EXPECT_EQ(std::max_element(p.begin(), p.end()) - p.begin(), *m.tokenizer().Find("Lofoum"));
}

TEST(TargetModelTest, SegmentsFollowTheMarkers) {
  const Tokenizer& tok = Target().tokenizer();
  EXPECT_EQ(SegmentOf(tok.Encode("<|user|>\nhi")), 0);
  EXPECT_EQ(SegmentOf(tok.Encode("<|user|>\nhi<|end|>\n<|assistant|>\n")), 2);
  EXPECT_EQ(SegmentOf(tok.Encode("<|assistant|>\n<think>\nthe")), 1);
  EXPECT_EQ(SegmentOf(tok.Encode("<|assistant|>\n<think>\nthe</think>\nok")), 2);
  EXPECT_EQ(SegmentOf(tok.Encode("<|assistant|>\nok<|end|>\n")), 0);
}

TEST(TargetModelTest, HashDependsOnCorpusAndConfig) {
  auto a = TargetModel::FromCorpusText("<|user|>\nhello there.<|end|>\n");
  auto b = TargetModel::FromCorpusText("<|user|>\nhello there.<|end|>\n");
  auto c = TargetModel::FromCorpusText("<|user|>\nhello here.<|end|>\n");
  TargetConfig other;
  other.hidden_size = 16;
  auto d = TargetModel::FromCorpusText("<|user|>\nhello there.<|end|>\n", other);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ((*a)->model_hash(), (*b)->model_hash());
  EXPECT_NE((*a)->model_hash(), (*c)->model_hash());
  EXPECT_NE((*a)->model_hash(), (*d)->model_hash());
  EXPECT_EQ((*a)->model_hash().size(), 64u);
}

TEST(TargetModelTest, RejectsBadInput) {
  EXPECT_FALSE(TargetModel::FromCorpusText("").ok());
  TargetConfig bad;
  bad.order = 7;
  EXPECT_FALSE(TargetModel::FromCorpusText("a b c", bad).ok());
  auto missing = TargetModel::FromCorpusFile("/nonexistent/corpus.txt");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/corpus.txt"), absl::string_view::npos);
}

TEST(TargetModelTest, HiddenStatesHaveThreeLayersAndFollowTheirDefinition) {
  const TargetModel& m = Target();
  const int h = m.hidden_size();
  std::vector<int32_t> ids = PromptIds(3);
  std::vector<float> hidden, aux;
  m.SequenceStates(ids, &hidden, &aux);
  ASSERT_EQ(hidden.size(), ids.size() * h);
  ASSERT_EQ(aux.size(), ids.size() * 3 * h);
  for (size_t t = 0; t < ids.size(); ++t) {
    // low = token embedding; hidden_state = the high layer.
    auto e = m.TokenEmbedding(ids[t]);
    for (int d = 0; d < h; ++d) {
      ASSERT_EQ(aux[t * 3 * h + d], e[d]);
      ASSERT_EQ(hidden[t * h + d], aux[t * 3 * h + 2 * h + d]);
    }
  }
  // Same bigram -> same middle layer; deterministic across calls.
  std::vector<float> hidden2, aux2;
  m.SequenceStates(ids, &hidden2, &aux2);
  EXPECT_EQ(aux, aux2);
}

}  // namespace
}  // namespace longhaul::refmodel
