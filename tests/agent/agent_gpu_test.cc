// The real longhaul-agent with the fake NVML (--nvml-library): the GPUs it reports in its
// Hello, their figures and health on /metrics, a hardware XID in its log, an XID read from the
// kernel log (--kmsg) for GPUs without NVML events, and the fallback when the library is
// missing.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/strings.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/http/exposition.h"
#include "tests/http/http_client.h"

namespace longhaul::testing {
namespace {

class AgentGpuTest : public AgentHarnessTest {
 protected:
  // Starts the agent on the fake NVML, sampling every 100 ms, with /metrics on port 0.
  void StartOnFakeNvml(std::vector<std::string> more_args = {}) {
    state_ = h_.tmp().Join("nvml.json");
    WriteFakeNvmlState(state_, gpus_);
    std::vector<std::string> args = {"--nvml-library", LONGHAUL_FAKE_NVML, "--gpu-sample",
                                     "100ms",          "--metrics-listen", "127.0.0.1:0"};
    args.insert(args.end(), more_args.begin(), more_args.end());
    h_.StartAgent(args, {{"LONGHAUL_FAKE_NVML_STATE", state_}});
    ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
    ASSERT_TRUE(WaitFor(
        [&] {
          addr_ = std::string(StripWhitespace(ReadTextFile(h_.state_dir() + "/metrics.addr")));
          return !addr_.empty();
        },
        10'000))
        << h_.AgentLog();
  }

  // Scrapes /metrics until `want` is in it (the sampler runs every 100 ms), up to 20 s.
  bool ScrapeUntil(const std::string& want) {
    return WaitFor(
        [&] {
          Result<HttpResult> r = HttpGet(addr_, "/metrics");
          body_ = r.ok() ? r->body : ToStd(r.status().message());
          return body_.find(want) != std::string::npos;
        },
        20'000, 50);
  }

  std::vector<FakeGpuState> gpus_ = FakeGpus(2);
  std::string state_, addr_, body_;
};

TEST_F(AgentGpuTest, MetricsShowTheFakeGpusFiguresAndHealth) {
  gpus_[1].sm_util = 93;
  gpus_[1].mem_used = 10ULL << 30;
  gpus_[1].power_mw = 512'000;
  ASSERT_NO_FATAL_FAILURE(StartOnFakeNvml());

  std::optional<v1::Hello> hello = coord().last_hello();
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->resources().gpus(), 2);
  ASSERT_EQ(hello->gpus_size(), 2);
  EXPECT_EQ(hello->gpus(1).name(), "NVIDIA H200");
  EXPECT_NE(h_.AgentLog().find("GPU-fake-0001"), std::string::npos) << h_.AgentLog();

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string labels =
      "{gpu=\"1\",UUID=\"GPU-fake-0001\",device=\"nvidia1\",modelName=\"NVIDIA H200\","
      "Hostname=\"" +
      std::string(host) + "\"}";
  ASSERT_TRUE(ScrapeUntil("DCGM_FI_DEV_GPU_UTIL" + labels)) << body_;
  // Read as strictly as longhauld's /metrics: the GPU families keep the exposition valid.
  Exposition e;
  ParseExposition(body_, e);
  ASSERT_FALSE(HasFailure()) << body_;
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_gpu_backend{backend=\"nvml\"}"), 1);
  EXPECT_EQ(SeriesValue(e, "DCGM_FI_DEV_GPU_UTIL" + labels), 93);
  EXPECT_EQ(SeriesValue(e, "DCGM_FI_DEV_FB_USED" + labels), 10240);
  EXPECT_EQ(SeriesValue(e, "DCGM_FI_DEV_POWER_USAGE" + labels), 512);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_gpu_healthy" + labels), 1);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_connected"), 1) << "the agent's own families stay";

  // A GPU falls off the bus (XID 79): unhealthy on /metrics, one warning line in the log.
  gpus_[0].xids = {79};
  WriteFakeNvmlState(state_, gpus_);
  ASSERT_TRUE(ScrapeUntil("longhaul_agent_gpu_unhealthy{gpu=\"0\"")) << body_;
  EXPECT_NE(body_.find("reason=\"XID 79 (GPU has fallen off the bus)\"} 1"), std::string::npos);
  EXPECT_NE(body_.find("DCGM_FI_DEV_XID_ERRORS{gpu=\"0\""), std::string::npos);
  std::string log = h_.AgentLog();
  EXPECT_NE(log.find("GPU 0 (GPU-fake-0000): healthy -> unhealthy: XID 79"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("GPU 1 (GPU-fake-0001): healthy -> unhealthy"), std::string::npos);
}

TEST_F(AgentGpuTest, AnXidInTheKernelLogMakesAGpuWithoutNvmlEventsUnhealthy) {
  // Boards without XID events (NVML answers NOT_SUPPORTED): the agent reads the kernel log.
  for (FakeGpuState& g : gpus_) g.xid_events = false;
  std::string kmsg = h_.tmp().Join("kmsg");
  WriteTextFile(kmsg, "6,1,1,-;NVRM: Xid (PCI:0000:3c:00): 79, from before the start\n");
  ASSERT_NO_FATAL_FAILURE(StartOnFakeNvml({"--kmsg", kmsg}));
  ASSERT_TRUE(ScrapeUntil("longhaul_agent_gpu_healthy{gpu=\"1\"")) << body_;
  EXPECT_EQ(body_.find("longhaul_agent_gpu_unhealthy{"), std::string::npos)
      << "a line written before the agent started is not read\n"
      << body_;
  EXPECT_NE(h_.AgentLog().find("XIDs of GPU 0, 1 from the kernel log (" + kmsg + ")"),
            std::string::npos)
      << h_.AgentLog();

  std::ofstream(kmsg, std::ios::app)
      << "3,2,2,-;NVRM: Xid (PCI:0000:3c:00): 79, pid=1234, name=python3, GPU has fallen off "
         "the bus.\n";
  ASSERT_TRUE(ScrapeUntil("longhaul_agent_gpu_unhealthy{gpu=\"1\"")) << body_;
  EXPECT_NE(body_.find("reason=\"XID 79 (GPU has fallen off the bus)\"} 1"), std::string::npos)
      << body_;
  std::string log = h_.AgentLog();
  EXPECT_NE(log.find("GPU 1 (GPU-fake-0001): healthy -> unhealthy: XID 79"), std::string::npos)
      << log;
  EXPECT_NE(log.find("GPU 1: XID 79 in the kernel log (PCI 0000:3c:00, pid 1234, python3)"),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("GPU 0 (GPU-fake-0000): healthy -> unhealthy"), std::string::npos);
}

TEST_F(AgentGpuTest, MissingNvmlIsSaidOnceAndGpusComeFromTheFlag) {
  std::string path = h_.tmp().Join("empty-bin");
  ASSERT_EQ(::mkdir(path.c_str(), 0755), 0);
  h_.StartAgent({"--nvml-library", h_.tmp().Join("libnvidia-ml-none.so.1"), "--gpus", "3"},
                {{"PATH", path + ":/usr/bin:/bin"}});
  ASSERT_TRUE(h_.WaitConnected()) << h_.AgentLog();
  std::optional<v1::Hello> hello = coord().last_hello();
  ASSERT_TRUE(hello.has_value());
  EXPECT_EQ(hello->resources().gpus(), 3);
  std::string log = h_.AgentLog();
  size_t first = log.find("NVML not loaded");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("NVML not loaded", first + 1), std::string::npos) << "said once";
}

}  // namespace
}  // namespace longhaul::testing
