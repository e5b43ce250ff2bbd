// `longhaul agent drain --at`: the times it takes (docs/cli.md, "agent") and the line it prints
// for a drain (also under `longhaul agents`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands.h"

namespace longhaul::cli {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kTen = 1'796'464'800'000;  // 2026-12-05T10:00:00Z

TEST(DrainAtTest, TakesNowATimeFromNowOrAnRfc3339Time) {
  EXPECT_EQ(*ParseDrainAt("", kTen), kTen);
  EXPECT_EQ(*ParseDrainAt("+2h", kTen), kTen + 2 * 3'600'000);
  EXPECT_EQ(*ParseDrainAt("+90m", kTen), kTen + 90 * 60'000);
  EXPECT_EQ(*ParseDrainAt("2026-12-05T14:00:00Z", kTen), kTen + 4 * 3'600'000);
  EXPECT_EQ(*ParseDrainAt("2026-12-05T15:00:00+01:00", kTen), kTen + 4 * 3'600'000);
  Result<int64_t> bad = ParseDrainAt("14:00", kTen);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--at '14:00': expected an RFC 3339 time"));
  Result<int64_t> bad_duration = ParseDrainAt("+2 hours", kTen);
  ASSERT_FALSE(bad_duration.ok());
  EXPECT_THAT(bad_duration.status().message(), HasSubstr("--at '+2 hours'"));
}

TEST(DrainAtTest, TheLineSaysWhenWhyAndWho) {
  v1::AgentDrain d;
  d.set_at_ms(kTen + 4 * 3'600'000);
  d.set_reason("kernel upgrade");
  d.set_by("ada");
  EXPECT_EQ(DescribeDrain("n1", d, kTen),
            "agent n1 drains at 2026-12-05 14:00:00 UTC (in 4h00m): kernel upgrade (by ada)");
  EXPECT_EQ(DescribeDrain("n1", d, kTen + 5 * 3'600'000),
            "agent n1 is drained since 2026-12-05 14:00:00 UTC: kernel upgrade (by ada)");
}

}  // namespace
}  // namespace longhaul::cli
