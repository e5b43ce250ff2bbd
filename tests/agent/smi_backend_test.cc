// The nvidia-smi backend's parser on captured output.
#include "agent/gpu/smi_backend.h"

#include <gtest/gtest.h>

namespace longhaul::agent {
namespace {

// Two H200s in the format of `nvidia-smi --query-gpu=<NvidiaSmiFields()>
// --format=csv,noheader,nounits` (figures made up to cover every field): one busy, one idle
// with ECC and remap figures.
constexpr char kTwoH200s[] =
    "0, GPU-5a3b1c2d-0000-1111-2222-333344445555, NVIDIA H200, 100, 62, 80213, 143771, 689.41, "
    "64, 1980, 0x0000000000000000, 0, 0, 0, 0, No, No\n"
    "1, GPU-6b4c2d3e-0000-1111-2222-333344445555, NVIDIA H200, 0, 0, 1, 143771, 75.62, 29, "
    "345, 0x0000000000000001, 3, 1, 0, 1, Yes, No\n";

TEST(NvidiaSmiParseTest, ReadsEveryField) {
  auto samples = ParseNvidiaSmiSamples(kTwoH200s, NvidiaSmiFields().size());
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const GpuSample& busy = (*samples)[0];
  EXPECT_EQ(busy.uuid, "GPU-5a3b1c2d-0000-1111-2222-333344445555");
  EXPECT_EQ(busy.name, "NVIDIA H200");
  EXPECT_EQ(busy.sm_util_pct, 100);
  EXPECT_EQ(busy.mem_util_pct, 62);
  EXPECT_EQ(busy.mem_used_bytes, int64_t{80213} << 20);
  EXPECT_EQ(busy.mem_total_bytes, int64_t{143771} << 20);
  EXPECT_DOUBLE_EQ(*busy.power_watts, 689.41);
  EXPECT_EQ(busy.temperature_c, 64);
  EXPECT_EQ(busy.sm_clock_mhz, 1980);
  EXPECT_EQ(busy.throttle_reasons, 0u);
  EXPECT_FALSE(busy.pcie_replays.has_value()) << "nvidia-smi does not report it";
  const GpuSample& idle = (*samples)[1];
  EXPECT_EQ(idle.index, 1);
  EXPECT_EQ(idle.throttle_reasons, 1u);
  EXPECT_EQ(idle.ecc_corrected, 3u);
  EXPECT_EQ(idle.ecc_uncorrected, 1u);
  EXPECT_EQ(idle.remapped_uncorrectable, 1u);
  EXPECT_EQ(idle.remap_pending, true);
  EXPECT_EQ(idle.remap_failed, false);
}

TEST(NvidiaSmiParseTest, ReadsWhatAnIdleH200Printed) {
  // Printed by nvidia-smi on a real H200 node for the full query (docs/gpus.md).
  auto samples = ParseNvidiaSmiSamples(
      "0, GPU-6dd3a11a-4df4-de53-b7a7-d0b8e1d780ca, NVIDIA H200, 0, 0, 0, 143771, 81.44, 38, "
      "345, 0x0000000000000001, 0, 0, 0, 0, No, No\n",
      NvidiaSmiFields().size());
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ((*samples)[0].uuid, "GPU-6dd3a11a-4df4-de53-b7a7-d0b8e1d780ca");
  EXPECT_EQ((*samples)[0].mem_total_bytes, int64_t{143771} << 20);
  EXPECT_DOUBLE_EQ(*(*samples)[0].power_watts, 81.44);
  EXPECT_EQ((*samples)[0].throttle_reasons, 1u);  // GPU idle
  EXPECT_EQ((*samples)[0].remap_pending, false);
}

TEST(NvidiaSmiParseTest, NotReportedFiguresAreAbsentAndTheBasicQueryParses) {
  auto samples = ParseNvidiaSmiSamples(
      "0, GPU-x, Some Board, [N/A], [N/A], 10, 1000, [Not Supported], 40, 1200\n",
      kNvidiaSmiBasicFields);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_FALSE((*samples)[0].sm_util_pct.has_value());
  EXPECT_FALSE((*samples)[0].power_watts.has_value());
  EXPECT_FALSE((*samples)[0].ecc_uncorrected.has_value());
  EXPECT_EQ((*samples)[0].temperature_c, 40);
}

TEST(NvidiaSmiParseTest, ABadLineIsNamed) {
  auto wrong_count = ParseNvidiaSmiSamples(
      "0, GPU-x, A, 1, 1, 1, 1, 1, 1, 1\nNVIDIA-SMI has failed\n", kNvidiaSmiBasicFields);
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.status().message().find("line 2"), absl::string_view::npos);
  auto not_number =
      ParseNvidiaSmiSamples("0, GPU-x, A, lots, 1, 1, 1, 1, 1, 1\n", kNvidiaSmiBasicFields);
  ASSERT_FALSE(not_number.ok());
  EXPECT_NE(not_number.status().message().find("utilization.gpu 'lots'"), absl::string_view::npos)
      << not_number.status();
}

}  // namespace
}  // namespace longhaul::agent
