#include "core/log_search.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace longhaul {
namespace {

using Found = std::vector<std::pair<int64_t, std::string>>;

LogLineMatcher MatcherFor(LogPattern p) {
  Result<LogLineMatcher> m = LogLineMatcher::Make(p, "q");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

// Feeds `chunks` in order from offset `start` and returns every match.
Found SearchChunks(LogPattern p, const std::vector<std::string>& chunks, int64_t start = 0) {
  Found found;
  auto keep = [&](int64_t at, std::string_view line) { found.emplace_back(at, line); };
  LogLineSearch search(MatcherFor(std::move(p)), start);
  for (const std::string& c : chunks) search.Feed(c, keep);
  search.Finish(keep);
  return found;
}

TEST(VisibleLogLineTest, DropsEscapesAndKeepsTheLastRedraw) {
  EXPECT_EQ(VisibleLogLine("\x1b[32mINFO\x1b[0m ready"), "INFO ready");
  EXPECT_EQ(VisibleLogLine("\x1b[1;38;5;196mred\x1b[m"), "red");
  EXPECT_EQ(VisibleLogLine("\x1b]0;title\x07text"), "text");
  EXPECT_EQ(VisibleLogLine("\x1b]2;title\x1b\\text"), "text");
  EXPECT_EQ(VisibleLogLine("\x1b[2K\x1b[1Gx"), "x");
  EXPECT_EQ(VisibleLogLine(" 10%\r 50%\r100% done\r"), "100% done");
  EXPECT_EQ(VisibleLogLine("cut \x1b[3"), "cut ");
  EXPECT_EQ(VisibleLogLine("plain"), "plain");
}

TEST(LogLineSearchTest, ReportsEachMatchingLineWithItsOffset) {
  Found f = SearchChunks({.text = "loss"}, {"step 1 loss 2\nstep 2 acc 3\nstep 3 loss 1\n"}, 100);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], std::make_pair(int64_t{100}, std::string("step 1 loss 2\n")));
  EXPECT_EQ(f[1], std::make_pair(int64_t{100 + 14 + 13}, std::string("step 3 loss 1\n")));
}

TEST(LogLineSearchTest, ALineSplitAcrossChunksIsMatchedWholeAndALastLineCounts) {
  Found f = SearchChunks({.text = "needle"}, {"aa\nhay ne", "edle here\nb", "b\nlast needle"});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0], std::make_pair(int64_t{3}, std::string("hay needle here\n")));
  EXPECT_EQ(f[1], std::make_pair(int64_t{22}, std::string("last needle")));
}

TEST(LogLineSearchTest, MatchesTheVisibleTextAndHandsBackTheRawLine) {
  Found f = SearchChunks({.text = "INFO ready"}, {"\x1b[32mINFO\x1b[0m ready\n"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].second, "\x1b[32mINFO\x1b[0m ready\n");
  // A colour code's own text is not found, nor an earlier redraw.
  EXPECT_TRUE(SearchChunks({.text = "32m"}, {"\x1b[32mINFO\x1b[0m\n"}).empty());
  EXPECT_TRUE(SearchChunks({.text = "10%"}, {" 10%\r100%\n"}).empty());
}

TEST(LogLineSearchTest, CaseAndRegularExpressions) {
  std::vector<std::string> log = {"Error: disk\nerror: net\nok\n"};
  EXPECT_EQ(SearchChunks({.text = "error"}, log).size(), 1u);
  EXPECT_EQ(SearchChunks({.text = "ERROR", .ignore_case = true}, log).size(), 2u);
  EXPECT_EQ(SearchChunks({.text = "^[Ee]rror: (disk|net)$", .regex = true}, log).size(), 2u);
  EXPECT_EQ(SearchChunks({.text = "^ERR", .regex = true, .ignore_case = true}, log).size(), 2u);
}

TEST(LogLineSearchTest, BadPatternsAreRefusedByName) {
  Result<LogLineMatcher> bad = LogLineMatcher::Make({.text = "loss (", .regex = true}, "--grep");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--grep 'loss (': not a regular expression"),
            std::string::npos)
      << bad.status();
  EXPECT_FALSE(LogLineMatcher::Make({.text = ""}, "q").ok());
}

TEST(LogLineSearchTest, AnOverlongLineIsMatchedInPiecesAndOffsetsStayRight) {
  std::string huge(LogLineSearch::kMaxLogSearchLine + 10, 'x');
  huge += "needle\nnext needle\n";
  Found f = SearchChunks({.text = "needle"}, {huge.substr(0, 5000), huge.substr(5000)});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].first, static_cast<int64_t>(LogLineSearch::kMaxLogSearchLine));
  EXPECT_EQ(f[1].first, static_cast<int64_t>(LogLineSearch::kMaxLogSearchLine + 17));
  EXPECT_EQ(f[1].second, "next needle\n");
}

TEST(LogLineSearchTest, PendingLineIsWhereAnUnendedLineStarts) {
  LogLineSearch search(MatcherFor({.text = "x"}), 10);
  search.Feed("ab\ncd", [](int64_t, std::string_view) {});
  EXPECT_EQ(search.pending_line(), 13);
}

}  // namespace
}  // namespace longhaul
