// The GPU sampler over the fake NVML with a fake clock: the interval, health from XIDs,
// ECC, row remaps and a GPU off the bus, and the /metrics text with dcgm-exporter's names.
#include "agent/gpu/gpu_sampler.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "agent/gpu/gpu_metrics.h"
#include "agent/gpu/nvml_backend.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/test_util.h"

namespace longhaul::agent {
namespace {

using testing::FakeGpus;
using testing::FakeGpuState;
using testing::WriteFakeNvmlState;

class GpuSamplerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    state_ = tmp_.Join("nvml.json");
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state_.c_str(), 1);
    gpus_ = FakeGpus(4);
    WriteFakeNvmlState(state_, gpus_);
    auto backend = OpenNvml(LONGHAUL_FAKE_NVML);
    ASSERT_TRUE(backend.ok()) << backend.status();
    sampler_ =
        std::make_unique<GpuSampler>(std::move(*backend), XidTable::Builtin(), &clock_, 5'000);
  }
  void TearDown() override {
    sampler_.reset();
    ::unsetenv("LONGHAUL_FAKE_NVML_STATE");
  }
  void Write() { WriteFakeNvmlState(state_, gpus_); }
  GpuState Gpu(int i) { return sampler_->Snapshot().at(i); }

  testing::TempDir tmp_;
  std::string state_;
  std::vector<FakeGpuState> gpus_;
  testing::FakeClock clock_;
  std::unique_ptr<GpuSampler> sampler_;
};

TEST_F(GpuSamplerTest, SamplesOncePerInterval) {
  EXPECT_TRUE(sampler_->Snapshot().empty());
  EXPECT_TRUE(sampler_->SampleIfDue()) << "the first sample is due at once";
  ASSERT_EQ(sampler_->Snapshot().size(), 4u);
  EXPECT_EQ(Gpu(0).sampled_at_ms, clock_.NowMs());
  gpus_[0].sm_util = 88;
  Write();
  clock_.AdvanceMs(4'999);
  EXPECT_FALSE(sampler_->SampleIfDue());
  EXPECT_EQ(Gpu(0).last.sm_util_pct, 0) << "not sampled before the interval";
  clock_.AdvanceMs(1);
  EXPECT_TRUE(sampler_->SampleIfDue());
  EXPECT_EQ(Gpu(0).last.sm_util_pct, 88);
  EXPECT_EQ(sampler_->samples(), 2u);
  EXPECT_EQ(sampler_->failures(), 0u);
}

TEST_F(GpuSamplerTest, HardwareXidMakesTheGpuUnhealthyApplicationXidDoesNot) {
  sampler_->SampleNow();
  gpus_[1].xids = {79};
  gpus_[2].xids = {13};
  gpus_[3].xids = {9999};
  Write();
  sampler_->SampleNow();
  EXPECT_TRUE(Gpu(0).healthy);
  EXPECT_FALSE(Gpu(1).healthy);
  EXPECT_EQ(Gpu(1).reason, "XID 79 (GPU has fallen off the bus)");
  EXPECT_EQ(Gpu(1).last_xid, 79);
  EXPECT_TRUE(Gpu(2).healthy) << "an application XID is charged to the attempt";
  EXPECT_EQ(Gpu(2).last_application_xid, 13);
  EXPECT_EQ(Gpu(2).xid_events[XidClass::kApplication], 1u);
  EXPECT_TRUE(Gpu(3).healthy) << "an unknown XID is counted only";
  EXPECT_EQ(Gpu(3).xid_events[XidClass::kUnknown], 1u);

  // Sticky: the next samples, without new events, leave GPU 1 unhealthy.
  clock_.AdvanceMs(5'000);
  sampler_->SampleIfDue();
  EXPECT_FALSE(Gpu(1).healthy);
  EXPECT_EQ(Gpu(1).xid_events[XidClass::kHardware], 1u);
}

TEST_F(GpuSamplerTest, EccRemapsAndTheBusMakeGpusUnhealthy) {
  sampler_->SampleNow();
  gpus_[0].ecc_uncorrected = 2;
  gpus_[0].ecc_corrected = 100;
  gpus_[1].remap_pending = true;
  gpus_[2].remap_failed = true;
  gpus_[3].lost = true;
  Write();
  sampler_->SampleNow();
  EXPECT_EQ(Gpu(0).reason, "2 uncorrectable ECC errors");
  EXPECT_EQ(Gpu(1).reason, "a row remap is pending (needs a GPU reset)");
  EXPECT_EQ(Gpu(2).reason, "a row remap failed");
  EXPECT_EQ(Gpu(3).reason, "fell off the bus (GPU is lost)");
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(Gpu(i).healthy) << i;
}

TEST_F(GpuSamplerTest, RendersDcgmNamesWithTheirLabels) {
  gpus_[2].sm_util = 97;
  gpus_[2].mem_used = 80ULL << 30;
  gpus_[2].power_mw = 612'500;
  gpus_[2].temp_c = 61;
  gpus_[2].sm_clock_mhz = 1980;
  gpus_[2].pcie_replays = 3;
  gpus_[2].xids = {48};
  Write();
  sampler_->SampleNow();
  metrics::TextWriter w;
  WriteGpuMetrics(*sampler_, "node-7", w);
  const std::string& text = w.text();
  std::string labels =
      "{gpu=\"2\",UUID=\"GPU-fake-0002\",device=\"nvidia2\",modelName=\"NVIDIA H200\","
      "Hostname=\"node-7\"}";
  for (const std::string& line :
       {"DCGM_FI_DEV_GPU_UTIL" + labels + " 97", "DCGM_FI_DEV_FB_USED" + labels + " 81920",
        "DCGM_FI_DEV_POWER_USAGE" + labels + " 612.5", "DCGM_FI_DEV_GPU_TEMP" + labels + " 61",
        "DCGM_FI_DEV_SM_CLOCK" + labels + " 1980",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" + labels + " 3",
        "DCGM_FI_DEV_XID_ERRORS" + labels + " 48", "longhaul_agent_gpu_healthy" + labels + " 0",
        std::string("longhaul_agent_gpu_backend{backend=\"nvml\"} 1"),
        std::string("# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL gauge")}) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
  }
  EXPECT_NE(text.find("longhaul_agent_gpu_unhealthy{gpu=\"2\""), std::string::npos);
  EXPECT_NE(text.find("reason=\"XID 48 (Double-bit ECC error)\"} 1"), std::string::npos);
  EXPECT_NE(text.find("class=\"hardware\"} 1"), std::string::npos);
  EXPECT_EQ(text.find("longhaul_agent_gpu_unhealthy{gpu=\"0\""), std::string::npos);
}

TEST_F(GpuSamplerTest, TheThreadSamplesUntilStopped) {
  // Real time here: Start() waits on a condition variable, and the fake clock never moves,
  // so exactly one sample is due; Stop() must end the wait at once.
  sampler_->Start();
  ASSERT_TRUE(testing::WaitFor([&] { return sampler_->samples() == 1; }, 10'000));
  sampler_->Stop();
  EXPECT_EQ(sampler_->samples(), 1u);
}

}  // namespace
}  // namespace longhaul::agent
