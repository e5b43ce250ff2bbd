#include "agent/lib/event_tailer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

class EventTailerTest : public ::testing::Test {
 protected:
  void Append(const std::string& data) {
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
    ::close(fd);
  }
  std::vector<std::pair<int64_t, std::string>> ReadAll(EventTailer& t, bool final = false) {
    std::vector<std::pair<int64_t, std::string>> out;
    for (;;) {
      auto b = t.Read(1000, 1 << 20, final);
      EXPECT_TRUE(b.ok()) << b.status();
      if (!b.ok()) break;
      for (auto& l : b->lines) out.emplace_back(l.seq, l.text);
      if (b->at_end) break;
    }
    return out;
  }
  testing::TempDir dir_;
  std::string path_ = dir_.Join("events.jsonl");
};

using Lines = std::vector<std::pair<int64_t, std::string>>;

TEST_F(EventTailerTest, MissingFileReadsAsEmpty) {
  EventTailer t(path_);
  auto b = t.Read(10, 1000, false);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->lines.empty());
  EXPECT_TRUE(b->at_end);
}

TEST_F(EventTailerTest, SeqIsTheLineNumberAndBlankLinesAreCountedButSkipped) {
  Append("{\"a\":1}\n\n   \n{\"b\":2}\r\n{\"c\":3}\n");
  EventTailer t(path_);
  EXPECT_EQ(ReadAll(t), (Lines{{1, "{\"a\":1}"}, {4, "{\"b\":2}"}, {5, "{\"c\":3}"}}));
  EXPECT_EQ(t.seq(), 5);
}

TEST_F(EventTailerTest, PartialLineWaitsForItsNewlineUnlessTheWriterEnded) {
  Append("{\"a\":1}\n{\"b\":");
  EventTailer t(path_);
  EXPECT_EQ(ReadAll(t), (Lines{{1, "{\"a\":1}"}}));
  Append("2}");
  EXPECT_TRUE(ReadAll(t).empty());
  Append("\n{\"c\"");
  EXPECT_EQ(ReadAll(t), (Lines{{2, "{\"b\":2}"}}));
  // The stage has exited: a last line without a newline counts.
  EXPECT_EQ(ReadAll(t, /*final=*/true), (Lines{{3, "{\"c\""}}));
  EXPECT_TRUE(ReadAll(t, true).empty());
}

TEST_F(EventTailerTest, BatchesRespectTheLineLimitAndContinue) {
  std::string data;
  for (int i = 1; i <= 25; ++i) data += "{\"n\":" + std::to_string(i) + "}\n";
  Append(data);
  EventTailer t(path_);
  auto b = t.Read(10, 1 << 20, false);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->lines.size(), 10u);
  EXPECT_FALSE(b->at_end);
  EXPECT_EQ(b->lines.back().seq, 10);
  auto rest = ReadAll(t);
  ASSERT_EQ(rest.size(), 15u);
  EXPECT_EQ(rest.front().first, 11);
  EXPECT_EQ(rest.back().first, 25);
}

TEST_F(EventTailerTest, RestartsFromAnOffsetWithItsSeq) {
  Append("{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}\n");
  EventTailer first(path_);
  auto b = first.Read(2, 1 << 20, false);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->lines.size(), 2u);
  int64_t offset = b->lines.back().end_offset;
  EventTailer second(path_, offset, b->lines.back().seq);
  EXPECT_EQ(ReadAll(second), (Lines{{4, "{\"c\":3}"}}));
  second.Rewind(0, 0);
  EXPECT_EQ(ReadAll(second).size(), 3u);
}

TEST_F(EventTailerTest, LinesLongerThanTheChunkArriveWhole) {
  std::string big(200'000, 'x');
  Append("{\"a\":\"" + big + "\"}\n{\"b\":2}\n");
  EventTailer t(path_);
  auto lines = ReadAll(t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].second.size(), big.size() + 8);
  EXPECT_EQ(lines[1], (std::pair<int64_t, std::string>{2, "{\"b\":2}"}));
}

TEST_F(EventTailerTest, OversizeLineBecomesAMessageThatSaysSoAndKeepsItsSeq) {
  std::string huge(EventTailer::kMaxLineBytes + 10, 'y');
  Append("{\"a\":1}\n");
  Append(huge);  // still being written
  EventTailer t(path_);
  EXPECT_EQ(ReadAll(t).size(), 1u);
  EXPECT_TRUE(ReadAll(t).empty());
  Append("\n{\"b\":2}\n");
  auto lines = ReadAll(t);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].first, 2);
  EXPECT_NE(lines[0].second.find("over the limit"), std::string::npos) << lines[0].second;
  EXPECT_EQ(lines[1], (std::pair<int64_t, std::string>{3, "{\"b\":2}"}));
}

}  // namespace
}  // namespace longhaul::agent
