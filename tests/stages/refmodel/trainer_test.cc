#include <gtest/gtest.h>

#include "stages/refmodel/drafter_trainer.h"
#include "tests/stages/refmodel/refmodel_testing.h"

namespace longhaul::refmodel {
namespace {

using refmodel::testing::AnswerPrompts;
using refmodel::testing::AssistantTokenCounts;
using refmodel::testing::ExtractAll;
using refmodel::testing::Target;

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = ExtractAll(AnswerPrompts(0, 40, 0.8));
    vocab_ = BuildDraftVocab(AssistantTokenCounts(data_), 128).value();
    config_.target_vocab_size = Target().vocab_size();
    config_.target_hidden_size = Target().hidden_size();
    config_.hidden_size = 16;
    config_.target_model_hash = Target().model_hash();
  }
  Drafter Fresh() { return Drafter::Create(config_, vocab_, 11).value(); }

  std::vector<StateSequence> data_;
  DraftVocab vocab_;
  DrafterConfig config_;
};

TEST_F(TrainerTest, LossFallsAndAgreementRises) {
  Drafter d = Fresh();
  DrafterTrainer trainer(&d, &data_, TrainerOptions{});
  EvalReport before = trainer.Evaluate();
  std::vector<double> losses;
  int64_t last_step = 0;
  for (int e = 1; e <= 3; ++e) {
    EpochReport r = trainer.RunEpoch(e, [&](int64_t step, double loss) {
      EXPECT_EQ(step, last_step + 1);
      last_step = step;
      EXPECT_GT(loss, 0);
    });
    EXPECT_GT(r.steps, 0);
    losses.push_back(r.mean_loss);
  }
  EvalReport after = trainer.Evaluate();
  EXPECT_LT(losses.back(), losses.front());
  EXPECT_LT(after.loss, before.loss - 1.0);
  EXPECT_GT(after.top1, before.top1 + 0.2);
  EXPECT_EQ(trainer.global_step(), last_step);
}

TEST_F(TrainerTest, ResumingFromAnEpochCheckpointContinuesExactly) {
  // Uninterrupted: epochs 1 and 2.
  Drafter a = Fresh();
  DrafterTrainer ta(&a, &data_, TrainerOptions{});
  ta.RunEpoch(1, nullptr);
  std::vector<double> tail_a;
  ta.RunEpoch(2, [&](int64_t, double loss) { tail_a.push_back(loss); });

  // Interrupted after epoch 1: weights and optimizer state go through their files' tensors.
  Drafter b = Fresh();
  DrafterTrainer tb(&b, &data_, TrainerOptions{});
  tb.RunEpoch(1, nullptr);
  TensorMap opt = tb.OptimizerState();
  Drafter c = b;  // the checkpointed weights
  DrafterTrainer tc(&c, &data_, TrainerOptions{});
  ASSERT_TRUE(tc.RestoreOptimizerState(opt, "optimizer.bin").ok());
  EXPECT_EQ(tc.global_step(), tb.global_step());
  std::vector<double> tail_c;
  tc.RunEpoch(2, [&](int64_t, double loss) { tail_c.push_back(loss); });
  EXPECT_EQ(tail_a, tail_c);
  EXPECT_EQ(a.weights().head_w, c.weights().head_w);

  TensorMap broken = opt;
  broken.erase("adam.v.fc.bias");
  Status s = tc.RestoreOptimizerState(broken, "optimizer.bin");
  EXPECT_NE(s.message().find("adam.v.fc.bias"), absl::string_view::npos);
}

}  // namespace
}  // namespace longhaul::refmodel
