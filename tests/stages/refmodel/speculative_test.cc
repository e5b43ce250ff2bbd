#include "stages/refmodel/speculative.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refmodel {
namespace {

using refmodel::testing::MakeDrafter;
using refmodel::testing::PromptIds;
using refmodel::testing::RunSpeculative;
using refmodel::testing::SpecRun;
using refmodel::testing::Target;

void ExpectCountsAddUp(const SpecCounts& c, int k) {
  EXPECT_GT(c.drafts, 0);
  EXPECT_EQ(c.draft_tokens, c.drafts * k);
  EXPECT_LE(c.accepted, c.draft_tokens);
  int64_t sum = 0;
  for (size_t i = 0; i < c.accepted_per_pos.size(); ++i) {
    sum += c.accepted_per_pos[i];
    EXPECT_LE(c.accepted_per_pos[i], c.drafts);
    if (i > 0) {
      EXPECT_LE(c.accepted_per_pos[i], c.accepted_per_pos[i - 1]) << "position " << i;
    }
  }
  EXPECT_EQ(sum, c.accepted);
}

TEST(SpeculativeTest, GreedyIsLosslessForEveryDrafterAndFeed) {
  Drafter untrained = MakeDrafter(0);
  for (int k : {1, 3, 5}) {
    for (DraftFeed feed : {DraftFeed::kCorrect, DraftFeed::kMisaligned}) {
      SpecRun run = RunSpeculative(&untrained, feed, k, 0.0, 300, 40);
      EXPECT_EQ(run.mismatches, 0) << "k=" << k;
      ExpectCountsAddUp(run.counts, k);
    }
  }
}

// The trained drafter is shared by the checks below (training takes a few seconds).
class TrainedDrafterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    trained_ = new Drafter(MakeDrafter(3));
    untrained_ = new Drafter(MakeDrafter(0));
  }
  static Drafter* trained_;
  static Drafter* untrained_;
};
Drafter* TrainedDrafterTest::trained_ = nullptr;
Drafter* TrainedDrafterTest::untrained_ = nullptr;

TEST_F(TrainedDrafterTest, LosslessAndMuchBetterThanUntrainedAndThanMisaligned) {
  const int k = 3;
  SpecRun good = RunSpeculative(trained_, DraftFeed::kCorrect, k, 0.0, 300, 60);
  SpecRun misaligned = RunSpeculative(trained_, DraftFeed::kMisaligned, k, 0.0, 300, 60);
  SpecRun untrained = RunSpeculative(untrained_, DraftFeed::kCorrect, k, 0.0, 300, 60);
  EXPECT_EQ(good.mismatches, 0);
  EXPECT_EQ(misaligned.mismatches, 0);  // verification keeps the output correct
  ExpectCountsAddUp(good.counts, k);
  ExpectCountsAddUp(misaligned.counts, k);
  ExpectCountsAddUp(untrained.counts, k);
  double rate = good.counts.AcceptanceRate();
  std::cout << "held-out greedy acceptance: trained " << rate << ", misaligned "
            << misaligned.counts.AcceptanceRate() << ", untrained "
            << untrained.counts.AcceptanceRate() << "\n";
  EXPECT_GT(rate, 0.3);   // neither ~0 ...
  EXPECT_LT(rate, 0.95);  // ... nor ~1
  EXPECT_GT(rate, untrained.counts.AcceptanceRate() + 0.25);
  EXPECT_LT(misaligned.counts.AcceptanceRate(), rate / 2);
  // Fewer target steps for the same tokens.
  EXPECT_LT(good.counts.drafts, good.tokens * 0.7);
}

TEST_F(TrainedDrafterTest, SamplingAcceptanceIsHigherForTheTrainedDrafter) {
  SpecRun good = RunSpeculative(trained_, DraftFeed::kCorrect, 3, 0.8, 300, 40);
  SpecRun misaligned = RunSpeculative(trained_, DraftFeed::kMisaligned, 3, 0.8, 300, 40);
  SpecRun untrained = RunSpeculative(untrained_, DraftFeed::kCorrect, 3, 0.8, 300, 40);
  ExpectCountsAddUp(good.counts, 3);
  EXPECT_GT(good.counts.AcceptanceRate(), 2 * untrained.counts.AcceptanceRate());
  EXPECT_GT(good.counts.AcceptanceRate(), 1.5 * misaligned.counts.AcceptanceRate());
}

// Wilson-Hilferty approximation of the chi-square quantile for df degrees of freedom.
double ChiSquareQuantile(int df, double z) {
  double a = 2.0 / (9.0 * df);
  return df * std::pow(1 - a + z * std::sqrt(a), 3);
}

// Pearson's statistic of `observed` pairs against `expected` probabilities of `n` draws, with
// bins under 5 expected draws lumped into one. Returns {statistic, degrees of freedom}.
std::pair<double, int> ChiSquare(const std::map<std::pair<int, int>, int>& observed,
                                 const std::map<std::pair<int, int>, double>& expected, int n) {
  double stat = 0, rest_expected = n, rest_observed = n;
  int bins = 0;
  for (const auto& [key, p] : expected) {
    double e = p * n;
    if (e < 5) continue;
    auto it = observed.find(key);
    double o = it == observed.end() ? 0 : it->second;
    stat += (o - e) * (o - e) / e;
    rest_expected -= e;
    rest_observed -= o;
    ++bins;
  }
  if (rest_expected >= 5) {
    stat += (rest_observed - rest_expected) * (rest_observed - rest_expected) / rest_expected;
    ++bins;
  }
  return {stat, bins - 1};
}

// At temperature > 0 speculative decoding must sample from the target's distribution. The
// first two tokens after a prompt (the second comes from the first verify round: an accepted
// draft, a residual draw after a rejection, or the next round) are drawn 20,000 times with
// different seeds; their joint distribution is compared with p(y1) p(y2 | y1) computed from
// the target. Tolerance: the chi-square statistic must stay below the 0.999 quantile for its
// degrees of freedom (a correct sampler fails that 1 time in 1000; the seeds are fixed, so the
// test is deterministic). A slightly wrong sampler fails it: the check has power.
TEST_F(TrainedDrafterTest, SamplingMatchesTheTargetDistribution) {
  const TargetModel& m = Target();
  const SamplingParams params{0.9, 1.0};
  for (const Drafter* drafter : {trained_, untrained_}) {
    SpecDecoder spec(&m, drafter, 3);
    // The prompt's first answer token is decided by prefill (target only); start the draw after
    // it, so both drawn tokens come from speculative rounds.
    std::vector<int32_t> prompt = PromptIds(310);
    prompt.push_back(Tokenizer::kThinkStartId);
    prompt.push_back(m.tokenizer().newline_id());

    std::map<std::pair<int, int>, double> expected;
    std::vector<float> p1, p2, q1, q2;
    m.NextTokenProbs(prompt, &p1);
    ProcessProbs(p1, params, &q1);
    std::vector<int32_t> ctx = prompt;
    for (int32_t y1 = 0; y1 < m.vocab_size(); ++y1) {
      if (q1[y1] * 20000 < 0.5) continue;
      ctx.push_back(y1);
      m.NextTokenProbs(ctx, &p2);
      ProcessProbs(p2, params, &q2);
      for (int32_t y2 = 0; y2 < m.vocab_size(); ++y2) {
        if (q1[y1] * q2[y2] * 20000 >= 0.5) expected[{y1, y2}] = q1[y1] * q2[y2];
      }
      ctx.pop_back();
    }

    // A sequence whose prompt minus its last token is prefilled, so that token is pending and
    // both draws below come from speculative rounds; aux states as Prefill() leaves them.
    Sequence start(std::vector<int32_t>(prompt.begin(), prompt.end() - 1), params, 0);
    start.prefilled = true;
    start.tokens.push_back(prompt.back());
    {
      std::vector<float> pp;
      std::span<const int32_t> processed(start.tokens.data(), start.tokens.size() - 1);
      start.aux_last.resize(m.aux_size());
      m.NextTokenProbs(processed, &pp);
      m.AuxHiddenState(processed, pp, start.aux_last.data());
      start.aux_prev.resize(m.aux_size());
      m.NextTokenProbs(processed.first(processed.size() - 1), &pp);
      m.AuxHiddenState(processed.first(processed.size() - 1), pp, start.aux_prev.data());
    }
    const int n = 20000;
    std::map<std::pair<int, int>, int> observed;
    SpecCounts counts;
    for (int i = 0; i < n; ++i) {
      Sequence seq = start;
      seq.rng = Rng(77 + i);
      std::vector<int32_t> got;
      while (got.size() < 2) {
        StepResult r = spec.Step(&seq);
        counts.Add(r);
        got.insert(got.end(), r.tokens.begin(), r.tokens.end());
      }
      ++observed[{got[0], got[1]}];
    }
    auto [stat, df] = ChiSquare(observed, expected, n);
    double limit = ChiSquareQuantile(df, 3.090);  // z of the 0.999 quantile
    std::cout << "chi-square " << stat << " with " << df << " df (limit " << limit
              << "), acceptance " << counts.AcceptanceRate() << "\n";
    EXPECT_GT(df, 10);
    EXPECT_LT(stat, limit);
    EXPECT_GT(counts.accepted, 0);
    EXPECT_LT(counts.accepted, counts.draft_tokens);  // both paths were taken

    // Power: a sampler that is slightly wrong (the target at temperature 1.1 instead of 0.9
    // for the first token) fails the same check.
    std::map<std::pair<int, int>, int> from_q;
    Rng rng(5);
    std::vector<float> flat(q1.size());
    ProcessProbs(p1, SamplingParams{1.1, 1.0}, &flat);
    for (int i = 0; i < n; ++i) {
      int32_t y1 = SampleIndex(flat, rng);
      ctx = prompt;
      ctx.push_back(y1);
      m.NextTokenProbs(ctx, &p2);
      ProcessProbs(p2, params, &q2);
      ++from_q[{y1, SampleIndex(q2, rng)}];
    }
    auto [bad_stat, bad_df] = ChiSquare(from_q, expected, n);
    EXPECT_GT(bad_stat, ChiSquareQuantile(bad_df, 3.090)) << "the check cannot tell samplers apart";
  }
}

}  // namespace
}  // namespace longhaul::refmodel
