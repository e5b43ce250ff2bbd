#include "core/duration.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace longhaul {
namespace {

TEST(DurationTest, ParsesUnitsAndCompounds) {
  EXPECT_EQ(*ParseDurationMs("250ms"), 250);
  EXPECT_EQ(*ParseDurationMs("30s"), 30'000);
  EXPECT_EQ(*ParseDurationMs("10m"), 600'000);
  EXPECT_EQ(*ParseDurationMs("24h"), 86'400'000);
  EXPECT_EQ(*ParseDurationMs("1h30m"), 5'400'000);
  EXPECT_EQ(*ParseDurationMs("2d"), 172'800'000);
  EXPECT_EQ(*ParseDurationMs("1.5s"), 1'500);
}

TEST(DurationTest, BareNumberIsSeconds) { EXPECT_EQ(*ParseDurationMs("45"), 45'000); }

TEST(DurationTest, RejectsUnknownUnitNamingIt) {
  auto r = ParseDurationMs("10y");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'y'"), std::string::npos) << r.status();
  EXPECT_FALSE(ParseDurationMs("").ok());
  EXPECT_FALSE(ParseDurationMs("m").ok());
}

// Text from a workflow file or a flag: never an exception, never an undefined cast.
TEST(DurationTest, RejectsWhatIsNotANumberOrOutOfRange) {
  const std::vector<std::string> bad_ones = {".",   ".s", "1..2s", "1.2.3",
                                             "99999999999999999999999999d", std::string(400, '9')};
  for (const std::string& bad : bad_ones) {
    Result<int64_t> r = ParseDurationMs(bad);
    EXPECT_FALSE(r.ok()) << bad << " -> " << (r.ok() ? *r : 0);
  }
  EXPECT_EQ(ParseDurationMs("99999999999999999999999999d").status().message(),
            "bad duration '99999999999999999999999999d': out of range");
}

TEST(DurationTest, FormatsShort) {
  EXPECT_EQ(FormatWholeDurationMs(30LL * 86'400'000), "30d");
  EXPECT_EQ(FormatWholeDurationMs(36 * 3'600'000), "36h");
  EXPECT_EQ(FormatWholeDurationMs(90 * 60'000), "90m");
  EXPECT_EQ(FormatWholeDurationMs(90'500), "1m30s");
  EXPECT_EQ(FormatDurationMs(350), "350ms");
  EXPECT_EQ(FormatDurationMs(42'000), "42s");
  EXPECT_EQ(FormatDurationMs(307'000), "5m07s");
  EXPECT_EQ(FormatDurationMs(3 * 3'600'000 + 5 * 60'000), "3h05m");
  EXPECT_EQ(FormatDurationMs(2 * 86'400'000LL + 4 * 3'600'000), "2d04h");
}

}  // namespace
}  // namespace longhaul
