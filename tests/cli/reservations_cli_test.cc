// `longhaul reserve --from/--until` (docs/cli.md, "reserve, reservations, unreserve"): the times
// name the flag they came from, and the line a reservation prints (also under `longhaul agents`).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/commands.h"

namespace longhaul::cli {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kCliTen = 1'796'464'800'000;  // 2026-12-05T10:00:00Z

TEST(ReserveTimesTest, BadTimesNameTheirFlag) {
  EXPECT_EQ(*ParseDrainAt("+4h", kCliTen, "--until"), kCliTen + 4 * 3'600'000);
  Result<int64_t> bad = ParseDrainAt("6pm", kCliTen, "--until");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("--until '6pm': expected an RFC 3339 time"));
  Result<int64_t> bad_from = ParseDrainAt("+2 hours", kCliTen, "--from");
  ASSERT_FALSE(bad_from.ok());
  EXPECT_THAT(bad_from.status().message(), HasSubstr("--from '+2 hours'"));
}

TEST(ReserveTimesTest, TheLineSaysWhatForWhomWhenWhyAndWho) {
  v1::Reservation r;
  r.set_id(3);
  r.set_agent_id("n1");
  r.set_gpus(4);
  r.set_holder_kind("team");
  r.set_holder("vision");
  r.set_from_ms(kCliTen + 4 * 3'600'000);
  r.set_until_ms(kCliTen + 8 * 3'600'000);
  r.set_reason("CVPR sprint");
  r.set_by("ada");
  EXPECT_EQ(DescribeReservation(r),
            "reservation 3: 4 of n1's GPUs for team vision, 2026-12-05 14:00 UTC - 18:00 UTC: "
            "CVPR sprint (by ada)");
  r.set_until_ms(kCliTen + 24 * 3'600'000);
  r.set_reason("");
  EXPECT_EQ(DescribeReservation(r),
            "reservation 3: 4 of n1's GPUs for team vision, 2026-12-05 14:00 UTC - 2026-12-06 "
            "10:00 UTC (by ada)");
}

}  // namespace
}  // namespace longhaul::cli
