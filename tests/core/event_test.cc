#include "core/event.h"

#include <gtest/gtest.h>

namespace longhaul {
namespace {

TEST(EventTest, ParsesEveryEventOfTheProtocol) {
  auto p = ParseEventLine(R"({"progress": {"done": 1234, "total": 10000, "unit": "samples"}})");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->type, EventType::kProgress);
  EXPECT_EQ(p->done, 1234);
  EXPECT_EQ(*p->total, 10000);
  EXPECT_EQ(p->unit, "samples");

  auto m = ParseEventLine(R"({"metric": {"name": "accept_rate", "value": 0.153, "step": 0}})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name, "accept_rate");
  EXPECT_DOUBLE_EQ(m->value, 0.153);
  EXPECT_EQ(*m->step, 0);

  auto o = ParseEventLine(R"({"output": {"name": "endpoint", "value": "http://10.0.0.5:30000"}})");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->text, "http://10.0.0.5:30000");

  auto a = ParseEventLine(
      R"({"artifact": {"name": "samples", "path": "samples.jsonl", "bytes": 81234567}})");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->path, "samples.jsonl");
  EXPECT_EQ(*a->bytes, 81234567);

  auto c = ParseEventLine(R"({"checkpoint": {"path": "ckpt/epoch-3", "step": 3}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->type, EventType::kCheckpoint);
  EXPECT_EQ(*c->step, 3);

  auto r = ParseEventLine(R"({"ready": {}})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->type, EventType::kReady);

  auto msg = ParseEventLine(R"({"message": {"level": "warn", "text": "429, backing off"}})");
  ASSERT_TRUE(msg.ok());
  EXPECT_EQ(msg->level, "warn");
  EXPECT_EQ(msg->text, "429, backing off");
}

TEST(EventTest, ProgressWithoutTotalHasNone) {
  auto p = ParseEventLine(R"({"progress": {"done": 5}})");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->total.has_value());
}

TEST(EventTest, MalformedLinesSayWhatIsWrong) {
  auto bad_json = ParseEventLine("{progress");
  ASSERT_FALSE(bad_json.ok());
  EXPECT_EQ(bad_json.status().message(), "not valid JSON");

  auto unknown = ParseEventLine(R"({"progres": {"done": 1}})");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown event 'progres'"), std::string::npos);

  auto wrong_type = ParseEventLine(R"({"progress": {"done": "many"}})");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_EQ(wrong_type.status().message(), "progress.done: expected a number");

  EXPECT_FALSE(ParseEventLine(R"({"metric": {"value": 1}})").ok());
  EXPECT_FALSE(ParseEventLine(R"({"ready": {}, "progress": {"done": 1}})").ok());
  EXPECT_FALSE(ParseEventLine(R"([1,2])").ok());
  EXPECT_FALSE(ParseEventLine(R"({"message": {"level": "loud", "text": "x"}})").ok());
}

}  // namespace
}  // namespace longhaul
