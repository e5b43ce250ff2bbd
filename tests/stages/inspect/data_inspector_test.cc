// lh-inspect data: planted problems in a conversations file are found and counted, in the
// library and through the binary (exit codes, events, report file).
#include "stages/inspect/data_inspector.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/event.h"
#include "core/strings.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/test_util.h"

namespace longhaul::inspect {
namespace {

using nlohmann::json;
using testing::TempDir;

std::string Sample(const std::string& id, const std::string& user, const std::string& answer,
                   const std::string& reasoning = "") {
  json turns = {{{"role", "user"}, {"content", user}},
                {{"role", "assistant"}, {"content", answer}}};
  return json{{"id", id},
              {"conversations", turns},
              {"reasoning", reasoning.empty() ? json(nullptr) : json(reasoning)}}
             .dump() +
         "\n";
}

const Finding* Find(const Report& r, const std::string& check) {
  for (const Finding& f : r.findings()) {
    if (f.check == check) return &f;
  }
  return nullptr;
}

class DataInspectorTest : public ::testing::Test {
 protected:
  // 10 samples: a leak of <|im_end|> in s3's answer, </think> in s4's reasoning, s5 and s6 with
  // empty answers (s6 cut inside its reasoning), s7 repeating s1's prompt and s8 repeating s2's
  // answer, s9 repeating s0's id; line 8 is not JSON and line 9 has no conversations.
  void SetUp() override {
    std::string text;
    text += Sample("s0", "What is the capital of Lofoum?", "The capital of Lofoum is Brenn.",
                   "The user asks about Lofoum.");
    text += Sample("s1", "Why is the sky blue?", "Because of Rayleigh scattering of light.");
    text += Sample("s2", "Name a river.", "The Ulm river runs west.");
    text += Sample("s3", "Say hi.", "Hi there!<|im_end|>");
    text += Sample("s4", "Count to three.", "One, two, three.", "Counting now </think>");
    text += Sample("s5", "Tell me a joke.", "   ");
    text += Sample("s6", "Think hard: 2+2?", "", "Let me think about two plus two and");
    text += "{not json\n";
    text += "{\"id\": \"bad\", \"turns\": []}\n";
    text += "\n";
    text += Sample("s7", "Why is the sky blue?", "Light scatters.");
    text += Sample("s8", "Name another river.", "The Ulm river runs west.");
    text += Sample("s0", "A question with a reused id?", "An answer.");
    testing::WriteTextFile(dir_.Join("samples.jsonl"), text);
    testing::WriteTextFile(
        dir_.Join("samples.failed.jsonl"),
        "{\"id\": \"f1\", \"error\": \"HTTP 400: prompt too long\", \"attempts\": 1}\n"
        "{\"id\": \"f2\", \"error\": \"HTTP 400: prompt too long\", \"attempts\": 1}\n"
        "{\"id\": \"f3\", \"error\": \"timeout\", \"attempts\": 6}\n");
  }
  TempDir dir_;
};

TEST_F(DataInspectorTest, CountsAndFlagsPlantedProblems) {
  DataOptions o;
  o.samples = dir_.Join("samples.jsonl");
  Report report;
  std::ostringstream out;
  ASSERT_TRUE(InspectData(o, report, out).ok());
  const json d = report.ToJson()["sections"]["data"];
  EXPECT_EQ(d["samples"], 10);
  EXPECT_EQ(d["malformed_lines"], 2);
  EXPECT_EQ(d["empty_answers"], 2);
  EXPECT_EQ(d["reasoning_only_answers"], 1);
  EXPECT_EQ(d["failed_samples"], 3);
  EXPECT_EQ(d["failed_file"], dir_.Join("samples.failed.jsonl"));
  EXPECT_EQ(d["failed_errors"][0]["error"], "HTTP 400: prompt too long");
  EXPECT_EQ(d["failed_errors"][0]["count"], 2);
  EXPECT_EQ(d["samples_with_reasoning"], 3);
  EXPECT_DOUBLE_EQ(d["reasoning_capture_rate"].get<double>(), 0.3);
  EXPECT_EQ(d["duplicates"]["ids"], 1);
  EXPECT_EQ(d["duplicates"]["prompts"], 1);
  EXPECT_EQ(d["duplicates"]["answers"], 1);
  EXPECT_EQ(d["samples_with_template_leak"], 2);
  // Answer lengths in words: the longest is s1's six words.
  EXPECT_EQ(d["words"]["answer"]["max"], 6);

  const Finding* leak = Find(report, "template_leak");
  ASSERT_NE(leak, nullptr);
  EXPECT_EQ(leak->severity, Severity::kWarn);
  EXPECT_NE(leak->text.find("'<|im_end|>'"), std::string::npos) << leak->text;
  EXPECT_NE(leak->text.find("samples.jsonl:4 (id s3)"), std::string::npos) << leak->text;
  int leaks = 0;
  for (const Finding& f : report.findings()) leaks += f.check == "template_leak";
  EXPECT_EQ(leaks, 2);  // <|im_end|> and </think>

  const Finding* bad = Find(report, "malformed_line");
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->severity, Severity::kError);
  EXPECT_NE(bad->text.find("samples.jsonl:8: not valid JSON"), std::string::npos) << bad->text;
  bool second = false;
  for (const Finding& f : report.findings()) {
    second |= f.check == "malformed_line" &&
              f.text.find("samples.jsonl:9: missing 'conversations'") != std::string::npos;
  }
  EXPECT_TRUE(second);

  const Finding* empty = Find(report, "empty_answer");
  ASSERT_NE(empty, nullptr);
  EXPECT_NE(empty->text.find("2 of 10"), std::string::npos) << empty->text;
  EXPECT_NE(empty->text.find("inside the reasoning"), std::string::npos) << empty->text;
  ASSERT_NE(Find(report, "duplicate_id"), nullptr);
  // One duplicate in ten samples is above the default 1 %: a warning.
  ASSERT_NE(Find(report, "duplicate_prompt"), nullptr);
  EXPECT_EQ(Find(report, "duplicate_prompt")->severity, Severity::kWarn);
  ASSERT_NE(Find(report, "failed_samples"), nullptr);
  EXPECT_NE(Find(report, "failed_samples")->text.find("prompt too long"), std::string::npos);

  std::string text = out.str();
  EXPECT_NE(text.find("samples             10"), std::string::npos) << text;
  EXPECT_NE(text.find("<|im_end|>"), std::string::npos) << text;
}

TEST_F(DataInspectorTest, ConfigurableMarkersAndDuplicateThreshold) {
  DataOptions o;
  o.samples = dir_.Join("samples.jsonl");
  o.template_markers = {"Brenn"};
  o.max_duplicate_fraction = 0.5;
  Report report;
  std::ostringstream out;
  ASSERT_TRUE(InspectData(o, report, out).ok());
  int leaks = 0;
  for (const Finding& f : report.findings()) {
    if (f.check == "template_leak") {
      ++leaks;
      EXPECT_NE(f.text.find("'Brenn'"), std::string::npos);
    }
  }
  EXPECT_EQ(leaks, 1);
  ASSERT_NE(Find(report, "duplicate_prompt"), nullptr);
  EXPECT_EQ(Find(report, "duplicate_prompt")->severity, Severity::kInfo);
}

TEST_F(DataInspectorTest, CleanFileHasNoWarnings) {
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += Sample(StrCat("c", i), StrCat("Question number ", i, "?"), StrCat("Answer ", i, "."),
                   i % 2 ? "some reasoning" : "");
  }
  testing::WriteTextFile(dir_.Join("clean.jsonl"), text);
  DataOptions o;
  o.samples = dir_.Join("clean.jsonl");
  Report report;
  std::ostringstream out;
  ASSERT_TRUE(InspectData(o, report, out).ok());
  EXPECT_FALSE(report.Fails(Severity::kWarn)) << report.ToJson().dump(2);
  EXPECT_DOUBLE_EQ(report.ToJson()["sections"]["data"]["reasoning_capture_rate"].get<double>(),
                   0.5);
}

TEST_F(DataInspectorTest, MissingFileIsAnErrorNamingIt) {
  DataOptions o;
  o.samples = dir_.Join("nope.jsonl");
  Report report;
  std::ostringstream out;
  Status s = InspectData(o, report, out);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(ToStd(s.message()).find("nope.jsonl"), std::string::npos);
}

TEST_F(DataInspectorTest, BinaryWritesReportEventsAndHonoursFailOn) {
  std::string events = dir_.Join("events.jsonl");
  auto r = testing::RunCommand({testing::BinPath("lh-inspect"), "data", "--samples",
                                dir_.Join("samples.jsonl"), "--report", dir_.Join("r.json")},
                               {{"LONGHAUL_EVENTS", events}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[warn] data/template_leak"), std::string::npos) << r.out;
  json report = json::parse(testing::ReadTextFile(dir_.Join("r.json")));
  EXPECT_EQ(report["sections"]["data"]["samples"], 10);
  EXPECT_GE(report["summary"]["warnings"].get<int>(), 1);
  bool metric = false, warn_message = false, artifact = false;
  for (const StageEvent& e : testing::ReadEvents(events)) {
    metric |= e.type == EventType::kMetric && e.name == "empty_answers" && e.value == 2;
    warn_message |= e.type == EventType::kMessage && e.level == "warn" &&
                    e.text.find("template_leak") != std::string::npos;
    artifact |= e.type == EventType::kArtifact && e.name == "inspect_report";
  }
  EXPECT_TRUE(metric);
  EXPECT_TRUE(warn_message);
  EXPECT_TRUE(artifact);

  auto failing =
      testing::RunCommand({testing::BinPath("lh-inspect"), "data", "--samples",
                           dir_.Join("samples.jsonl"), "--report", "-", "--fail-on", "error"});
  EXPECT_EQ(failing.exit_code, 1);  // the malformed lines are errors
  auto usage = testing::RunCommand(
      {testing::BinPath("lh-inspect"), "data", "--samples", dir_.Join("nope.jsonl")});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.err.find("nope.jsonl"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace longhaul::inspect
