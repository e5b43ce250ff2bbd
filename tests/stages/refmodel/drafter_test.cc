#include "stages/refmodel/drafter.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "stages/refmodel/tensor_file.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul::refmodel {
namespace {

using refmodel::testing::Target;

Drafter Untrained(int n = 64) {
  std::vector<int64_t> counts(Target().vocab_size(), 0);
  for (int i = 0; i < Target().vocab_size(); ++i) counts[i] = Target().tokenizer().counts()[i];
  auto vocab = BuildDraftVocab(counts, n);
  EXPECT_TRUE(vocab.ok());
  DrafterConfig c;
  c.target_vocab_size = Target().vocab_size();
  c.target_hidden_size = Target().hidden_size();
  c.hidden_size = 16;
  c.target_model_hash = Target().model_hash();
  auto d = Drafter::Create(c, *vocab, 3);
  EXPECT_TRUE(d.ok()) << d.status();
  return *d;
}

TEST(DraftVocabTest, TopTokensInIdOrderWithConsistentMappings) {
  std::vector<int64_t> counts = {0, 5, 1, 9, 0, 7};
  auto v = BuildDraftVocab(counts, 3);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->draft_to_target, (std::vector<int32_t>{1, 3, 5}));
  EXPECT_EQ(v->d2t, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(v->t2d, (std::vector<uint8_t>{0, 1, 0, 1, 0, 1}));
  // Fewer seen tokens than asked: the lowest unused ids fill up.
  auto w = BuildDraftVocab(counts, 6);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->draft_to_target, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_FALSE(BuildDraftVocab(counts, 7).ok());
  auto back = DraftVocabFromMappings(v->d2t, v->t2d);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->draft_to_target, v->draft_to_target);
  std::vector<uint8_t> bad_t2d = v->t2d;
  bad_t2d[0] = 1;
  EXPECT_FALSE(DraftVocabFromMappings(v->d2t, bad_t2d).ok());
}

TEST(DrafterTest, SaveLoadRoundTripsAndMatchesTheTarget) {
  longhaul::testing::TempDir dir;
  Drafter d = Untrained();
  ASSERT_TRUE(d.Save(dir.Join("drafter")).ok());
  for (const char* f : {"config.json", "weights.bin", "d2t.bin", "t2d.bin"}) {
    EXPECT_TRUE(PathExists(dir.Join(std::string("drafter/") + f))) << f;
  }
  auto loaded = Drafter::Load(dir.Join("drafter"));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->weights().head_w, d.weights().head_w);
  EXPECT_EQ(loaded->weights().fc_w, d.weights().fc_w);
  EXPECT_EQ(loaded->vocab().draft_to_target, d.vocab().draft_to_target);
  EXPECT_TRUE(loaded->CheckTarget(Target()).ok());
  // Same forward pass.
  std::vector<float> aux(Target().aux_size(), 0.5f), g1(16), g2(16), a(16), l1(64), l2(64);
  d.Fuse(aux.data(), g1.data());
  loaded->Fuse(aux.data(), g2.data());
  d.Step(g1.data(), Target().TokenEmbedding(9).data(), a.data(), l1.data());
  loaded->Step(g2.data(), Target().TokenEmbedding(9).data(), a.data(), l2.data());
  EXPECT_EQ(l1, l2);
}

TEST(DrafterTest, LoadNamesWhatIsWrong) {
  longhaul::testing::TempDir dir;
  Drafter d = Untrained();
  ASSERT_TRUE(d.Save(dir.path()).ok());

  auto missing = Drafter::Load(dir.Join("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("config.json"), absl::string_view::npos);

  // A config that disagrees with the weights' shapes.
  std::string config = ReadFile(dir.Join("config.json")).value();
  std::string changed = config;
  changed.replace(changed.find("\"draft_vocab_size\": 64"), 22, "\"draft_vocab_size\": 65");
  ASSERT_TRUE(WriteFileAtomic(dir.Join("config.json"), changed).ok());
  auto bad = Drafter::Load(dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("lm_head.weight"), absl::string_view::npos) << bad.status();
  ASSERT_TRUE(WriteFileAtomic(dir.Join("config.json"), config).ok());

  // A truncated weights file.
  std::string weights = ReadFile(dir.Join("weights.bin")).value();
  ASSERT_TRUE(WriteFileAtomic(dir.Join("weights.bin"), weights.substr(0, weights.size() / 2)).ok());
  auto torn = Drafter::Load(dir.path());
  ASSERT_FALSE(torn.ok());
  EXPECT_NE(torn.status().message().find("weights.bin"), absl::string_view::npos);
  EXPECT_EQ(torn.status().code(), absl::StatusCode::kDataLoss) << torn.status();
}

TEST(DrafterTest, RefusesAnotherTarget) {
  Drafter d = Untrained();
  d.mutable_config().target_model_hash = std::string(64, 'a');
  Status s = d.CheckTarget(Target());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("trained for target model"), absl::string_view::npos);
  Drafter e = Untrained();
  e.mutable_config().aux_layer_ids = {1, 2, 3};
  s = e.CheckTarget(Target());
  EXPECT_NE(s.message().find("[1, 2, 3]"), absl::string_view::npos) << s;
}

TEST(TensorFileTest, RoundTripsEveryDtypeAndRejectsForeignFiles) {
  longhaul::testing::TempDir dir;
  TensorMap t;
  t["a"] = Tensor::F32({2, 2}, {1, 2, 3, 4});
  t["b"] = Tensor::I64({3}, {-1, 0, 1});
  t["c"] = Tensor::U8({2}, {0, 1});
  ASSERT_TRUE(WriteTensorFile(dir.Join("t.bin"), t).ok());
  auto back = ReadTensorFile(dir.Join("t.bin"));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->at("a").f32, t["a"].f32);
  EXPECT_EQ(back->at("b").i64, t["b"].i64);
  EXPECT_EQ(back->at("c").u8, t["c"].u8);
  auto wrong = GetTensor(*back, "t.bin", "a", DType::kFloat32, {4});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("has shape [2, 2], expected [4]"),
            absl::string_view::npos);
  ASSERT_TRUE(WriteFileAtomic(dir.Join("x.bin"), "hello world, not tensors").ok());
  auto foreign = ReadTensorFile(dir.Join("x.bin"));
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.status().message().find("bad magic"), absl::string_view::npos);
}

}  // namespace
}  // namespace longhaul::refmodel
