// A stage that writes junk to its events file: bytes that are not UTF-8, numbers out of range
// for their field. Each such line is stored and counted as malformed, the valid lines around
// them are applied, the stage succeeds, and the node goes on reporting for the next stage (a
// line the coordinator cannot parse would otherwise be sent again forever).
#include <gtest/gtest.h>

#include "core/strings.h"
#include "core/utf8.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/fault_util.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {
namespace {

class HostileEventsTest : public ClusterTest {};

TEST_F(HostileEventsTest, JunkLinesAreMalformedAndTheNodeKeepsReporting) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  Result<std::vector<v1::AgentInfo>> before = cluster().ListAgents();
  ASSERT_TRUE(before.ok() && before->size() == 1) << before.status().message();
  int64_t connected_at = (*before)[0].connected_at_ms();

  const std::string junk = StrCat(
      std::string("\x00\xFF\xFE\x01 a binary blob \x80\xC3", 21), "\n",  // 1: not UTF-8
      "{\"message\": {\"text\": \"cut short \xE2\x82\"}}\n",              // 2: truncated char
      "{\"progress\": {\"done\": 1e300, \"total\": 10}}\n",                // 3: done out of range
      "{\"metric\": {\"name\": \"huge\", \"value\": 1, \"step\": 1e19}}\n",  // 4: step too big
      "{\"metric\": {\"name\": \"loss\", \"value\": 0.5, \"step\": 3}}\n",   // 5..7: valid
      "{\"output\": {\"name\": \"word\", \"value\": \"after the junk\"}}\n",
      "{\"progress\": {\"done\": 10, \"total\": 10, \"unit\": \"items\"}}\n");
  std::string junk_file = cluster().WriteFile("junk.jsonl", junk);
  std::string workflow = StrCat(
      "name: hostile\nstages:\n",
      StageYaml("junk", YamlList({"/bin/sh", "-c", "cat \"$0\" >> \"$LONGHAUL_EVENTS\"",
                                  junk_file})),
      StageYaml("next",
                YamlList({"lh-testjob", "--progress", "5", "--output",
                          "got=${junk.outputs.word}"}),
                {"junk"}));
  Result<int64_t> id = cluster().Submit(workflow);
  ASSERT_TRUE(id.ok()) << id.status().message() << "\n" << workflow;
  Result<v1::Run> run = cluster().WaitForRunEnd(*id, 60'000);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);

  const v1::Stage* s = FindStage(*run, "junk");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->malformed_events(), 4);
  EXPECT_EQ(s->last_malformed(), "line 4: metric.step: 1e+19 is out of range (0 to 2^53)");
  ASSERT_EQ(s->attempts_size(), 1);
  EXPECT_EQ(s->attempts(0).malformed_events(), 4);
  // The valid lines after the junk were applied.
  EXPECT_EQ(s->outputs().at("word"), "after the junk");
  ASSERT_EQ(s->metrics_size(), 1) << "only 'loss'; 'huge' had a step out of range";
  EXPECT_EQ(s->metrics(0).name(), "loss");
  EXPECT_EQ(s->metrics(0).value(), 0.5);
  EXPECT_EQ(s->metrics(0).step(), 3);
  EXPECT_EQ(s->progress().done(), 10);
  EXPECT_EQ(s->progress().unit(), "items");

  // Every line is stored, once, under its line number; the bytes that were not UTF-8 as U+FFFD.
  Result<std::vector<v1::EventRecord>> events = StoredEvents(cluster(), *id, "junk", 1);
  ASSERT_TRUE(events.ok()) << events.status().message();
  ASSERT_EQ(events->size(), 7u);
  for (size_t i = 0; i < events->size(); ++i) {
    EXPECT_EQ((*events)[i].seq(), static_cast<int64_t>(i + 1));
    EXPECT_TRUE(IsValidUtf8((*events)[i].line())) << i;
  }
  EXPECT_EQ((*events)[0].line(),
            StrCat(std::string("\x00\xEF\xBF\xBD\xEF\xBF\xBD\x01 a binary blob ", 23),
                   "\xEF\xBF\xBD\xEF\xBF\xBD"));
  EXPECT_EQ((*events)[1].line(), "{\"message\": {\"text\": \"cut short \xEF\xBF\xBD\xEF\xBF\xBD\"}}");
  EXPECT_EQ((*events)[4].line(), "{\"metric\": {\"name\": \"loss\", \"value\": 0.5, \"step\": 3}}");

  // The next stage on the same node reported normally, over the same connection.
  const v1::Stage* next = FindStage(*run, "next");
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->malformed_events(), 0) << next->last_malformed();
  EXPECT_EQ(next->outputs().at("got"), "after the junk");
  EXPECT_EQ(next->progress().done(), 5);
  Result<std::vector<v1::EventRecord>> next_events = StoredEvents(cluster(), *id, "next", 1);
  ASSERT_TRUE(next_events.ok()) << next_events.status().message();
  EXPECT_FALSE(next_events->empty());
  Result<std::vector<v1::AgentInfo>> after = cluster().ListAgents();
  ASSERT_TRUE(after.ok() && after->size() == 1) << after.status().message();
  EXPECT_EQ((*after)[0].state(), v1::AGENT_CONNECTED);
  EXPECT_EQ((*after)[0].connected_at_ms(), connected_at) << "the agent had to reconnect";
}

}  // namespace
}  // namespace longhaul::testing
