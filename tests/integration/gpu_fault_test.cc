// GPU health with real daemons and the fake NVML (--nvml-library; docs/gpus.md): a hardware
// XID on the GPU a stage holds ends its attempt as gpu_fault, the retry runs on the other GPU,
// the GPU stays out of service (agents, /metrics, a notification) until an operator brings it
// back; an application XID leaves the GPU in service; a drained GPU is offered nothing new.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/strings.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"
#include "tests/stages/fake_cuda/fake_cuda_state.h"

namespace longhaul::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

class GpuFaultTest : public ClusterTest {
 protected:
  void SetUp() override {
    StartOnFakeGpus({"--notify-command", "sh -c cat>>" + dir_.Join("notices.jsonl")});
  }
  // A longhauld with `coordinator_flags` and an agent sampling two fake GPUs every 100 ms
  // (with `agent_flags` too).
  void StartOnFakeGpus(std::vector<std::string> coordinator_flags,
                       const std::vector<std::string>& agent_flags = {}) {
    state_ = dir_.Join("nvml.json");
    WriteFakeNvmlState(state_, gpus_);
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state_.c_str(), 1);  // the agent inherits it
    ClusterOptions o;
    o.gpus = 2;
    o.agent_flags = {"--nvml-library", LONGHAUL_FAKE_NVML, "--gpu-sample", "100ms"};
    o.agent_flags.insert(o.agent_flags.end(), agent_flags.begin(), agent_flags.end());
    o.coordinator_flags = std::move(coordinator_flags);
    StartCluster(o);
  }
  void TearDown() override {
    ClusterTest::TearDown();
    ::unsetenv("LONGHAUL_FAKE_NVML_STATE");
  }

  // A stage on one GPU that writes the GPU it got to OUT/cvd and then waits for `release`
  // (attempt 1) or ends at once (later attempts).
  std::string Workflow() {
    return "name: gpu-fault\n"
           "stages:\n"
           "  train:\n"
           "    run: " +
           YamlList({"sh", "-c",
                     "echo \"$CUDA_VISIBLE_DEVICES\" > \"$LONGHAUL_OUTPUT_DIR/cvd\"; "
                     "if [ \"$LONGHAUL_ATTEMPT\" = 1 ]; then while [ ! -e " +
                         dir_.Join("release") + " ]; do sleep 0.05; done; fi"}) +
           "\n"
           "    resources: {cpus: 0.5, gpus: 1}\n";
  }

  // Waits for `run` to end and checks that it succeeded with its one stage's first attempt
  // ended by a GPU fault and its second one the one that counted.
  Result<v1::Run> RetriedOnceAfterAGpuFault(int64_t run) {
    Result<v1::Run> done = cluster().WaitForRunEnd(run, 60'000);
    if (!done.ok()) return done;
    EXPECT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
    if (done->stages_size() == 0 || done->stages(0).attempts_size() != 2) {
      return absl::FailedPreconditionError(StrCat("expected 2 attempts: ", done->DebugString()));
    }
    EXPECT_THAT(done->stages(0).attempts(0).reason(), HasSubstr("gpu_fault"));
    return done;
  }

  // The GPU entry `index` of the only agent.
  v1::GpuInfo Gpu(int index) {
    auto agents = cluster().ListAgents();
    if (!agents.ok() || agents->empty() || agents->front().gpus_size() <= index) return {};
    return agents->front().gpus(index);
  }

  // The GPU the stage's current attempt holds, once it runs.
  int HeldGpu(int64_t run_id) {
    int held = -1;
    WaitFor(
        [&] {
          auto agents = cluster().ListAgents();
          if (!agents.ok() || agents->empty()) return false;
          for (const v1::GpuInfo& g : agents->front().gpus()) {
            if (g.run_id() == run_id) held = g.index();
          }
          return held >= 0;
        },
        20'000);
    return held;
  }

  TempDir dir_;
  std::string state_;
  std::vector<FakeGpuState> gpus_ = FakeGpus(2);
};

TEST_F(GpuFaultTest, AHardwareXidQuarantinesTheGpuAndTheRetryRunsOnTheOther) {
  Result<int64_t> run = cluster().Submit(Workflow());
  ASSERT_TRUE(run.ok()) << run.status();
  int bad = HeldGpu(*run);
  ASSERT_GE(bad, 0) << cluster().Logs();
  // An application XID first (13: a graphics engine exception): the attempt's, not the GPU's.
  gpus_[bad].xids = {13};
  WriteFakeNvmlState(state_, gpus_);
  ASSERT_TRUE(
      WaitFor([&] { return cluster().Logs(1 << 20).find("XID 13") != std::string::npos; }, 20'000))
      << cluster().Logs();
  EXPECT_EQ(Gpu(bad).health(), "ok");
  // Then a hardware one (79: fallen off the bus).
  gpus_[bad].xids = {13, 79};
  WriteFakeNvmlState(state_, gpus_);

  Result<v1::Run> done = RetriedOnceAfterAGpuFault(*run);
  ASSERT_TRUE(done.ok()) << done.status() << cluster().Logs();
  const v1::Stage& st = done->stages(0);
  EXPECT_THAT(st.attempts(0).reason(), HasSubstr("XID 79"));
  std::string cvd2 = std::string(StripWhitespace(ReadTextFile(
      st.attempts(1).output_dir().empty() ? "" : st.attempts(1).output_dir() + "/cvd")));
  EXPECT_EQ(cvd2, std::to_string(1 - bad)) << "the retry avoids the quarantined GPU";
  // What the stage's GPUs did, from the samples of both attempts: stored, summed, shown.
  ASSERT_TRUE(st.has_gpu_usage()) << cluster().Logs();
  EXPECT_GT(st.gpu_usage().sampled_gpu_hours(), 0);
  EXPECT_GT(st.gpu_usage().energy_kwh(), 0);  // the fake draws 75 W
  EXPECT_EQ(st.gpu_usage().mean_sm_util_pct(), 0);
  EXPECT_NEAR(st.gpu_usage().idle_gpu_hours(), st.gpu_usage().sampled_gpu_hours(), 1e-9);
  EXPECT_TRUE(done->has_gpu_usage());
  CommandResult show = cluster().Cli({"show", std::to_string(*run)});
  EXPECT_THAT(show.out, HasSubstr("gpu use:")) << show.out << show.err;
  EXPECT_THAT(show.out, HasSubstr("IDLE GPU-H")) << show.out;

  v1::GpuInfo g = Gpu(bad);
  EXPECT_EQ(g.health(), "quarantined");
  EXPECT_THAT(g.health_reason(), HasSubstr("XID 79"));
  EXPECT_EQ(g.uuid(), gpus_[bad].uuid);
  CommandResult agents = cluster().Cli({"agents"});
  EXPECT_THAT(agents.out, HasSubstr("quarantined")) << agents.out << agents.err;
  // The notification names the node, the GPU, the XID and the attempt.
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadTextFile(dir_.Join("notices.jsonl")).find("gpu_fault") != std::string::npos;
      },
      20'000))
      << cluster().Logs();
  std::string notices = ReadTextFile(dir_.Join("notices.jsonl"));
  EXPECT_THAT(notices, HasSubstr("XID 79"));
  EXPECT_THAT(notices, HasSubstr(gpus_[bad].uuid));

  // Out of service survives a restart of longhauld (a row of the store).
  ASSERT_TRUE(cluster().RestartCoordinator().ok());
  ASSERT_TRUE(cluster().WaitAgentConnected(0).ok());
  EXPECT_EQ(Gpu(bad).health(), "quarantined");

  // An operator brings it back; the trail says who.
  CommandResult undrain = cluster().Cli(
      {"gpu", "undrain", StrCat(cluster().AgentId(0), ":", bad), "--reason", "reseated"});
  ASSERT_EQ(undrain.exit_code, 0) << undrain.out << undrain.err;
  EXPECT_THAT(undrain.out, HasSubstr(": ok"));
  EXPECT_EQ(Gpu(bad).health(), "ok");
  CommandResult audit = cluster().Cli({"audit"});
  EXPECT_THAT(audit.out, HasSubstr("DrainGpu")) << audit.out << audit.err;
}

TEST_F(GpuFaultTest, ADrainedGpuIsOfferedNothingNew) {
  CommandResult drain =
      cluster().Cli({"gpu", "drain", StrCat(cluster().AgentId(0), ":0"), "--reason", "fan noise"});
  ASSERT_EQ(drain.exit_code, 0) << drain.out << drain.err;
  EXPECT_THAT(drain.out, HasSubstr("drained"));
  ::close(::open(dir_.Join("release").c_str(), O_CREAT | O_WRONLY, 0644));
  Result<int64_t> run = cluster().Submit(Workflow());
  ASSERT_TRUE(run.ok()) << run.status();
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
  std::string cvd =
      std::string(StripWhitespace(ReadTextFile(done->stages(0).attempts(0).output_dir() + "/cvd")));
  EXPECT_EQ(cvd, "1");
  v1::GpuInfo g = Gpu(0);
  EXPECT_EQ(g.health(), "drained");
  EXPECT_THAT(g.health_reason(), HasSubstr("fan noise"));
  CommandResult bad = cluster().Cli({"gpu", "drain", StrCat(cluster().AgentId(0), ":7")});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("no GPU 7"));
}

// A stage holding an idle GPU for its gpu_idle window is noticed and, with on_gpu_idle: fail,
// failed as gpu_idle (the retry policy then acts); one whose GPU works is left alone.
TEST_F(GpuFaultTest, AnIdleGpuFailsTheStageThatAsksForIt) {
  gpus_[0].sm_util = 0;
  gpus_[1].sm_util = 0;
  WriteFakeNvmlState(state_, gpus_);
  std::string wf =
      "name: gpu-idle\n"
      "stages:\n"
      "  hung:\n"
      "    run: " +
      YamlList({"sleep", "60"}) +
      "\n"
      "    resources: {cpus: 0.5, gpus: 1}\n"
      "    gpu_idle: 1s\n"
      "    on_gpu_idle: fail\n"
      "    retry: {limit: 0}\n";
  Result<int64_t> run = cluster().Submit(wf);
  ASSERT_TRUE(run.ok()) << run.status();
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status() << cluster().Logs();
  EXPECT_EQ(done->status(), v1::RUN_FAILED);
  ASSERT_EQ(done->stages(0).attempts_size(), 1);
  EXPECT_THAT(done->stages(0).attempts(0).reason(), HasSubstr("gpu idle for 1s"));
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadTextFile(dir_.Join("notices.jsonl")).find("stage_gpu_idle") != std::string::npos;
      },
      20'000))
      << cluster().Logs();

  // The same stage on a busy GPU runs to its end.
  gpus_[0].sm_util = 90;
  gpus_[1].sm_util = 90;
  WriteFakeNvmlState(state_, gpus_);
  std::string busy =
      "name: gpu-busy\n"
      "stages:\n"
      "  train:\n"
      "    run: " +
      YamlList({"sleep", "2"}) +
      "\n"
      "    resources: {cpus: 0.5, gpus: 1}\n"
      "    gpu_idle: 1s\n"
      "    on_gpu_idle: fail\n";
  Result<int64_t> run2 = cluster().Submit(busy);
  ASSERT_TRUE(run2.ok()) << run2.status();
  Result<v1::Run> done2 = cluster().WaitForRunEnd(*run2, 60'000);
  ASSERT_TRUE(done2.ok()) << done2.status();
  EXPECT_EQ(done2->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
}

// A GPU whose memory used nears its total: the stage's last message says so (level warn), for
// `show`, `watch` and the UI, and longhauld's log keeps its line. `compare` then sets that
// run's GPUs beside those of a run that held none.
TEST_F(GpuFaultTest, MemoryNearTheLimitBecomesTheStagesMessage) {
  Result<int64_t> run = cluster().Submit(Workflow());
  ASSERT_TRUE(run.ok()) << run.status();
  int held = HeldGpu(*run);
  ASSERT_GE(held, 0) << cluster().Logs();
  gpus_[held].mem_used = uint64_t{140'000} << 20;  // of 143771 MiB: 97 %
  WriteFakeNvmlState(state_, gpus_);
  const std::string text = StrCat("GPU ", held,
                                  " memory at 97% (140000 of 143771 MiB): near the limit, a CUDA "
                                  "OOM may follow");
  v1::Stage stage;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = cluster().GetRun(*run);
        if (!r.ok() || r->stages_size() == 0) return false;
        stage = r->stages(0);
        return !stage.last_message().empty();
      },
      20'000))
      << cluster().Logs();
  EXPECT_EQ(stage.last_message(), text);
  EXPECT_EQ(stage.last_message_level(), "warn");
  EXPECT_THAT(cluster().Logs(1 << 20),
              HasSubstr(StrCat("stage train attempt 1 on ", cluster().AgentId(0), ": ", text)));
  CommandResult show = cluster().Cli({"show", std::to_string(*run)});
  EXPECT_THAT(show.out, HasSubstr("\nwarnings:\n  train: " + text + "\n")) << show.out << show.err;
  show = cluster().Cli({"show", std::to_string(*run), "train"});
  EXPECT_THAT(show.out, ContainsRegex("\n  message: +warn: GPU")) << show.out << show.err;
  EXPECT_THAT(show.out, HasSubstr("warn: " + text + "\n")) << show.out;
  // A few more samples, so that the attempt's series has some time in it.
  int64_t seen_ms = Gpu(held).reading().ts_ms();
  ASSERT_TRUE(WaitFor([&] { return Gpu(held).reading().ts_ms() >= seen_ms + 500; }, 20'000))
      << cluster().Logs();

  ::close(::open(dir_.Join("release").c_str(), O_CREAT | O_WRONLY, 0644));
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->status(), v1::RUN_SUCCEEDED) << cluster().Logs();
  EXPECT_EQ(done->stages(0).last_message(), text) << "kept once the stage ended";
  ASSERT_TRUE(done->stages(0).has_gpu_usage()) << cluster().Logs();
  EXPECT_EQ(done->stages(0).gpu_usage().peak_mem_used_bytes(), int64_t{140'000} << 20);

  Result<int64_t> cpu = cluster().Submit("name: cpu-only\nstages:\n  prep:\n    run: [true]\n");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  ASSERT_TRUE(cluster().WaitForRunEnd(*cpu, 60'000).ok());
  CommandResult compare = cluster().Cli({"compare", std::to_string(*run), std::to_string(*cpu)});
  ASSERT_EQ(compare.exit_code, 0) << compare.out << compare.err;
  EXPECT_THAT(compare.out, HasSubstr("\ngpus:\nGPUS")) << compare.out;
  EXPECT_THAT(compare.out, HasSubstr("\ngpus by stage:\n")) << compare.out;
  EXPECT_THAT(compare.out, HasSubstr("136.7 GiB of 140.4 GiB")) << compare.out;
  EXPECT_THAT(compare.out, Not(HasSubstr("prep  mean SM"))) << compare.out;
}

// The repair loop closed without a person: a quarantined GPU's agent is asked for a pre-flight
// after the cool-down (lh-gpucheck on the fake CUDA driver), and two passes bring it back.
class GpuReturnTest : public GpuFaultTest {
 protected:
  void SetUp() override {
    std::string cuda = dir_.Join("cuda.json");
    WriteFakeCudaState(cuda, FakeCudaGpus(2));
    ::setenv("LONGHAUL_FAKE_CUDA_STATE", cuda.c_str(), 1);
    StartOnFakeGpus({"--gpu-cooldown", "300ms", "--gpu-return-passes", "2", "--notify-command",
                     "sh -c cat>>" + dir_.Join("notices.jsonl")},
                    // The fake runs the kernel on the CPU: a small burn.
                    {"--gpu-check", StrCat("lh-gpucheck --quick --no-p2p --burn-launches 2 "
                                           "--burn-threads 1024 --burn-rounds 8 --cuda-library ",
                                           LONGHAUL_FAKE_CUDA)});
  }
  void TearDown() override {
    GpuFaultTest::TearDown();
    ::unsetenv("LONGHAUL_FAKE_CUDA_STATE");
  }
};

TEST_F(GpuReturnTest, AQuarantinedGpuReturnsAfterPassingPreflights) {
  gpus_[1].xids = {48};  // a double-bit ECC error: hardware
  WriteFakeNvmlState(state_, gpus_);
  ASSERT_TRUE(WaitFor([&] { return Gpu(1).health() == "quarantined"; }, 20'000))
      << cluster().Logs();
  EXPECT_THAT(Gpu(1).health_reason(), HasSubstr("XID 48"));
  ASSERT_TRUE(WaitFor([&] { return Gpu(1).health() == "ok"; }, 30'000)) << cluster().Logs();
  EXPECT_THAT(cluster().Logs(1 << 20), HasSubstr("back in service after its pre-flights"));
  CommandResult audit = cluster().Cli({"audit"});
  EXPECT_THAT(audit.out, HasSubstr("ReturnGpu")) << audit.out << audit.err;
  EXPECT_EQ(Gpu(0).health(), "ok");
}

TEST_F(GpuReturnTest, AGpuThatFailsItsPreflightStaysOut) {
  std::string cuda = dir_.Join("cuda.json");
  std::vector<FakeCudaGpu> bad = FakeCudaGpus(2);
  bad[1].wrong_kernel_result = true;
  WriteFakeCudaState(cuda, bad);
  gpus_[1].xids = {79};
  WriteFakeNvmlState(state_, gpus_);
  ASSERT_TRUE(WaitFor([&] { return Gpu(1).health() == "quarantined"; }, 20'000))
      << cluster().Logs();
  // Two failed pre-flights, and still out.
  ASSERT_TRUE(WaitFor(
      [&] {
        std::string logs = cluster().Logs(1 << 20);
        size_t first = logs.find("GPU 1: pre-flight failed");
        return first != std::string::npos &&
               logs.find("GPU 1: pre-flight failed", first + 1) != std::string::npos;
      },
      30'000))
      << cluster().Logs();
  EXPECT_EQ(Gpu(1).health(), "quarantined");
}

// `preflight: true`: each attempt runs the agent's GPU check (lh-gpucheck on the fake driver)
// on its GPUs before the stage. GPU 0 fails its burn: the first attempt ends as gpu_fault
// without running the stage, GPU 0 is quarantined naming the check, and the retry passes its
// pre-flight on GPU 1 and runs the stage there.
TEST_F(GpuReturnTest, APreflightStageStartsOnlyOnAGpuThatPasses) {
  std::string cuda = dir_.Join("cuda.json");
  std::vector<FakeCudaGpu> bad = FakeCudaGpus(2);
  bad[0].wrong_kernel_result = true;
  WriteFakeCudaState(cuda, bad);
  Result<int64_t> run = cluster().Submit(
      "name: preflight\n"
      "stages:\n"
      "  train:\n"
      "    run: " +
      YamlList({"sh", "-c", "echo \"$CUDA_VISIBLE_DEVICES\" > \"$LONGHAUL_OUTPUT_DIR/cvd\""}) +
      "\n"
      "    resources: {cpus: 0.5, gpus: 1}\n"
      "    preflight: true\n");
  ASSERT_TRUE(run.ok()) << run.status();
  Result<v1::Run> done = RetriedOnceAfterAGpuFault(*run);
  ASSERT_TRUE(done.ok()) << done.status() << cluster().Logs();
  const v1::Stage& st = done->stages(0);
  EXPECT_THAT(st.attempts(0).reason(), HasSubstr("lh-gpucheck: burn"));
  EXPECT_EQ(ReadTextFile(st.attempts(0).output_dir() + "/cvd"), "") << "the stage ran on GPU 0";
  EXPECT_EQ(StripWhitespace(ReadTextFile(st.attempts(1).output_dir() + "/cvd")), "1");
  v1::GpuInfo g = Gpu(0);
  EXPECT_EQ(g.health(), "quarantined");
  EXPECT_THAT(g.health_reason(), HasSubstr("lh-gpucheck: burn"));
  EXPECT_THAT(g.health_reason(), HasSubstr("stage train attempt 1"));
  EXPECT_EQ(Gpu(1).health(), "ok");
  ASSERT_TRUE(WaitFor(
      [&] {
        return ReadTextFile(dir_.Join("notices.jsonl")).find("gpu_fault") != std::string::npos;
      },
      20'000))
      << cluster().Logs();
}

// --gpu-node-fault-limit 1: one quarantined GPU makes the node suspect, so the retry of the
// attempt the fault ended avoids the agent; with no other agent it waits and says why.
class GpuNodeFaultTest : public GpuFaultTest {
 protected:
  void SetUp() override { StartOnFakeGpus({"--gpu-node-fault-limit", "1"}); }
};

TEST_F(GpuNodeFaultTest, PastTheLimitTheRetryAvoidsTheNode) {
  Result<int64_t> run = cluster().Submit(Workflow());
  ASSERT_TRUE(run.ok()) << run.status();
  int bad = HeldGpu(*run);
  ASSERT_GE(bad, 0) << cluster().Logs();
  gpus_[bad].xids = {79};
  WriteFakeNvmlState(state_, gpus_);
  std::string reason;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = cluster().GetRun(*run);
        if (!r.ok() || r->stages_size() == 0) return false;
        reason = r->stages(0).reason();
        return reason.find("its node failed") != std::string::npos;
      },
      30'000))
      << reason << cluster().Logs();
  EXPECT_THAT(reason, HasSubstr("not on " + cluster().AgentId(0)));
  EXPECT_EQ(Gpu(1 - bad).health(), "ok") << "the other GPU is free, and still not used";
  EXPECT_THAT(cluster().Logs(1 << 20), HasSubstr("avoids it from now on"));
}

// A service whose GPU sits idle while its consumer runs has stopped serving: with
// --gpu-service-hang 1s and on_gpu_idle: fail its attempt is stopped as gpu_idle, the reason
// naming the consumer. The fake GPUs are at 0 % all along.
class GpuServiceHangTest : public GpuFaultTest {
 protected:
  void SetUp() override { StartOnFakeGpus({"--gpu-service-hang", "1s"}); }
};

TEST_F(GpuServiceHangTest, AServiceIdleWhileItsConsumerRunsIsStoppedAsHung) {
  std::string release = dir_.Join("release");
  Result<int64_t> run = cluster().Submit(
      "name: hang\n"
      "stages:\n"
      "  server:\n"
      "    kind: service\n"
      "    run: " +
      YamlList({"sh", "-c",
                "echo '{\"ready\": {}}' >> \"$LONGHAUL_EVENTS\"; while :; do sleep 0.05; done"}) +
      "\n"
      "    resources: {cpus: 0.5, gpus: 1}\n"
      "    on_gpu_idle: fail\n"
      "    retry: {limit: 0}\n"
      "  client:\n"
      "    needs: [server]\n"
      "    run: " +
      YamlList({"sh", "-c", "while [ ! -e " + release + " ]; do sleep 0.05; done"}) +
      "\n"
      "    resources: {cpus: 0.5}\n");
  ASSERT_TRUE(run.ok()) << run.status();
  std::string reason;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = cluster().GetRun(*run);
        if (!r.ok()) return false;
        for (const v1::Stage& st : r->stages()) {
          if (st.name() == "server" && st.attempts_size() > 0) reason = st.attempts(0).reason();
        }
        return reason.find("gpu_idle") != std::string::npos;
      },
      30'000))
      << reason << cluster().Logs();
  EXPECT_THAT(reason, HasSubstr("gpu idle for 1s while its consumer client runs: hung"));
  WriteTextFile(release, "");
  Result<v1::Run> done = cluster().WaitForRunEnd(*run, 60'000);
  ASSERT_TRUE(done.ok()) << done.status();
}

}  // namespace
}  // namespace longhaul::testing
