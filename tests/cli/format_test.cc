#include "cli/format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "cli/table.h"

namespace longhaul::cli {
namespace {

TEST(FormatTest, Durations) {
  EXPECT_EQ(FormatDuration(350), "350ms");
  EXPECT_EQ(FormatDuration(307'000), "5m07s");
  EXPECT_EQ(FormatDuration(-1), "-");
  EXPECT_EQ(FormatEta(218.4), "3m38s");
  EXPECT_EQ(FormatEta(-1), "-");
}

TEST(FormatTest, Bytes) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1023), "1023 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(81'234'567), "77.5 MiB");
  EXPECT_EQ(FormatBytes(12LL << 30), "12.0 GiB");
  EXPECT_EQ(FormatBytes(-1), "-");
}

TEST(FormatTest, NumbersRatesAndProgress) {
  EXPECT_EQ(FormatNumber(1234), "1234");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
  EXPECT_EQ(FormatNumber(12.256), "12.26");
  EXPECT_EQ(FormatRate(41.23, "samples"), "41.2 samples/s");
  EXPECT_EQ(FormatRate(512.4, ""), "512/s");
  EXPECT_EQ(FormatRate(0.25, "steps"), "0.25 steps/s");
  EXPECT_EQ(FormatRate(0, "x"), "");
  EXPECT_EQ(FormatProgress(1234, 10000, "samples"), "1234/10000 samples (12%)");
  EXPECT_EQ(FormatProgress(10000, 10000, ""), "10000/10000 (100%)");
  EXPECT_EQ(FormatProgress(77, 0, "lines"), "77 lines");
  EXPECT_EQ(FormatProgress(0, 0, "lines"), "");
}

TEST(FormatTest, ProgressBar) {
  EXPECT_EQ(FormatProgressBar(0, 100, 10), "[          ]");
  EXPECT_EQ(FormatProgressBar(1, 100, 10), "[>         ]");
  EXPECT_EQ(FormatProgressBar(50, 100, 10), "[=====>    ]");
  EXPECT_EQ(FormatProgressBar(99, 100, 10), "[=========>]");
  EXPECT_EQ(FormatProgressBar(100, 100, 10), "[==========]");
  EXPECT_EQ(FormatProgressBar(250, 100, 4), "[====]");  // clamped
  EXPECT_EQ(FormatProgressBar(5, 0, 4), "[    ]");      // unknown total
}

TEST(FormatTest, TimesUseTheLocalZone) {
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(FormatLocalTime(1'700'000'000'000), "2023-11-14 22:13:20");
  EXPECT_EQ(FormatClockTime(1'700'000'000'000), "22:13:20");
  EXPECT_EQ(FormatLocalTime(0), "-");
  EXPECT_EQ(FormatAgo(1'000, 4'500), "3s ago");
  EXPECT_EQ(FormatAgo(1'000, 1'500), "just now");
  EXPECT_EQ(FormatAgo(0, 1'500), "never");
}

TEST(FormatTest, TruncateAndShellJoin) {
  EXPECT_EQ(Truncate("abcdef", 4), "abc\u2026");
  EXPECT_EQ(Truncate("abc", 4), "abc");
  EXPECT_EQ(Truncate("h\u00e9llo w", 3), "h\u00e9\u2026");
  EXPECT_EQ(DisplayWidth("h\u00e9llo"), 5);
  EXPECT_EQ(ShellJoin({"lh-serve", "--model", "/m/x", "a b", "it's", "${params.x}"}),
            "lh-serve --model /m/x 'a b' 'it'\\''s' '${params.x}'");
}

TEST(TableTest, AlignsColumnsWithoutTrailingSpaces) {
  Table t({"ID", "WORKFLOW", "STATUS"});
  t.AlignRight(0);
  t.AddRow({"7", "hello", "succeeded"});
  t.AddRow({"12", "eagle3-campaign", "running"});
  t.AddRow({"3"});
  std::vector<std::string> lines = t.Lines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "ID  WORKFLOW         STATUS");
  EXPECT_EQ(lines[1], " 7  hello            succeeded");
  EXPECT_EQ(lines[2], "12  eagle3-campaign  running");
  EXPECT_EQ(lines[3], " 3");
  EXPECT_EQ(t.Lines(10)[2], "12  eagle\u2026");
}

TEST(TableTest, ALimitedColumnCutsItsLongCellsAndPadsOthersToTheLimitAtMost) {
  Table t({"STAGE", "NEEDS", "RUN"});
  t.LimitWidth(1, 8);
  t.AddRow({"a", "x,y", "prog"});
  t.AddRow({"b", "one,two,three,four", "prog --flag"});
  std::vector<std::string> lines = t.Lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "STAGE  NEEDS     RUN");
  EXPECT_EQ(lines[1], "a      x,y       prog");
  EXPECT_EQ(lines[2], "b      one,two\u2026  prog --flag");
}

TEST(TableTest, WidthCountsCharactersNotBytes) {
  Table t({"A", "B"});
  t.AddRow({"\u00e9\u00e9", "x"});
  t.AddRow({"abc", "y"});
  EXPECT_EQ(t.Lines()[1], "\u00e9\u00e9   x");
}

}  // namespace
TEST(FormatTest, EnergyInWattHoursUnderAKilowattHour) {
  EXPECT_EQ(FormatEnergy(0), "0 Wh");
  EXPECT_EQ(FormatEnergy(0.00046549), "0.47 Wh");  // gpu-smoke's stage on the H200
  EXPECT_EQ(FormatEnergy(0.012), "12 Wh");
  EXPECT_EQ(FormatEnergy(3.41), "3.41 kWh");
  EXPECT_EQ(FormatEnergy(123.45), "123.5 kWh");
}

}  // namespace longhaul::cli
