// lh-inspect predictions against real servers: lh-refengine target-only, with a drafter
// trained here (lh-extract + lh-finetune, refengine backend), and with the same drafter fed
// the wrong hidden state (--drafter-misaligned). Outputs are equal at temperature 0 (no
// integration bug) and the misaligned drafter's acceptance is flagged as far below the
// correct one's. A server that answers differently is caught as an integration bug (fake
// OpenAI servers, in-process). lh-inspect drafter checks the trained drafter against the
// extraction manifest.
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/event_writer.h"
#include "core/strings.h"
#include "stages/inspect/predictions_inspector.h"
#include "tests/stages/common/fake_openai_server.h"
#include "tests/stages/refengine/http_test_client.h"
#include "tests/stages/refengine/refengine_process.h"
#include "tests/stages/refmodel/refmodel_testing.h"
#include "tests/testing/test_util.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;
using testing::BinPath;
using testing::ReadTextFile;
using testing::RunCommand;
using testing::TempDir;

using Server = refengine::testing::RefengineServer;

// One drafter and three servers for the whole suite: training is the slow part.
class PredictionsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    testing::WriteTextFile(
        dir_->Join("samples.jsonl"),
        refmodel::testing::SamplesJsonl(refmodel::testing::AnswerPrompts(0, 80, 0.8, 100)));
    auto e = RunCommand({BinPath("lh-extract"), "--backend", "refengine", "--data",
                         dir_->Join("samples.jsonl"), "--out", dir_->Join("states")});
    ASSERT_EQ(e.exit_code, 0) << e.err;
    auto f = RunCommand({BinPath("lh-finetune"), "--backend", "refengine", "--data",
                         dir_->Join("states"), "--out", dir_->Join("ft"), "--epochs", "4",
                         "--batch-size", "32"});
    ASSERT_EQ(f.exit_code, 0) << f.err;
    // Held-out prompts (the drafter was trained on answers to prompts 0-79).
    std::string prompts;
    const auto& all = refmodel::testing::Prompts();
    for (size_t i = 300; i < 316; ++i) {
      prompts +=
          json{{"id", all[i].id},
               {"conversations", {{{"role", "user"}, {"content", all[i].messages[0].content}}}}}
              .dump() +
          "\n";
    }
    testing::WriteTextFile(dir_->Join("prompts.jsonl"), prompts);
    std::string drafter = dir_->Join("ft/drafter");
    target_ = Start("target", {});
    spec_ = Start("spec", {"--drafter", drafter});
    misaligned_ = Start("misaligned", {"--drafter", drafter, "--drafter-misaligned"});
  }
  static void TearDownTestSuite() {
    delete target_;
    delete spec_;
    delete misaligned_;
    delete dir_;
  }

  static Server* Start(const std::string& name, std::vector<std::string> extra) {
    return new Server(refengine::testing::StartRefengine(*dir_, name, extra));
  }

  // lh-inspect predictions; returns the report.
  json Predictions(const Server& spec, const std::string& name, std::vector<std::string> extra,
                   testing::CommandResult* result = nullptr) {
    std::vector<std::string> argv = {BinPath("lh-inspect"),
                                     "predictions",
                                     "--target",
                                     target_->url(),
                                     "--spec",
                                     spec.url(),
                                     "--prompts",
                                     dir_->Join("prompts.jsonl"),
                                     "--num",
                                     "16",
                                     "--max-tokens",
                                     "60",
                                     "--report",
                                     dir_->Join(name)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv, {{"LONGHAUL_EVENTS", dir_->Join(name + ".events")}});
    if (result) *result = r;
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::cout << r.out;
    return json::parse(ReadTextFile(dir_->Join(name)), nullptr, false);
  }

  static bool Has(const json& report, const std::string& check) {
    for (const json& f : report["findings"]) {
      if (f["check"] == check) return true;
    }
    return false;
  }

  static TempDir* dir_;
  static Server *target_, *spec_, *misaligned_;
};

TempDir* PredictionsTest::dir_ = nullptr;
Server* PredictionsTest::target_ = nullptr;
Server* PredictionsTest::spec_ = nullptr;
Server* PredictionsTest::misaligned_ = nullptr;

TEST_F(PredictionsTest, CorrectDrafterIsLosslessAndHealthy) {
  json r = Predictions(*spec_, "correct.json", {});
  ASSERT_TRUE(r.is_object());
  const json& p = r["sections"]["predictions"];
  EXPECT_EQ(p["prompts_compared"], 16);
  EXPECT_EQ(p["mismatches"], 0);
  EXPECT_GT(p["target_completion_tokens"].get<int>(), 200);
  EXPECT_EQ(p["acceptance"]["style"], "vllm");
  double pos0 = p["acceptance"]["per_position_acceptance"][0].get<double>();
  EXPECT_GT(pos0, 0.3);
  EXPECT_FALSE(Has(r, "output_mismatch"));
  EXPECT_FALSE(Has(r, "weak_position_0")) << r["findings"].dump(2);
  EXPECT_EQ(r["summary"]["errors"], 0) << r["findings"].dump(2);
  EXPECT_EQ(r["summary"]["warnings"], 0) << r["findings"].dump(2);
}

TEST_F(PredictionsTest, MisalignedDrafterIsLosslessButFlaggedFarBelowTheCorrectOne) {
  json good = Predictions(*spec_, "good.json", {});
  double pos0 =
      good["sections"]["predictions"]["acceptance"]["per_position_acceptance"][0].get<double>();
  std::string expected = StrCat(pos0);

  // The correct drafter meets its own figure; the misaligned one is far below it.
  json again = Predictions(*spec_, "again.json", {"--expected-acceptance", expected});
  EXPECT_FALSE(Has(again, "acceptance_far_below_expected")) << again["findings"].dump(2);

  testing::CommandResult result;
  json bad =
      Predictions(*misaligned_, "misaligned.json", {"--expected-acceptance", expected}, &result);
  const json& p = bad["sections"]["predictions"];
  EXPECT_EQ(p["mismatches"], 0);  // verification keeps outputs right
  EXPECT_FALSE(Has(bad, "output_mismatch"));
  EXPECT_LT(p["acceptance"]["acceptance_rate"].get<double>(),
            good["sections"]["predictions"]["acceptance"]["acceptance_rate"].get<double>());
  EXPECT_TRUE(Has(bad, "acceptance_far_below_expected")) << bad["findings"].dump(2);
  EXPECT_NE(result.out.find("[warn] predictions/acceptance_far_below_expected"), std::string::npos)
      << result.out;
  // The metric events carry the figures for the run's history.
  std::string events = ReadTextFile(dir_->Join("misaligned.json.events"));
  EXPECT_NE(events.find("\"accept_rate_pos_0\""), std::string::npos);
  EXPECT_NE(events.find("acceptance_far_below_expected"), std::string::npos);

  // --fail-on warn turns the finding into a failing exit code.
  auto failing = RunCommand({BinPath("lh-inspect"), "predictions", "--target", target_->url(),
                             "--spec", misaligned_->url(), "--prompts", dir_->Join("prompts.jsonl"),
                             "--num", "4", "--max-tokens", "40", "--report", "-",
                             "--expected-acceptance", expected, "--fail-on", "warn"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
}

TEST_F(PredictionsTest, DrafterChecksAgainstTheExtractionManifest) {
  auto ok = RunCommand({BinPath("lh-inspect"), "drafter", "--drafter", dir_->Join("ft/drafter"),
                        "--target-config", dir_->Join("states"), "--report",
                        dir_->Join("drafter.json"), "--fail-on", "warn"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  json r = json::parse(ReadTextFile(dir_->Join("drafter.json")));
  EXPECT_EQ(r["sections"]["drafter"]["target"]["source"], dir_->Join("states/manifest.json"));
  EXPECT_EQ(r["sections"]["drafter"]["aux_layer_ids_location"], "top level");

  auto wrong = RunCommand({BinPath("lh-inspect"), "drafter", "--drafter", dir_->Join("ft/drafter"),
                           "--target-vocab-size", "1000", "--report", "-", "--fail-on", "error"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.out.find("target_vocab_mismatch"), std::string::npos) << wrong.out;
}

TEST_F(PredictionsTest, AllCombinesTheInspectionsInOneReport) {
  auto r = RunCommand({BinPath("lh-inspect"),
                       "all",
                       "--samples",
                       dir_->Join("samples.jsonl"),
                       "--drafter",
                       dir_->Join("ft/drafter"),
                       "--target-config",
                       dir_->Join("states"),
                       "--target",
                       target_->url(),
                       "--spec",
                       spec_->url(),
                       "--prompts",
                       dir_->Join("prompts.jsonl"),
                       "--num",
                       "4",
                       "--max-tokens",
                       "40",
                       "--report",
                       dir_->Join("all.json")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  json all = json::parse(ReadTextFile(dir_->Join("all.json")));
  EXPECT_EQ(all["sections"]["data"]["samples"], 80);
  EXPECT_TRUE(all["sections"].contains("drafter"));
  EXPECT_EQ(all["sections"]["predictions"]["prompts_compared"], 4);

  // A part that cannot run (nothing listens there) is an error finding; the others still run.
  auto down = RunCommand({BinPath("lh-inspect"), "all", "--samples", dir_->Join("samples.jsonl"),
                          "--target", target_->url(), "--spec", "http://127.0.0.1:1", "--report",
                          dir_->Join("down.json")});
  EXPECT_EQ(down.exit_code, 1);
  json d = json::parse(ReadTextFile(dir_->Join("down.json")));
  EXPECT_EQ(d["sections"]["data"]["samples"], 80);
  EXPECT_TRUE(Has(d, "not_run")) << d.dump(2);
}

// Two in-process fake servers that answer differently: the first differing prompt and token
// are reported as an integration bug.
TEST(PredictionsMismatchTest, DifferentAnswersAreAnIntegrationBug) {
  testing::FakeOpenAiOptions a, b;
  a.content = {"The", " capital", " is", " Brenn", "."};
  b.content = {"The", " capital", " is", " Ulm", "."};
  testing::FakeOpenAiServer target(a), spec(b);
  target.Start();
  spec.Start();
  PredictionOptions o;
  o.target_url = target.url();
  o.spec_url = spec.url();
  o.num = 3;
  o.max_tokens = 5;
  Report report;
  std::ostringstream out;
  EventWriter events;
  ASSERT_TRUE(InspectPredictions(o, report, out, events).ok());
  const Finding* bug = nullptr;
  for (const Finding& f : report.findings()) {
    if (f.check == "output_mismatch") bug = &f;
  }
  ASSERT_NE(bug, nullptr) << report.ToJson().dump(2);
  EXPECT_EQ(bug->severity, Severity::kError);
  EXPECT_NE(bug->text.find("3 of 3 prompts"), std::string::npos) << bug->text;
  EXPECT_NE(bug->text.find("prompt 0 (id builtin-0), answer token 3"), std::string::npos)
      << bug->text;
  EXPECT_NE(bug->text.find("[Brenn"), std::string::npos) << bug->text;
  EXPECT_NE(bug->text.find("[Ulm"), std::string::npos) << bug->text;

  // Same answers: no bug.
  testing::FakeOpenAiServer same(a);
  same.Start();
  o.spec_url = same.url();
  Report clean;
  ASSERT_TRUE(InspectPredictions(o, clean, out, events).ok());
  for (const Finding& f : clean.findings()) EXPECT_NE(f.check, "output_mismatch");
}

TEST(CompareTokensTest, FirstDifferenceAndLengthDifference) {
  TextDiff d = CompareTokens("a b c d", "a b x d");
  EXPECT_FALSE(d.equal);
  EXPECT_EQ(d.token, 2u);
  EXPECT_EQ(d.target_near, "a b [c] d");
  EXPECT_EQ(d.spec_near, "a b [x] d");
  TextDiff shorter = CompareTokens("a b c", "a b");
  EXPECT_FALSE(shorter.equal);
  EXPECT_EQ(shorter.token, 2u);
  EXPECT_EQ(shorter.spec_near, "a b [<end>]");
  EXPECT_TRUE(CompareTokens("a  b\nc", "a b c").equal);
}

}  // namespace
}  // namespace longhaul::inspect
