// LineFileSink on a full disk (a small tmpfs): the log file holds whole lines only, and says
// how many it dropped once lines fit again.
#include "core/line_file_sink.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "tests/testing/test_util.h"
#include "tests/testing/tmpfs.h"

namespace longhaul {
namespace {

TEST(LineFileSinkTest, AFullDiskDropsWholeLinesAndTheFileSaysHowMany) {
  testing::TmpfsMount fs(1 << 20);
  if (!fs.ok()) GTEST_SKIP() << fs.error();
  std::string path = fs.Join("agent.log");
  auto sink = std::make_shared<LineFileSink>(path);
  spdlog::logger logger("t", sink);
  logger.set_pattern("%v");
  std::string payload(700, 'p');
  logger.info("first {}", payload);
  ASSERT_EQ(fs.Fill("fill"), ENOSPC);
  // The log's last page has room for a few of these lines, then one fits only in part.
  for (int i = 0; i < 20; ++i) logger.info("line {} {}", i, payload);
  EXPECT_GT(sink->dropped(), 0);
  std::string full = testing::ReadTextFile(path);
  ASSERT_FALSE(full.empty());
  EXPECT_EQ(full.back(), '\n');
  for (const auto& line : absl::StrSplit(full, '\n', absl::SkipEmpty())) {
    EXPECT_TRUE(absl::EndsWith(line, payload)) << "a cut line: " << line.substr(0, 40);
  }
  int64_t dropped = sink->dropped();

  ASSERT_EQ(::unlink(fs.Join("fill").c_str()), 0);  // space comes back
  logger.info("after");
  EXPECT_EQ(sink->dropped(), 0);
  std::string after = testing::ReadTextFile(path);
  EXPECT_TRUE(absl::EndsWith(after, "-- " + std::to_string(dropped) + " log line(s) dropped: could not write " +
                                       path + " (disk full?)\nafter\n"))
      << after.substr(after.size() > 200 ? after.size() - 200 : 0);
}

}  // namespace
}  // namespace longhaul
