// The NVML backend over the fake library (fake_nvml/), loaded by path through the same dlopen
// as libnvidia-ml.so.1, and the choice of backend when NVML is missing.
#include "agent/gpu/gpu_backend.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/gpu/nvml_backend.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

using testing::FakeGpus;
using testing::FakeGpuState;
using testing::WriteFakeNvmlState;

class NvmlBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = tmp_.Join("nvml.json");
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state_.c_str(), 1);
  }
  void TearDown() override { ::unsetenv("LONGHAUL_FAKE_NVML_STATE"); }

  testing::TempDir tmp_;
  std::string state_;
};

TEST_F(NvmlBackendTest, ListsAndReadsEveryFigure) {
  std::vector<FakeGpuState> gpus = FakeGpus(2);
  gpus[1] = {.uuid = "GPU-1234",
             .name = "NVIDIA H200",
             .sm_util = 97,
             .mem_util = 41,
             .mem_used = 80ULL << 30,
             .mem_total = 141ULL << 30,
             .power_mw = 612'345,
             .temp_c = 61,
             .sm_clock_mhz = 1980,
             .throttle_reasons = 0x4,
             .ecc_corrected = 12,
             .ecc_uncorrected = 0,
             .remapped_correctable = 2,
             .remapped_uncorrectable = 1,
             .remap_pending = true,
             .remap_failed = false,
             .pcie_replays = 7};
  WriteFakeNvmlState(state_, gpus);
  auto backend = OpenNvml(LONGHAUL_FAKE_NVML);
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ((*backend)->name(), "nvml");
  ASSERT_EQ((*backend)->devices().size(), 2u);
  EXPECT_EQ((*backend)->devices()[1].uuid, "GPU-1234");
  EXPECT_EQ((*backend)->devices()[1].name, "NVIDIA H200");
  EXPECT_EQ((*backend)->devices()[1].memory_mib, 141 * 1024);
  EXPECT_EQ((*backend)->devices()[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_TRUE((*backend)->devices()[0].xid_events);
  EXPECT_EQ((*backend)->devices()[1].pci_bus_id, "") << "NVML did not say";

  auto samples = (*backend)->Sample();
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 2u);
  const GpuSample& s = (*samples)[1];
  EXPECT_EQ(s.index, 1);
  EXPECT_FALSE(s.lost);
  EXPECT_EQ(s.sm_util_pct, 97);
  EXPECT_EQ(s.mem_util_pct, 41);
  EXPECT_EQ(s.mem_used_bytes, int64_t{80} << 30);
  EXPECT_EQ(s.mem_total_bytes, int64_t{141} << 30);
  EXPECT_DOUBLE_EQ(*s.power_watts, 612.345);
  EXPECT_EQ(s.temperature_c, 61);
  EXPECT_EQ(s.sm_clock_mhz, 1980);
  EXPECT_EQ(s.throttle_reasons, 0x4u);
  EXPECT_EQ(s.ecc_corrected, 12u);
  EXPECT_EQ(s.ecc_uncorrected, 0u);
  EXPECT_EQ(s.remapped_correctable, 2u);
  EXPECT_EQ(s.remapped_uncorrectable, 1u);
  EXPECT_EQ(s.remap_pending, true);
  EXPECT_EQ(s.remap_failed, false);
  EXPECT_EQ(s.pcie_replays, 7u);
  EXPECT_TRUE(s.xids.empty());
  EXPECT_EQ((*samples)[0].uuid, "GPU-fake-0000");
  EXPECT_EQ((*samples)[0].sm_util_pct, 0);
}

TEST_F(NvmlBackendTest, DeliversEachXidOnceToItsGpu) {
  std::vector<FakeGpuState> gpus = FakeGpus(3);
  gpus[2].xids = {79};
  WriteFakeNvmlState(state_, gpus);
  auto backend = OpenNvml(LONGHAUL_FAKE_NVML);
  ASSERT_TRUE(backend.ok()) << backend.status();
  auto first = (*backend)->Sample();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)[2].xids, std::vector<int>{79});
  EXPECT_TRUE((*first)[0].xids.empty());
  auto again = (*backend)->Sample();
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)[2].xids.empty()) << "an event is delivered once";

  gpus[0].xids = {13, 43};
  WriteFakeNvmlState(state_, gpus);
  auto later = (*backend)->Sample();
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)[0].xids, (std::vector<int>{13, 43}));
  EXPECT_TRUE((*later)[2].xids.empty());
}

TEST_F(NvmlBackendTest, AGpuOffTheBusIsLostAndTheOthersAreRead) {
  std::vector<FakeGpuState> gpus = FakeGpus(2);
  WriteFakeNvmlState(state_, gpus);
  auto backend = OpenNvml(LONGHAUL_FAKE_NVML);
  ASSERT_TRUE(backend.ok()) << backend.status();
  gpus[0].lost = true;
  gpus[1].sm_util = 55;
  WriteFakeNvmlState(state_, gpus);
  auto samples = (*backend)->Sample();
  ASSERT_TRUE(samples.ok());
  EXPECT_TRUE((*samples)[0].lost);
  EXPECT_FALSE((*samples)[0].sm_util_pct.has_value());
  EXPECT_EQ((*samples)[0].uuid, "GPU-fake-0000") << "known from the start";
  EXPECT_FALSE((*samples)[1].lost);
  EXPECT_EQ((*samples)[1].sm_util_pct, 55);
}

TEST_F(NvmlBackendTest, InitFailureIsUnavailableWithNvmlsMessage) {
  WriteFakeNvmlState(state_, FakeGpus(1), /*init_error=*/999);
  auto backend = OpenNvml(LONGHAUL_FAKE_NVML);
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(backend.status().message().find("nvmlInit_v2: Unknown Error (999)"),
            absl::string_view::npos)
      << backend.status();
}

TEST(GpuBackendChoiceTest, MissingNvmlFallsBackToNvidiaSmiThenToDeclared) {
  testing::TempDir dir;
  std::string old_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", dir.path().c_str(), 1);
  GpuBackendChoice none = ChooseGpuBackend(dir.Join("libnvidia-ml-missing.so.1"));
  EXPECT_EQ(none.backend->name(), "declared");
  ASSERT_EQ(none.notes.size(), 2u);
  EXPECT_NE(none.notes[0].find("NVML not loaded"), std::string::npos) << none.notes[0];
  EXPECT_NE(none.notes[1].find("nvidia-smi is not on PATH"), std::string::npos);

  // A stand-in nvidia-smi that answers the full query with one GPU, and its bus id.
  std::string smi = dir.Join("nvidia-smi");
  testing::WriteTextFile(smi,
                         "#!/bin/sh\n"
                         "case \"$1\" in --query-gpu=index,pci.bus_id) "
                         "echo '0, 00000000:3B:00.0'; exit 0;; esac\n"
                         "case \"$1\" in --query-gpu=index,uuid,name,*) ;; *) exit 3;; esac\n"
                         "echo '0, GPU-abc, NVIDIA H200, 3, 1, 600, 143771, 75.5, 30, 345, "
                         "0x0000000000000001, 0, 0, 0, 0, No, No'\n");
  ::chmod(smi.c_str(), 0755);
  GpuBackendChoice smi_choice = ChooseGpuBackend(dir.Join("libnvidia-ml-missing.so.1"));
  ::setenv("PATH", old_path.c_str(), 1);
  EXPECT_EQ(smi_choice.backend->name(), "nvidia-smi");
  ASSERT_EQ(smi_choice.backend->devices().size(), 1u);
  EXPECT_EQ(smi_choice.backend->devices()[0].uuid, "GPU-abc");
  EXPECT_EQ(smi_choice.backend->devices()[0].memory_mib, 143771);
  EXPECT_EQ(smi_choice.backend->devices()[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_FALSE(smi_choice.backend->devices()[0].xid_events) << "from the kernel log";
  EXPECT_EQ(smi_choice.notes.size(), 1u);
}

}  // namespace
}  // namespace longhaul::agent
