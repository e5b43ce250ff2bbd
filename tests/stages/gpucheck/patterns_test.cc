// lh-gpucheck's pure parts: the memory patterns and their comparison, the UUID text, and the
// burn kernel's host reference.
#include "stages/gpucheck/patterns.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "stages/gpucheck/burn_kernel.h"
#include "stages/gpucheck/cuda_driver.h"

namespace longhaul::gpucheck {
namespace {

using ::testing::HasSubstr;

TEST(GpucheckPatternsTest, ParsesNamesAndRejectsUnknownOnes) {
  auto parsed = ParsePatterns("zeros, walking-ones,random");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed,
            (std::vector<Pattern>{Pattern::kZeros, Pattern::kWalkingOnes, Pattern::kRandom}));
  auto bad = ParsePatterns("zeros,walking-twos");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("unknown pattern 'walking-twos'"));
  EXPECT_FALSE(ParsePatterns(" , ").ok());
  for (Pattern p : AllPatterns()) {
    auto again = ParsePatterns(PatternName(p));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->front(), p);
  }
}

TEST(GpucheckPatternsTest, WordsFollowTheirDefinitions) {
  EXPECT_EQ(PatternWord(Pattern::kZeros, 1, 12345), 0u);
  EXPECT_EQ(PatternWord(Pattern::kOnes, 1, 12345), 0xffffffffu);
  EXPECT_EQ(PatternWord(Pattern::kWalkingOnes, 1, 0), 1u);
  EXPECT_EQ(PatternWord(Pattern::kWalkingOnes, 1, 33), 2u);
  EXPECT_EQ(PatternWord(Pattern::kWalkingOnes, 1, 31), 0x80000000u);
  EXPECT_EQ(PatternWord(Pattern::kWalkingZeros, 1, 33), 0xfffffffdu);
  EXPECT_EQ(PatternWord(Pattern::kAddress, 1, 1024), 4096u);
  // Past 4 GiB the high half of the byte offset is folded in: 0x1'0000'0004 -> 1 ^ 4.
  EXPECT_EQ(PatternWord(Pattern::kAddress, 1, (1ull << 30) + 1), 5u);
  EXPECT_TRUE(IsSolidPattern(Pattern::kZeros));
  EXPECT_FALSE(IsSolidPattern(Pattern::kAddress));
}

TEST(GpucheckPatternsTest, RandomWordsDependOnSeedAndIndexOnly) {
  std::set<uint32_t> distinct;
  int differ_by_seed = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    uint32_t w = PatternWord(Pattern::kRandom, 42, i);
    EXPECT_EQ(w, PatternWord(Pattern::kRandom, 42, i));
    distinct.insert(w);
    if (w != PatternWord(Pattern::kRandom, 43, i)) ++differ_by_seed;
  }
  EXPECT_GT(distinct.size(), 990u);
  EXPECT_GT(differ_by_seed, 990);
  // A chunk generated alone equals the same words of a longer run.
  std::vector<uint32_t> whole(100), part(10);
  FillPattern(Pattern::kRandom, 7, 0, whole.data(), whole.size());
  FillPattern(Pattern::kRandom, 7, 50, part.data(), part.size());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + 50));
}

TEST(GpucheckPatternsTest, CompareCountsEveryMismatchAndKeepsTheFirst) {
  const size_t n = 2048;
  std::vector<uint32_t> got(n), scratch(n);
  FillPattern(Pattern::kAddress, 1, 4096, got.data(), n);
  MismatchSummary clean;
  ComparePattern(Pattern::kAddress, 1, 4096, got.data(), n, scratch.data(), clean);
  EXPECT_EQ(clean.count, 0u);
  EXPECT_TRUE(clean.first.empty());

  for (size_t i = 10; i < n; i += 100) got[i] ^= 0x8;  // 21 words
  MismatchSummary summary;
  summary.keep = 3;
  ComparePattern(Pattern::kAddress, 1, 4096, got.data(), n, scratch.data(), summary);
  EXPECT_EQ(summary.count, 21u);
  ASSERT_EQ(summary.first.size(), 3u);
  EXPECT_EQ(summary.first[0].offset, (4096u + 10) * 4);
  EXPECT_EQ(summary.first[0].expected, (4096u + 10) * 4);
  EXPECT_EQ(summary.first[0].got, ((4096u + 10) * 4) ^ 0x8);
  EXPECT_EQ(summary.first[1].offset, (4096u + 110) * 4);
  // A second chunk adds to the count; the kept ones stay the first.
  ComparePattern(Pattern::kAddress, 1, 4096, got.data(), n, scratch.data(), summary);
  EXPECT_EQ(summary.count, 42u);
  EXPECT_EQ(summary.first.size(), 3u);
}

TEST(GpucheckPatternsTest, DescribesAMismatchWithOffsetAndBits) {
  EXPECT_EQ(DescribeMismatch({4096, 0, 8}),
            "byte offset 4096 (0x1000): expected 0x00000000, got 0x00000008 (bits 0x00000008 "
            "differ)");
}

TEST(GpucheckPatternsTest, FormatsUuidsAsNvidiaSmiDoes) {
  CUuuid uuid;
  const unsigned char bytes[16] = {0x6d, 0xd3, 0xa1, 0x1a, 0x4d, 0xf4, 0xde, 0x53,
                                   0xb7, 0xa7, 0xd0, 0xb8, 0xe1, 0xd7, 0x80, 0xca};
  std::memcpy(uuid.bytes, bytes, 16);
  EXPECT_EQ(FormatUuid(uuid), "GPU-6dd3a11a-4df4-de53-b7a7-d0b8e1d780ca");
}

TEST(GpucheckPatternsTest, BurnReferenceIsTheFmaChain) {
  std::vector<float> none = BurnReference(0);
  ASSERT_EQ(none.size(), kBurnDistinctStarts);
  EXPECT_EQ(none[0], 0.0f);
  EXPECT_EQ(none[512], 0.5f);
  std::vector<float> one = BurnReference(1);
  float x = 0.5f;
  for (int k = 0; k < kBurnFmasPerRound; ++k) x = std::fmaf(x, kBurnA, kBurnB);
  EXPECT_EQ(one[512], x);
  // The chain converges to b / (1 - a) = 1 and never leaves [0, 1].
  for (float v : BurnReference(4096)) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LE(v, 1.0f);
    EXPECT_NEAR(v, 1.0f, 1e-3);
  }
  EXPECT_NE(std::string(BurnKernelPtx()).find(std::string(".entry ") + kBurnKernelName + "("),
            std::string::npos);
}

}  // namespace
}  // namespace longhaul::gpucheck
