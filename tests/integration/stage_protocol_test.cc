// The complete Python example of docs/stage-protocol.md, taken from the page as it is and run
// under longhaul with the page's workflow: stopped by its timeout (SIGTERM), checkpointed and
// resumed until done, each item written once, its metric, artifact and output recorded and the
// output passed to a dependent. If the page's example breaks, this test does.
#include <gtest/gtest.h>

#include <regex>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"

namespace longhaul::testing {
namespace {

constexpr int kItems = 80;  // the workflow's argument

// The first fenced block of `lang` after `after` in `text`; "" when there is none.
std::string FencedBlock(const std::string& text, const std::string& lang, size_t after = 0) {
  std::string open = StrCat("```", lang, "\n");
  size_t start = text.find(open, after);
  if (start == std::string::npos) return "";
  start += open.size();
  size_t end = text.find("\n```", start);
  if (end == std::string::npos) return "";
  return text.substr(start, end - start + 1);
}

class StageProtocolTest : public FaultTest {};

TEST_F(StageProtocolTest, PythonExampleFromTheDocsStopsResumesAndReports) {
  ASSERT_EQ(RunCommand({"/bin/sh", "-c", "command -v python3"}).exit_code, 0)
      << "python3 is not installed (deploy/install-deps.sh installs it): the page's example "
         "cannot run";
  std::string doc = ReadTextFile(SourceDir() + "/docs/stage-protocol.md");
  ASSERT_FALSE(doc.empty()) << "cannot read docs/stage-protocol.md under " << SourceDir();
  size_t example = doc.find("## A complete example in Python");
  ASSERT_NE(example, std::string::npos);
  std::string code = FencedBlock(doc, "python", example);
  std::string workflow = FencedBlock(doc, "yaml", example);
  ASSERT_NE(code.find("def main()"), std::string::npos) << code;
  ASSERT_NE(workflow.find("/path/to/squares.py"), std::string::npos) << workflow;

  ASSERT_NO_FATAL_FAILURE(StartCluster(FaultOptions()));
  std::string script = cluster().WriteFile("squares.py", code);
  workflow.replace(workflow.find("/path/to/squares.py"), 19, script);
  Result<int64_t> id = cluster().Submit(workflow);
  ASSERT_TRUE(id.ok()) << id.status().message() << "\n" << workflow;
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 90'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);

  const v1::Stage* s = FindStage(*run, "squares");
  ASSERT_GE(s->attempts_size(), 2) << "the timeout never stopped it: " << DescribeRun(*run);
  EXPECT_EQ(s->malformed_events(), 0) << s->last_malformed();
  const v1::Attempt& first = s->attempts(0);
  EXPECT_EQ(first.state(), v1::ATTEMPT_KILLED);
  EXPECT_TRUE(StartsWith(first.reason(), "timeout")) << first.reason();
  const v1::Attempt& last = s->attempts(s->attempts_size() - 1);
  EXPECT_EQ(last.state(), v1::ATTEMPT_EXITED);
  EXPECT_EQ(last.exit_code(), 0);

  // Each stopped attempt checkpointed on SIGTERM; each later one resumed where that left off.
  static const std::regex stopped("stopped by SIGTERM after item ([0-9]+)");
  static const std::regex resumed("resuming after item ([0-9]+)");
  int64_t stopped_at = -1;
  for (const v1::Attempt& a : s->attempts()) {
    Result<std::vector<v1::EventRecord>> events =
        StoredEvents(cluster(), *id, "squares", a.number());
    ASSERT_TRUE(events.ok()) << events.status().message();
    int64_t resumed_at = -1, stopped_now = -1;
    for (const v1::EventRecord& e : *events) {
      std::smatch m;
      if (std::regex_search(e.line(), m, resumed)) resumed_at = std::stoll(m[1].str());
      if (std::regex_search(e.line(), m, stopped)) stopped_now = std::stoll(m[1].str());
    }
    if (a.number() > 1 && stopped_at > 0) {
      EXPECT_EQ(resumed_at, stopped_at) << "attempt " << a.number();
      EXPECT_EQ(a.checkpoint(), a.output_dir() + "/checkpoint.json");
    }
    if (a.state() == v1::ATTEMPT_KILLED) {
      EXPECT_GT(stopped_now, 0) << "attempt " << a.number() << " did not stop gracefully";
    }
    stopped_at = stopped_now;
  }

  std::string expected;
  for (int i = 1; i <= kItems; ++i) expected += StrCat(i, " ", i * i, "\n");
  std::string data = ReadTextFile(last.output_dir() + "/squares.txt");
  EXPECT_EQ(data, expected);

  EXPECT_EQ(s->outputs().at("count"), std::to_string(kItems));
  double sum = 0;
  for (int i = 1; i <= kItems; ++i) sum += i * i;
  ASSERT_EQ(s->metrics_size(), 1);
  EXPECT_EQ(s->metrics(0).name(), "sum_of_squares");
  EXPECT_EQ(s->metrics(0).value(), sum);
  ASSERT_EQ(s->artifacts_size(), 1);
  EXPECT_EQ(s->artifacts(0).path(), last.output_dir() + "/squares.txt");
  EXPECT_EQ(s->artifacts(0).bytes(), static_cast<int64_t>(data.size()));
  EXPECT_EQ(s->progress().done(), kItems);
  EXPECT_EQ(s->progress().total(), kItems);
  EXPECT_EQ(s->progress().unit(), "items");

  const v1::Stage* report = FindStage(*run, "report");
  ASSERT_EQ(report->attempts_size(), 1);
  const auto& argv = report->attempts(0).argv();
  EXPECT_NE(std::find(argv.begin(), argv.end(), StrCat("squares made ", kItems, " lines")),
            argv.end());
}

}  // namespace
}  // namespace longhaul::testing
