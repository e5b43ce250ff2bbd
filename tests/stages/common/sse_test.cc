#include "stages/common/sse.h"

#include <gtest/gtest.h>

#include <vector>

namespace longhaul::stages {
namespace {

std::vector<std::string> Collect(const std::vector<std::string>& pieces) {
  std::vector<std::string> out;
  SseParser p([&](const SseEvent& e) { out.push_back(e.data); });
  for (const auto& s : pieces) EXPECT_TRUE(p.Feed(s).ok());
  p.Finish();
  return out;
}

TEST(SseParserTest, EventsSeparatedByBlankLines) {
  auto ev = Collect({"data: {\"a\":1}\n\ndata: [DONE]\n\n"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0], "{\"a\":1}");
  EXPECT_EQ(ev[1], "[DONE]");
}

TEST(SseParserTest, BytesSplitAnywhereGiveTheSameEvents) {
  std::string stream =
      ": ping\r\n\r\ndata: one\r\ndata: two\r\n\r\nevent: x\ndata:three\n\ndata: [DONE]\r\n\r\n";
  auto whole = Collect({stream});
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole[0], "one\ntwo");
  EXPECT_EQ(whole[1], "three");  // no space after the colon is fine
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    EXPECT_EQ(Collect({stream.substr(0, cut), stream.substr(cut)}), whole) << "cut at " << cut;
  }
  std::vector<std::string> bytes;
  for (char c : stream) bytes.emplace_back(1, c);
  EXPECT_EQ(Collect(bytes), whole);
}

TEST(SseParserTest, CommentsAndEventsWithoutDataAreSkipped) {
  auto ev = Collect({":keepalive\n\nevent: ping\n\nid: 3\n\ndata: x\n\n"});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0], "x");
}

TEST(SseParserTest, CrAloneEndsALine) {
  auto ev = Collect({"data: a\r\rdata: b\r", "\r"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1], "b");
}

TEST(SseParserTest, UnterminatedLastEventIsStillDelivered) {
  auto ev = Collect({"data: x\n\ndata: [DONE]"});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1], "[DONE]");
}

TEST(SseParserTest, OverlongLineFails) {
  SseParser p([](const SseEvent&) {}, /*max_line_bytes=*/16);
  EXPECT_TRUE(p.Feed("data: 0123").ok());
  Status s = p.Feed("456789abcdef");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(p.Feed("\n\n").ok());
}

}  // namespace
}  // namespace longhaul::stages
