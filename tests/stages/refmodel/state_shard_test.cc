#include "stages/refmodel/state_shard.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "stages/refmodel/extraction.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul::refmodel {
namespace {

using refmodel::testing::AnswerPrompts;
using refmodel::testing::ExtractAll;
using refmodel::testing::Target;

TEST(StateShardTest, WriteReadRoundTrip) {
  longhaul::testing::TempDir dir;
  std::vector<StateSequence> seqs = ExtractAll(AnswerPrompts(0, 3, 0.0, 40));
  ASSERT_TRUE(WriteStateShard(dir.Join("s.bin"), Target().hidden_size(), seqs).ok());
  auto back = ReadStateShard(dir.Join("s.bin"), Target().hidden_size());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*back)[i].id, seqs[i].id);
    EXPECT_EQ((*back)[i].input_ids, seqs[i].input_ids);
    EXPECT_EQ((*back)[i].loss_mask, seqs[i].loss_mask);
    EXPECT_EQ((*back)[i].aux_hidden_state, seqs[i].aux_hidden_state);
    EXPECT_EQ((*back)[i].hidden_state, seqs[i].hidden_state);
  }
  auto wrong_h = ReadStateShard(dir.Join("s.bin"), Target().hidden_size() + 1);
  EXPECT_FALSE(wrong_h.ok());
  std::string data = ReadFile(dir.Join("s.bin")).value();
  ASSERT_TRUE(WriteFileAtomic(dir.Join("t.bin"), data.substr(0, data.size() - 7)).ok());
  auto torn = ReadStateShard(dir.Join("t.bin"), Target().hidden_size());
  ASSERT_FALSE(torn.ok());
  EXPECT_NE(torn.status().message().find("truncated"), absl::string_view::npos);
}

TEST(StateShardTest, ExtractStatesMasksTheAnswerAndRejectsSamplesWithoutOne) {
  std::vector<ConversationSample> samples = AnswerPrompts(0, 1, 0.0, 40);
  auto s = ExtractStates(Target(), samples[0]);
  ASSERT_TRUE(s.ok());
  size_t first = 0;
  while (!s->loss_mask[first]) ++first;
  EXPECT_EQ(s->input_ids[first - 2], Tokenizer::kAssistantId);
  EXPECT_EQ(s->input_ids[first - 1], Target().tokenizer().newline_id());
  ConversationSample only_user = samples[0];
  only_user.messages.pop_back();
  auto none = ExtractStates(Target(), only_user);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no assistant turn"), absl::string_view::npos);
}

TEST(StateManifestTest, JsonRoundTripAndValidation) {
  StateManifest m;
  m.target_model_hash = "abc";
  m.target_vocab_size = 100;
  m.hidden_size = 32;
  m.data_path = "samples.jsonl";
  m.data_sha256 = "def";
  m.shard_size = 10;
  m.total_samples = 15;
  m.complete = true;
  m.shards.push_back({0, "shard-00000.bin", 0, 10, 500, 200, 1000, true});
  m.shards.push_back({1, "shard-00001.bin", 10, 5, 250, 100, 500, true});
  auto back = StateManifest::FromJson(m.ToJson(), "manifest.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->num_samples(), 15);
  EXPECT_EQ(back->num_tokens(), 750);
  EXPECT_EQ(back->shards[1].path, "shard-00001.bin");
  nlohmann::json j = m.ToJson();
  j["shards"][0]["path"] = "../etc/passwd";
  auto evil = StateManifest::FromJson(j, "manifest.json");
  ASSERT_FALSE(evil.ok());
  EXPECT_NE(evil.status().message().find("shards[0]"), absl::string_view::npos);
  j = m.ToJson();
  j.erase("hidden_size");
  auto missing = StateManifest::FromJson(j, "manifest.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("hidden_size"), absl::string_view::npos);
}

}  // namespace
}  // namespace longhaul::refmodel
