// lh-gpucheck as a process, on the fake CUDA driver (tests/stages/fake_cuda) loaded through
// --cuda-library: the same dlopen path as libcuda.so.1.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/event.h"
#include "core/strings.h"
#include "tests/stages/common/stage_events.h"
#include "tests/stages/fake_cuda/fake_cuda_state.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using testing::BinPath;
using testing::FakeCudaGpu;
using testing::FakeCudaGpus;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TempDir;

// Small enough for the fake, which runs the burn kernel on the CPU.
const std::vector<std::string> kSmallBurn = {"--burn-launches", "3",  "--burn-threads", "4096",
                                             "--burn-rounds",   "16", "--p2p-mib",      "1"};

class LhGpucheckTest : public ::testing::Test {
 protected:
  testing::CommandResult Check(const std::vector<FakeCudaGpu>& gpus, std::vector<std::string> args,
                               const std::string& visible = "0,1") {
    testing::WriteFakeCudaState(state_path(), gpus);
    std::vector<std::string> argv = {BinPath("lh-gpucheck"), "--cuda-library", LONGHAUL_FAKE_CUDA};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunCommand(argv,
                               {{"LONGHAUL_FAKE_CUDA_STATE", state_path()},
                                {"LONGHAUL_EVENTS", events_path()},
                                {"CUDA_VISIBLE_DEVICES", visible}},
                               60'000);
  }
  std::string state_path() const { return dir_.Join("fake_cuda.json"); }
  std::string events_path() const { return dir_.Join("events.jsonl"); }
  // Metric `name`'s value per step (the GPU's ordinal).
  std::map<int64_t, double> MetricByGpu(const std::string& name) const {
    std::map<int64_t, double> out;
    for (const StageEvent& e : testing::ReadEvents(events_path(), /*strict=*/true)) {
      if (e.type == EventType::kMetric && e.name == name) out[e.step.value_or(-1)] = e.value;
    }
    return out;
  }
  std::vector<std::string> Lines(const std::string& text) const {
    std::vector<std::string> lines;
    for (const std::string& l : StrSplit(text, '\n')) {
      if (!l.empty()) lines.push_back(l);
    }
    return lines;
  }
  TempDir dir_;
};

TEST_F(LhGpucheckTest, TwoHealthyGpusPassEveryCheck) {
  auto r = Check(FakeCudaGpus(2), kSmallBurn);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_TRUE(StartsWith(lines[0],
                         "GPU 0 GPU-00000000-0000-0000-0000-000000000000 NVIDIA H200: "
                         "PASS  memory 25.6 MiB x 6 patterns, 0 errors  burn 3 "
                         "launches"))
      << lines[0];
  EXPECT_THAT(lines[0], HasSubstr("p2p min"));
  EXPECT_TRUE(StartsWith(lines[1], "GPU 1 GPU-00000000-0000-0000-0000-000000000001")) << lines[1];
  EXPECT_EQ(r.err, "");

  EXPECT_EQ(MetricByGpu("gpucheck.mem_errors"), (std::map<int64_t, double>{{0, 0}, {1, 0}}));
  for (const char* name : {"gpucheck.burn_gflops", "gpucheck.p2p_gbps"}) {
    auto by_gpu = MetricByGpu(name);
    ASSERT_EQ(by_gpu.size(), 2u) << name;
    EXPECT_GT(by_gpu[0], 0) << name;
    EXPECT_GT(by_gpu[1], 0) << name;
  }
  EXPECT_EQ(MetricByGpu("gpucheck.failed_gpus"), (std::map<int64_t, double>{{-1, 0}}));
  // 2 GPUs x (6 patterns + burn) + 2 peer directions.
  std::vector<StageEvent> events = testing::ReadEvents(events_path(), true);
  const StageEvent* last_progress = nullptr;
  for (const StageEvent& e : events) {
    if (e.type == EventType::kProgress) last_progress = &e;
  }
  ASSERT_NE(last_progress, nullptr);
  EXPECT_EQ(last_progress->done, 16);
  EXPECT_EQ(last_progress->total, 16.0);
  EXPECT_EQ(last_progress->unit, "checks");
  EXPECT_EQ(testing::OutputValue(events_path(), "failed_gpus"), "");
}

TEST_F(LhGpucheckTest, StuckBitOnGpu1FailsItWithTheOffset) {
  auto gpus = FakeCudaGpus(2);
  gpus[1].stuck_bits.push_back({4096, 3, 1});
  std::vector<std::string> args = kSmallBurn;
  args.insert(args.end(), {"--report", dir_.Join("gpucheck.json")});
  auto r = Check(gpus, args);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("lh-gpucheck: GPU 1 (GPU-00000000-0000-0000-0000-000000000001) failed "
                        "memory: "));
  EXPECT_THAT(r.err,
              HasSubstr("over 6 patterns; first in pattern zeros at byte offset 4096 (0x1000): "
                        "expected 0x00000000, "
                        "got 0x00000008"));
  EXPECT_THAT(r.err, Not(HasSubstr("GPU 0")));
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr(": PASS"));
  EXPECT_THAT(lines[1], HasSubstr(": FAIL"));
  // Stuck at 1 in bit 3 of word 1024: zeros, walking-ones (bit 0) and address (0x1000) see it;
  // ones and walking-zeros do not; random does half the time.
  auto errors = MetricByGpu("gpucheck.mem_errors");
  EXPECT_EQ(errors[0], 0);
  EXPECT_GE(errors[1], 3);
  EXPECT_LE(errors[1], 4);
  EXPECT_EQ(testing::OutputValue(events_path(), "failed_gpus"), "1");
  bool error_message = false;
  for (const StageEvent& e : testing::ReadEvents(events_path(), true)) {
    if (e.type == EventType::kMessage && e.level == "error" &&
        e.text.find("GPU 1") != std::string::npos) {
      error_message = true;
    }
  }
  EXPECT_TRUE(error_message);

  // The same in the JSON report, for a caller that reads fields.
  nlohmann::json report = nlohmann::json::parse(testing::ReadTextFile(dir_.Join("gpucheck.json")));
  EXPECT_EQ(report["passed"], false);
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["passed"], true);
  EXPECT_GT(report["gpus"][0]["burn"]["gflops"].get<double>(), 0);
  const nlohmann::json& bad = report["gpus"][1];
  EXPECT_EQ(bad["ordinal"], 1);
  EXPECT_EQ(bad["uuid"], "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(bad["passed"], false);
  EXPECT_THAT(bad["failure"].get<std::string>(), HasSubstr("memory: "));
  EXPECT_EQ(bad["memory"]["errors"], errors[1]);
  EXPECT_EQ(bad["memory"]["bytes_tested"], 26843544);
}

TEST_F(LhGpucheckTest, ReportThatCannotBeWrittenIsBadInput) {
  std::vector<std::string> args = kSmallBurn;
  args.insert(args.end(), {"--report", dir_.Join("no/such/dir/gpucheck.json")});
  auto r = Check(FakeCudaGpus(2), args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("lh-gpucheck: --report: "));
  EXPECT_THAT(r.err, HasSubstr("no/such/dir/gpucheck.json"));
  EXPECT_EQ(Lines(r.out).size(), 2u) << r.out;  // the checks ran and were reported
}

TEST_F(LhGpucheckTest, WrongKernelResultFailsTheBurn) {
  auto gpus = FakeCudaGpus(2);
  gpus[0].wrong_kernel_result = true;
  auto r = Check(gpus, kSmallBurn);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("GPU 0 (GPU-00000000-0000-0000-0000-000000000000) failed burn: launch 1 "
                        "of lh_gpucheck_fma stored 1 wrong result, first at thread 7: expected "));
  EXPECT_THAT(r.err, Not(HasSubstr("GPU 1")));
  EXPECT_EQ(MetricByGpu("gpucheck.mem_errors")[0], 0);
}

TEST_F(LhGpucheckTest, FourGpusCheckedTogetherEachFailureOnce) {
  auto gpus = FakeCudaGpus(4);
  gpus[0].wrong_kernel_result = true;
  gpus[1].stuck_bits.push_back({4096, 3, 1});
  auto r = Check(gpus, kSmallBurn, "0,1,2,3");
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  std::vector<std::string> errors = Lines(r.err);
  ASSERT_EQ(errors.size(), 2u) << r.err;
  std::sort(errors.begin(), errors.end());
  EXPECT_TRUE(StartsWith(errors[0],
                         "lh-gpucheck: GPU 0 (GPU-00000000-0000-0000-0000-"
                         "000000000000) failed burn: "))
      << errors[0];
  EXPECT_TRUE(StartsWith(errors[1],
                         "lh-gpucheck: GPU 1 (GPU-00000000-0000-0000-0000-"
                         "000000000001) failed memory: "))
      << errors[1];
  // The peer copies run between the GPUs that passed their own checks only.
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_THAT(lines[2], HasSubstr(": PASS"));
  EXPECT_THAT(lines[2], HasSubstr("p2p min"));
  EXPECT_THAT(lines[2], HasSubstr("(to GPU 3)"));
  EXPECT_THAT(lines[3], HasSubstr("(to GPU 2)"));
  EXPECT_EQ(MetricByGpu("gpucheck.p2p_gbps").size(), 2u);
  EXPECT_EQ(testing::OutputValue(events_path(), "failed_gpus"), "0,1");
}

// A stage's pre-flight: `lh-gpucheck ... -- COMMAND` runs COMMAND in its place (the same
// process, its exit code and environment) when every GPU passed.
TEST_F(LhGpucheckTest, PreflightRunsTheCommandWhenEveryGpuPasses) {
  std::vector<std::string> args = kSmallBurn;
  args.insert(args.end(), {"--", "sh", "-c", "echo \"stage on $CUDA_VISIBLE_DEVICES\"; exit 7"});
  auto r = Check(FakeCudaGpus(2), args);
  EXPECT_EQ(r.exit_code, 7) << r.err << r.out;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr(": PASS"));
  EXPECT_EQ(lines[2], "stage on 0,1");
  bool started = false;
  for (const StageEvent& e : testing::ReadEvents(events_path(), true)) {
    EXPECT_NE(e.type, EventType::kGpuFault);
    started |= e.type == EventType::kMessage && e.text == "pre-flight passed; starting sh";
  }
  EXPECT_TRUE(started);
}

// A GPU that fails: the command does not run, and the stage protocol's gpu_fault event names
// the GPU (ordinal and UUID) for the coordinator to take it out of service.
TEST_F(LhGpucheckTest, PreflightThatFailsRunsNothingAndReportsTheGpuFault) {
  auto gpus = FakeCudaGpus(2);
  gpus[1].wrong_kernel_result = true;
  std::vector<std::string> args = kSmallBurn;
  args.insert(args.end(), {"--", "sh", "-c", "touch " + dir_.Join("ran")});
  auto r = Check(gpus, args);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("lh-gpucheck: pre-flight failed (exit 1); sh was not run"));
  EXPECT_NE(::access(dir_.Join("ran").c_str(), F_OK), 0) << "the command ran";
  std::vector<StageEvent> faults;
  for (const StageEvent& e : testing::ReadEvents(events_path(), true)) {
    if (e.type == EventType::kGpuFault) faults.push_back(e);
  }
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].gpu, 1);
  EXPECT_EQ(faults[0].uuid, "GPU-00000000-0000-0000-0000-000000000001");
  EXPECT_THAT(faults[0].text, HasSubstr("lh-gpucheck: burn: launch 1 of lh_gpucheck_fma"));
}

TEST_F(LhGpucheckTest, PreflightCommandThatCannotRunExits127) {
  std::vector<std::string> args = kSmallBurn;
  args.insert(args.end(), {"--", dir_.Join("no-such-program")});
  auto r = Check(FakeCudaGpus(1), args, "0");
  EXPECT_EQ(r.exit_code, 127) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("lh-gpucheck: cannot run " + dir_.Join("no-such-program") +
                               ": No such file or directory"));
}

TEST_F(LhGpucheckTest, MissingDriverLibraryIsAClearError) {
  auto r =
      testing::RunCommand({BinPath("lh-gpucheck"), "--cuda-library", "/nonexistent/libcuda.so.1"},
                          {{"LONGHAUL_EVENTS", events_path()}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("lh-gpucheck: /nonexistent/libcuda.so.1 not found: this machine has no "
                        "NVIDIA driver ("));
  EXPECT_EQ(r.out, "");
}

TEST_F(LhGpucheckTest, NoVisibleGpuIsTheSameKindOfError) {
  auto r = Check(FakeCudaGpus(2), kSmallBurn, /*visible=*/"");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no GPU visible (CUDA_VISIBLE_DEVICES=\"\")"));
}

TEST_F(LhGpucheckTest, AbsentPeerAccessFailsUnlessSkipped) {
  auto gpus = FakeCudaGpus(2);
  gpus[1].peer_access = false;
  auto r = Check(gpus, kSmallBurn);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("GPU 0 (GPU-00000000-0000-0000-0000-000000000000) failed p2p to GPU 1: "
                        "no peer access"));
  EXPECT_THAT(r.err,
              HasSubstr("GPU 1 (GPU-00000000-0000-0000-0000-000000000001) failed p2p to GPU 0"));

  std::vector<std::string> args = kSmallBurn;
  args.push_back("--no-p2p");
  auto skipped = Check(gpus, args);
  EXPECT_EQ(skipped.exit_code, 0) << skipped.err << skipped.out;
  EXPECT_THAT(skipped.out, Not(HasSubstr("p2p")));
}

TEST_F(LhGpucheckTest, CudaErrorDuringALaunchFailsThatGpu) {
  auto gpus = FakeCudaGpus(2);
  gpus[1].launch_error = 214;
  auto r = Check(gpus, kSmallBurn);
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.err,
              HasSubstr("GPU 1 (GPU-00000000-0000-0000-0000-000000000001) failed burn: "
                        "cuLaunchKernel lh_gpucheck_fma: uncorrectable ECC error encountered "
                        "(CUDA_ERROR_ECC_UNCORRECTABLE, 214)"));
}

TEST_F(LhGpucheckTest, QuickCheckOfOneGpuAsTheAgentCallsIt) {
  // The agent hands the GPU in CUDA_VISIBLE_DEVICES: the fake's GPU 1 is CUDA ordinal 0, and
  // its UUID says which it is.
  auto gpus = FakeCudaGpus(2);
  auto r = Check(gpus,
                 {"--gpus", "0", "--quick", "--burn-launches", "2", "--burn-threads", "1024",
                  "--burn-rounds", "8"},
                 /*visible=*/"1");
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  // 1 % of 256 MiB, three patterns.
  EXPECT_TRUE(StartsWith(lines[0],
                         "GPU 0 GPU-00000000-0000-0000-0000-000000000001 NVIDIA H200: "
                         "PASS  memory 2.6 MiB x 3 patterns, 0 errors"))
      << lines[0];

  gpus[1].stuck_bits.push_back({64, 0, 1});
  auto bad = Check(
      gpus, {"--gpus", "0", "--quick", "--burn-launches", "1", "--burn-threads", "1024"}, "1");
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("GPU 0 (GPU-00000000-0000-0000-0000-000000000001) failed memory"));
}

TEST_F(LhGpucheckTest, BadFlagsExitTwoAndNameTheFlag) {
  auto r = Check(FakeCudaGpus(2), {"--gpus", "5"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--gpus: GPU 5 is not visible: the driver lists 2 GPUs (0-1)"));
  auto twice = Check(FakeCudaGpus(2), {"--gpus", "1,0,1"});
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
  EXPECT_THAT(twice.err, HasSubstr("--gpus: GPU 1 is given twice"));
  auto patterns = Check(FakeCudaGpus(2), {"--patterns", "zeros,checkerboard"});
  EXPECT_EQ(patterns.exit_code, 2);
  EXPECT_THAT(patterns.err, HasSubstr("unknown pattern 'checkerboard'"));
  auto fraction = Check(FakeCudaGpus(2), {"--memory-fraction", "2"});
  EXPECT_EQ(fraction.exit_code, 2);
  EXPECT_THAT(fraction.err, HasSubstr("--memory-fraction"));
}

}  // namespace
}  // namespace longhaul
