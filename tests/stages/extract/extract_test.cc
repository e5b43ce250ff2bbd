// lh-extract --backend refengine, run as a subprocess on data answered by the reference target.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/event.h"
#include "core/fs.h"
#include "core/strings.h"
#include "stages/refmodel/extraction.h"
#include "stages/refmodel/state_shard.h"
#include "tests/stages/common/stage_events.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using refmodel::testing::AnswerPrompts;
using refmodel::testing::SamplesJsonl;
using refmodel::testing::Target;
using testing::BinPath;
using testing::RunCommand;
using testing::TempDir;

class ExtractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    samples_ = AnswerPrompts(0, 25, 0.8, 80);
    testing::WriteTextFile(dir_.Join("samples.jsonl"), SamplesJsonl(samples_));
  }
  testing::CommandResult Extract(const std::string& out, const std::string& events,
                                 const std::string& data = "") {
    return RunCommand(
        {BinPath("lh-extract"), "--backend", "refengine", "--data",
         data.empty() ? dir_.Join("samples.jsonl") : data, "--out", out, "--shard-size", "10"},
        {{"LONGHAUL_EVENTS", events}});
  }

  TempDir dir_;
  std::vector<refmodel::ConversationSample> samples_;
};

TEST_F(ExtractTest, WritesConsistentShardsAndManifest) {
  auto r = Extract(dir_.Join("out"), dir_.Join("events"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto manifest = refmodel::ReadStateManifest(dir_.Join("out"));
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_TRUE(manifest->complete);
  EXPECT_EQ(manifest->target_model_hash, Target().model_hash());
  EXPECT_EQ(manifest->hidden_size, Target().hidden_size());
  ASSERT_EQ(manifest->shards.size(), 3u);
  EXPECT_EQ(manifest->shards[0].samples, 10);
  EXPECT_EQ(manifest->shards[2].samples, 5);
  EXPECT_EQ(manifest->num_samples(), 25);

  auto states = refmodel::LoadStates(dir_.Join("out"), *manifest);
  ASSERT_TRUE(states.ok()) << states.status();
  ASSERT_EQ(states->size(), 25u);
  int64_t tokens = 0, loss_tokens = 0;
  const int h = Target().hidden_size();
  for (size_t i = 0; i < states->size(); ++i) {
    const refmodel::StateSequence& s = (*states)[i];
    EXPECT_EQ(s.id, samples_[i].id);
    // The stored states are exactly the target's over the rendered conversation.
    auto want = refmodel::ExtractStates(Target(), samples_[i]);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(s.input_ids, want->input_ids);
    EXPECT_EQ(s.loss_mask, want->loss_mask);
    EXPECT_EQ(s.aux_hidden_state, want->aux_hidden_state);
    ASSERT_EQ(s.hidden_state.size(), s.input_ids.size() * h);
    ASSERT_EQ(s.aux_hidden_state.size(), s.input_ids.size() * 3 * h);
    // The assistant's generated tokens are the masked ones and end with <|end|>.
    std::vector<int32_t> assistant;
    for (size_t t = 0; t < s.input_ids.size(); ++t) {
      if (s.loss_mask[t]) assistant.push_back(s.input_ids[t]);
    }
    ASSERT_FALSE(assistant.empty());
    EXPECT_EQ(assistant.back(), refmodel::Tokenizer::kEndId);
    refmodel::ChatMessage decoded = refmodel::DecodeAssistantTurn(Target().tokenizer(), assistant);
    EXPECT_EQ(StripWhitespace(decoded.content),
              StripWhitespace(samples_[i].messages.back().content));
    tokens += static_cast<int64_t>(s.input_ids.size());
    loss_tokens += static_cast<int64_t>(assistant.size());
  }
  EXPECT_EQ(manifest->num_tokens(), tokens);
  EXPECT_EQ(manifest->num_loss_tokens(), loss_tokens);

  std::vector<StageEvent> events = testing::ReadEvents(dir_.Join("events"), /*strict=*/true);
  bool progress_done = false, artifact = false;
  std::map<std::string, double> metrics;
  for (const StageEvent& e : events) {
    if (e.type == EventType::kProgress && e.done == 25 && e.total == 25) progress_done = true;
    if (e.type == EventType::kArtifact && e.name == "hidden_states") {
      artifact = true;
      EXPECT_TRUE(EndsWith(e.path, "manifest.json"));
    }
    if (e.type == EventType::kMetric) metrics[e.name] = e.value;
  }
  EXPECT_TRUE(progress_done);
  EXPECT_TRUE(artifact);
  EXPECT_EQ(metrics["samples"], 25);
  EXPECT_EQ(metrics["tokens"], tokens);
  EXPECT_EQ(metrics["bytes"], manifest->num_bytes());
}

TEST_F(ExtractTest, ResumeSkipsCompleteShards) {
  std::string out = dir_.Join("out");
  ASSERT_EQ(Extract(out, dir_.Join("e1")).exit_code, 0);
  // As if the run died while writing the last shard: it is missing and not complete.
  auto manifest = refmodel::ReadStateManifest(out).value();
  manifest.shards[2].complete = false;
  manifest.complete = false;
  ASSERT_TRUE(refmodel::WriteStateManifest(out, manifest).ok());
  std::filesystem::remove(out + "/shard-00002.bin");
  auto mtime = [](const std::string& p) {
    return std::filesystem::last_write_time(p).time_since_epoch().count();
  };
  auto before0 = mtime(out + "/shard-00000.bin");
  auto before1 = mtime(out + "/shard-00001.bin");

  auto r = Extract(out, dir_.Join("e2"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("resuming: 2 of 3 shards already complete"), std::string::npos) << r.out;
  EXPECT_EQ(mtime(out + "/shard-00000.bin"), before0);
  EXPECT_EQ(mtime(out + "/shard-00001.bin"), before1);
  auto after = refmodel::ReadStateManifest(out).value();
  EXPECT_TRUE(after.complete);
  EXPECT_EQ(after.num_samples(), 25);
  EXPECT_TRUE(refmodel::LoadStates(out, after).ok());
}

TEST_F(ExtractTest, RefusesToMixDataFilesAndNamesBadLines) {
  std::string out = dir_.Join("out");
  ASSERT_EQ(Extract(out, dir_.Join("e1")).exit_code, 0);
  testing::WriteTextFile(dir_.Join("other.jsonl"), SamplesJsonl(AnswerPrompts(30, 12, 0.8, 40)));
  auto mixed = Extract(out, dir_.Join("e2"), dir_.Join("other.jsonl"));
  EXPECT_NE(mixed.exit_code, 0);
  EXPECT_NE(mixed.err.find("another data file"), std::string::npos) << mixed.err;

  testing::WriteTextFile(dir_.Join("bad.jsonl"),
                         SamplesJsonl(AnswerPrompts(0, 2, 0.0, 10)) + "{\"id\": 3, oops\n");
  auto bad = Extract(dir_.Join("out2"), dir_.Join("e3"), dir_.Join("bad.jsonl"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.jsonl:3"), std::string::npos) << bad.err;

  auto missing = Extract(dir_.Join("out3"), dir_.Join("e4"), dir_.Join("nope.jsonl"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nope.jsonl"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace longhaul
