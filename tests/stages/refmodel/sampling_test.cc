#include "stages/refmodel/sampling.h"

#include <gtest/gtest.h>

#include <numeric>

#include "stages/refmodel/speculative.h"
#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refmodel {
namespace {

using testing::PromptIds;
using testing::Target;

TEST(RngTest, SameSeedSameStream) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
  for (int i = 0; i < 1000; ++i) {
    double u = a.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    ASSERT_LT(a.Below(7), 7u);
  }
}

TEST(ProcessProbsTest, GreedyIsOneHotOnTheLowestArgmax) {
  std::vector<float> p = {0.1f, 0.4f, 0.4f, 0.1f}, out;
  ProcessProbs(p, SamplingParams{0.0, 1.0}, &out);
  EXPECT_EQ(out, (std::vector<float>{0, 1, 0, 0}));
}

TEST(ProcessProbsTest, TemperatureSharpensAndTopPCuts) {
  std::vector<float> p = {0.5f, 0.3f, 0.15f, 0.05f}, out;
  ProcessProbs(p, SamplingParams{0.5, 1.0}, &out);
  EXPECT_NEAR(std::accumulate(out.begin(), out.end(), 0.0), 1.0, 1e-6);
  EXPECT_GT(out[0], 0.5f);  // p^2 renormalized: 0.25 / 0.3575
  EXPECT_NEAR(out[0], 0.25 / (0.25 + 0.09 + 0.0225 + 0.0025), 1e-5);
  ProcessProbs(p, SamplingParams{1.0, 0.8}, &out);  // keeps 0.5 + 0.3
  EXPECT_NEAR(out[0], 0.5 / 0.8, 1e-6);
  EXPECT_NEAR(out[1], 0.3 / 0.8, 1e-6);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 0.0f);
}

TEST(SamplingTest, SampleIndexFollowsTheDistribution) {
  std::vector<float> p = {0.7f, 0.0f, 0.2f, 0.1f};
  Rng rng(5);
  std::vector<int> hits(4, 0);
  for (int i = 0; i < 20000; ++i) ++hits[SampleIndex(p, rng)];
  EXPECT_EQ(hits[1], 0);
  EXPECT_NEAR(hits[0] / 20000.0, 0.7, 0.02);
  EXPECT_NEAR(hits[2] / 20000.0, 0.2, 0.02);
}

TEST(DecodingTest, GreedyIsDeterministic) {
  SpecDecoder plain(&Target(), nullptr, 0);
  for (int i = 0; i < 5; ++i) {
    Sequence a(PromptIds(i), SamplingParams{0.0, 1.0}, 1);
    Sequence b(PromptIds(i), SamplingParams{0.0, 1.0}, 999);  // seed does not matter
    std::vector<int32_t> x = plain.Generate(&a, 80, nullptr);
    EXPECT_FALSE(x.empty());
    EXPECT_EQ(x, plain.Generate(&b, 80, nullptr));
  }
}

TEST(DecodingTest, SeededSamplingIsReproducibleAndSeedsDiffer) {
  SpecDecoder plain(&Target(), nullptr, 0);
  int differing = 0;
  for (int i = 0; i < 5; ++i) {
    Sequence a(PromptIds(i), SamplingParams{0.9, 0.95}, 17);
    Sequence b(PromptIds(i), SamplingParams{0.9, 0.95}, 17);
    Sequence c(PromptIds(i), SamplingParams{0.9, 0.95}, 18);
    std::vector<int32_t> x = plain.Generate(&a, 60, nullptr);
    EXPECT_EQ(x, plain.Generate(&b, 60, nullptr));
    differing += x != plain.Generate(&c, 60, nullptr);
  }
  EXPECT_GE(differing, 3);
}

TEST(DecodingTest, AnswersEndWithTheEndToken) {
  SpecDecoder plain(&Target(), nullptr, 0);
  int ended = 0;
  for (int i = 0; i < 20; ++i) {
    Sequence a(PromptIds(i), SamplingParams{0.0, 1.0}, 1);
    std::vector<int32_t> x = plain.Generate(&a, 300, nullptr);
    ended += !x.empty() && x.back() == Tokenizer::kEndId;
  }
  EXPECT_GE(ended, 18);  // greedy answers finish instead of looping to the limit
}

}  // namespace
}  // namespace longhaul::refmodel
