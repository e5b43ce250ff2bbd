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

  auto f = ParseEventLine(R"({"gpu_fault": {"gpu": 1, "uuid": "GPU-5c1f", "reason": "ECC"}})");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->type, EventType::kGpuFault);
  EXPECT_EQ(f->gpu, 1);
  EXPECT_EQ(f->uuid, "GPU-5c1f");
  EXPECT_EQ(f->text, "ECC");
}

TEST(EventTest, AGpuFaultNamesItsGpuAndSaysWhy) {
  auto by_uuid = ParseEventLine(R"({"gpu_fault": {"uuid": "GPU-5c1f", "reason": "r"}})");
  ASSERT_TRUE(by_uuid.ok()) << by_uuid.status();
  EXPECT_FALSE(by_uuid->gpu.has_value());
  auto neither = ParseEventLine(R"({"gpu_fault": {"reason": "r"}})");
  ASSERT_FALSE(neither.ok());
  EXPECT_EQ(neither.status().message(), "gpu_fault: give the GPU as gpu or uuid");
  auto no_reason = ParseEventLine(R"({"gpu_fault": {"gpu": 0}})");
  ASSERT_FALSE(no_reason.ok());
  EXPECT_EQ(no_reason.status().message(), "gpu_fault.reason: missing");
  EXPECT_FALSE(ParseEventLine(R"({"gpu_fault": {"gpu": -1, "reason": "r"}})").ok());
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

// Numbers out of range for their field are malformed lines, never a wrapped or undefined cast.
TEST(EventTest, NumbersOutOfRangeForTheirFieldAreMalformed) {
  auto huge_done = ParseEventLine(R"({"progress": {"done": 1e300, "total": 10}})");
  ASSERT_FALSE(huge_done.ok());
  EXPECT_EQ(huge_done.status().message(), "progress.done: 1e+300 is out of range (0 to 2^53)");
  EXPECT_FALSE(ParseEventLine(R"({"progress": {"done": 1, "total": -3}})").ok());

  auto huge_step = ParseEventLine(R"({"metric": {"name": "x", "value": 1, "step": 1e19}})");
  ASSERT_FALSE(huge_step.ok());
  EXPECT_EQ(huge_step.status().message(), "metric.step: 1e+19 is out of range (0 to 2^53)");
  auto big_int = ParseEventLine(R"({"checkpoint": {"path": "c", "step": 18446744073709551615}})");
  EXPECT_FALSE(big_int.ok());
  auto fraction = ParseEventLine(R"({"checkpoint": {"path": "c", "step": 2.5}})");
  ASSERT_FALSE(fraction.ok());
  EXPECT_EQ(fraction.status().message(), "checkpoint.step: 2.5 is not a whole number");
  EXPECT_FALSE(ParseEventLine(R"({"artifact": {"name": "a", "path": "p", "bytes": -1}})").ok());

  // Beyond a double's range: the JSON parser refuses it.
  EXPECT_FALSE(ParseEventLine(R"({"metric": {"name": "x", "value": 1e999}})").ok());

  // The edges of the ranges are fine.
  auto edge = ParseEventLine(R"({"checkpoint": {"path": "c", "step": 9007199254740992}})");
  ASSERT_TRUE(edge.ok()) << edge.status();
  EXPECT_EQ(*edge->step, int64_t{1} << 53);
  auto metric = ParseEventLine(R"({"metric": {"name": "x", "value": -1e300, "step": 0}})");
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->value, -1e300);
  auto fractional_progress = ParseEventLine(R"({"progress": {"done": 2.5, "total": 10}})");
  ASSERT_TRUE(fractional_progress.ok()) << fractional_progress.status();
}

}  // namespace
}  // namespace longhaul
