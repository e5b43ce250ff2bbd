// LineSplitter: the line ends of the command backend ('\n' and '\r') and of lh-serve's engine
// logs ('\n' only), across feeds.
#include "stages/common/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace longhaul::stages {
namespace {

TEST(LineSplitterTest, SplitsOnNewlinesAndCarriageReturnsAcrossFeeds) {
  LineSplitter s;
  std::vector<std::string> lines;
  auto add = [&](std::string_view l) { lines.emplace_back(l); };
  s.Feed("epoch 1\r\n 10%|#  | 1/10\r 20%|##", add);
  s.Feed("| 2/10\rdone\n", add);
  s.Feed("tail without end", add);
  s.Finish(add);
  EXPECT_EQ(lines, (std::vector<std::string>{"epoch 1", " 10%|#  | 1/10", " 20%|##| 2/10", "done",
                                             "tail without end"}));
}

TEST(LineSplitterTest, NewlinesOnlyKeepsCarriageReturnsAndLongLines) {
  LineSplitter s(std::string::npos, /*split_at_cr=*/false);
  std::vector<std::string> lines;
  auto add = [&](std::string_view l) { lines.emplace_back(l); };
  std::string long_line(100'000, 'x');
  s.Feed("a\r\nb\rc\n\n", add);
  s.Feed(long_line, add);
  s.Feed("\nlast", add);
  s.Finish(add);
  s.Finish(add);  // nothing left: no second "last"
  EXPECT_EQ(lines, (std::vector<std::string>{"a\r", "b\rc", "", long_line, "last"}));
}

TEST(LineSplitterTest, CutsLinesPastTheLimit) {
  LineSplitter s(4);
  std::vector<std::string> lines;
  s.Feed("abcdefg\nhi\n", [&](std::string_view l) { lines.emplace_back(l); });
  EXPECT_EQ(lines, (std::vector<std::string>{"abcd", "hi"}));
}

}  // namespace
}  // namespace longhaul::stages
