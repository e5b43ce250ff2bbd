// lh-finetune --backend refengine, run as a subprocess on lh-extract's output: resume after a
// kill continues the same loss curve, and the exported drafter serves in lh-refengine.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>

#include "core/event.h"
#include "core/fs.h"
#include "core/strings.h"
#include "tests/stages/common/stage_events.h"
#include "tests/stages/refengine/http_test_client.h"
#include "tests/stages/refengine/refengine_process.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using refmodel::testing::AnswerPrompts;
using refmodel::testing::SamplesJsonl;
using testing::BinPath;
using testing::ReadEvents;
using testing::ReadTextFile;
using testing::RunCommand;
using testing::Subprocess;
using testing::TempDir;
using testing::WaitFor;

// step -> loss of the `loss` metric events.
std::map<int64_t, double> Losses(const std::vector<StageEvent>& events) {
  std::map<int64_t, double> out;
  for (const StageEvent& e : events) {
    if (e.type == EventType::kMetric && e.name == "loss") out[*e.step] = e.value;
  }
  return out;
}

std::vector<int64_t> Checkpoints(const std::vector<StageEvent>& events) {
  std::vector<int64_t> out;
  for (const StageEvent& e : events) {
    if (e.type == EventType::kCheckpoint) out.push_back(*e.step);
  }
  return out;
}

class FinetuneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteTextFile(dir_.Join("samples.jsonl"),
                           SamplesJsonl(AnswerPrompts(0, 80, 0.8, 100)));
    auto r = RunCommand({BinPath("lh-extract"), "--backend", "refengine", "--data",
                         dir_.Join("samples.jsonl"), "--out", dir_.Join("states")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::vector<std::string> Argv(const std::string& out, int epochs) {
    return {BinPath("lh-finetune"), "--backend",    "refengine", "--data",
            dir_.Join("states"),    "--out",        out,         "--epochs",
            std::to_string(epochs), "--batch-size", "32"};
  }
  TempDir dir_;
};

TEST_F(FinetuneTest, ResumesFromItsLastEpochCheckpointAndContinuesTheLossCurve) {
  const int epochs = 6;
  // Uninterrupted reference run.
  auto full =
      RunCommand(Argv(dir_.Join("full"), epochs), {{"LONGHAUL_EVENTS", dir_.Join("full.events")}});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  std::map<int64_t, double> full_losses = Losses(ReadEvents(dir_.Join("full.events")));
  ASSERT_FALSE(full_losses.empty());

  // Killed (SIGKILL) as soon as epoch 1's checkpoint is reported.
  std::string out = dir_.Join("run");
  auto proc = Subprocess::Start(Argv(out, epochs), {{"LONGHAUL_EVENTS", dir_.Join("a.events")}},
                                dir_.Join("a.log"));
  ASSERT_TRUE(proc.ok());
  ASSERT_TRUE(
      WaitFor([&] { return !Checkpoints(ReadEvents(dir_.Join("a.events"))).empty(); }, 60000, 2));
  (*proc)->Signal(SIGKILL);
  (*proc)->Wait(10000);
  std::vector<int64_t> before = Checkpoints(ReadEvents(dir_.Join("a.events")));
  ASSERT_LT(before.back(), epochs) << "the run finished before it could be killed";
  int64_t last = before.back();
  EXPECT_TRUE(PathExists(out + "/ckpt/epoch-1/trainer_state.json"));
  EXPECT_FALSE(PathExists(out + "/drafter/config.json"));

  // Run again as a retry: it continues after the newest checkpoint.
  auto again = RunCommand(Argv(out, epochs),
                          {{"LONGHAUL_EVENTS", dir_.Join("b.events")}, {"LONGHAUL_RESUME", "1"}});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find(StrCat("resuming from ", out, "/ckpt/epoch-", last)), std::string::npos)
      << again.out;
  std::vector<StageEvent> b = ReadEvents(dir_.Join("b.events"));
  std::vector<int64_t> after = Checkpoints(b);
  ASSERT_FALSE(after.empty());
  EXPECT_EQ(after.front(), last + 1);
  EXPECT_EQ(after.back(), epochs);
  // The loss curve continues: the resumed steps follow the checkpoint's and their losses are
  // exactly those of the uninterrupted run.
  std::map<int64_t, double> resumed = Losses(b);
  ASSERT_FALSE(resumed.empty());
  int64_t steps_per_epoch = full_losses.rbegin()->first / epochs;
  EXPECT_EQ(resumed.begin()->first, last * steps_per_epoch + 1);
  EXPECT_EQ(resumed.rbegin()->first, full_losses.rbegin()->first);
  for (const auto& [step, loss] : resumed) {
    ASSERT_EQ(full_losses.count(step), 1u) << step;
    EXPECT_EQ(loss, full_losses[step]) << "step " << step;
  }
  // Same final drafter as the uninterrupted run.
  EXPECT_EQ(ReadTextFile(out + "/drafter/weights.bin"),
            ReadTextFile(dir_.Join("full/drafter/weights.bin")));
  // Later epochs have lower loss than the first.
  EXPECT_LT(resumed.rbegin()->second, full_losses.begin()->second);
}

TEST_F(FinetuneTest, ExportedDrafterLoadsInRefengineAndBeatsAnUntrainedOne) {
  auto trained =
      RunCommand(Argv(dir_.Join("trained"), 4), {{"LONGHAUL_EVENTS", dir_.Join("t.events")}});
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  auto untrained = RunCommand(Argv(dir_.Join("untrained"), 0), {});
  ASSERT_EQ(untrained.exit_code, 0) << untrained.err;
  bool output = false, artifact = false;
  for (const StageEvent& e : ReadEvents(dir_.Join("t.events"))) {
    if (e.type == EventType::kOutput && e.name == "drafter") {
      output = true;
      EXPECT_TRUE(EndsWith(e.text, "/trained/drafter"));
    }
    artifact |= e.type == EventType::kArtifact && e.name == "drafter";
  }
  EXPECT_TRUE(output);
  EXPECT_TRUE(artifact);

  double rate[2];
  for (int i = 0; i < 2; ++i) {
    std::string drafter = dir_.Join(i == 0 ? "trained/drafter" : "untrained/drafter");
    auto server =
        refengine::testing::StartRefengine(dir_, StrCat("server", i), {"--drafter", drafter});
    ASSERT_FALSE(HasFailure());
    int port = server.port;
    const auto& prompts = refmodel::testing::Prompts();
    for (int p = 300; p < 312; ++p) {
      nlohmann::json req = {
          {"messages", {{{"role", "user"}, {"content", prompts[p].messages[0].content}}}},
          {"temperature", 0},
          {"max_tokens", 60}};
      ASSERT_EQ(refengine::testing::PostJson(port, "/v1/chat/completions", req).status, 200);
    }
    std::string m = refengine::testing::HttpGet(port, "/metrics").body;
    rate[i] = refengine::testing::MetricValue(m, "vllm:spec_decode_num_accepted_tokens_total") /
              refengine::testing::MetricValue(m, "vllm:spec_decode_num_draft_tokens_total");
  }
  std::cout << "acceptance: trained " << rate[0] << ", untrained " << rate[1] << "\n";
  EXPECT_GT(rate[0], 0.2);
  EXPECT_GT(rate[0], rate[1] + 0.15);
}

// A checkpoint dir whose name is out of range is not ours: the scan skips it instead of
// throwing, and the run starts from scratch.
TEST_F(FinetuneTest, AHostileCheckpointNameIsSkipped) {
  std::string out = dir_.Join("hostile");
  for (const char* name : {"epoch-99999999999999999999", "epoch-4294967297"}) {
    ASSERT_TRUE(MakeDirs(StrCat(out, "/ckpt/", name)).ok());
    testing::WriteTextFile(StrCat(out, "/ckpt/", name, "/trainer_state.json"), "{}");
  }
  auto r = RunCommand(Argv(out, 1),
                      {{"LONGHAUL_EVENTS", dir_.Join("h.events")}, {"LONGHAUL_RESUME", "1"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("resuming from"), std::string::npos) << r.out;
  EXPECT_EQ(Checkpoints(ReadEvents(dir_.Join("h.events"))), std::vector<int64_t>{1});
}

TEST_F(FinetuneTest, ClearErrors) {
  auto no_data = RunCommand({BinPath("lh-finetune"), "--backend", "refengine", "--data",
                             dir_.Join("nope"), "--out", dir_.Join("o")});
  EXPECT_NE(no_data.exit_code, 0);
  EXPECT_NE(no_data.err.find("--data"), std::string::npos) << no_data.err;
  auto bad_vocab =
      RunCommand({BinPath("lh-finetune"), "--backend", "refengine", "--data", dir_.Join("states"),
                  "--out", dir_.Join("o"), "--draft-vocab-size", "999999"});
  EXPECT_EQ(bad_vocab.exit_code, 2);
  EXPECT_NE(bad_vocab.err.find("draft vocab size"), std::string::npos) << bad_vocab.err;
  // Resuming with other options is refused, naming what changed.
  ASSERT_EQ(RunCommand(Argv(dir_.Join("r"), 1), {}).exit_code, 0);
  std::vector<std::string> argv = Argv(dir_.Join("r"), 2);
  argv.push_back("--lr");
  argv.push_back("0.01");
  argv.push_back("--resume");
  auto changed = RunCommand(argv, {});
  EXPECT_NE(changed.exit_code, 0);
  EXPECT_NE(changed.err.find("learning_rate"), std::string::npos) << changed.err;
}

}  // namespace
}  // namespace longhaul
