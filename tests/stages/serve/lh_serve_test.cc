// lh-serve as a process, supervising lh-fake-engine through a profile written by the test
// (which is also how a user adds an engine: no rebuild).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <regex>

#include "core/event.h"
#include "core/net/http_client.h"
#include "core/strings.h"
#include "stages/common/endpoint.h"
#include "tests/stages/common/stage_events.h"
#include "tests/testing/test_util.h"

namespace longhaul {
namespace {

using testing::BinPath;
using testing::ReadTextFile;
using testing::Subprocess;
using testing::TempDir;
using testing::WaitFor;
using testing::WriteTextFile;

class LhServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir(dir_.Join("profiles").c_str(), 0755), 0);
    WriteTextFile(dir_.Join("profiles/fake.yaml"),
                  StrCat(R"(
name: fake
argv: [")",
                         BinPath("lh-fake-engine"), R"(", --host, "${host}", --port, "${port}",
       --model-name, "${model}", "${extra_args...}"]
optional:
  - when: drafter
    argv: [--drafter, "${drafter}"]
defaults:
  model: fake-model
  extra_args: ""
health: {path: /health, interval: 100ms, serving_interval: 200ms, serving_failures: 2}
probe: {api: chat, max_tokens: 1}
fatal_log_patterns: ['CUDA out of memory', '^Traceback \(most recent call last\)']
timeouts: {load: 20s, probe: 1500ms, stop_grace: 1s}
)"));
  }

  void Serve(std::vector<std::string> args) {
    std::vector<std::string> argv = {BinPath("lh-serve"), "--profile",           "fake",
                                     "--profiles-dir",    dir_.Join("profiles"), "--log-dir",
                                     dir_.path()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto p = Subprocess::Start(argv, {{"LONGHAUL_EVENTS", dir_.Join("events.jsonl")}},
                               dir_.Join("serve.log"));
    ASSERT_TRUE(p.ok()) << p.status();
    serve_ = std::move(*p);
  }

  std::string events() const { return dir_.Join("events.jsonl"); }
  std::vector<StageEvent> Events() const { return testing::ReadEvents(events()); }
  bool Ready() const { return testing::HasReadyEvent(events()); }
  std::string Output(const std::string& name) const { return testing::OutputValue(events(), name); }
  // The pid lh-serve logged for the engine ("... started, pid N").
  pid_t EnginePid() const {
    std::smatch m;
    std::string log = ReadTextFile(dir_.Join("serve.log"));
    if (std::regex_search(log, m, std::regex("started, pid ([0-9]+)"))) return std::stoi(m[1]);
    return 0;
  }
  // Waits for lh-serve to exit; its exit code, or -1.
  int ExitCode(int64_t timeout_ms) {
    auto st = serve_->Wait(timeout_ms);
    if (!st) return -1;
    return WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
  }
  std::string Log() const { return ReadTextFile(dir_.Join("serve.log")); }

  TempDir dir_;
  std::unique_ptr<Subprocess> serve_;
};

TEST_F(LhServeTest, WaitsOutASlowLoadThenReportsEndpointAndStopsOnSigterm) {
  auto start = std::chrono::steady_clock::now();
  Serve({"--set", "extra_args=--load-delay-s 1"});
  ASSERT_TRUE(WaitFor([&] { return Ready(); }, 20'000)) << Log();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  std::string endpoint = Output("endpoint");
  ASSERT_FALSE(endpoint.empty());
  EXPECT_EQ(Output("model"), "fake-model");
  double load_s = -1;
  for (const auto& e : Events()) {
    if (e.type == EventType::kMetric && e.name == "load_seconds") load_s = e.value;
  }
  EXPECT_GE(load_s, 1.0);
  // The endpoint really serves.
  net::HttpRequest req;
  req.target = "/health";
  auto res = net::HttpFetch(*stages::ParseEndpoint(endpoint), req);
  ASSERT_TRUE(res.ok()) << res.status();
  EXPECT_EQ(res->status(), 200);
  // Output went to the log files and was echoed.
  EXPECT_NE(ReadTextFile(dir_.Join("engine.stdout.log")).find("loading weights"),
            std::string::npos);
  EXPECT_NE(Log().find("loading weights"), std::string::npos);

  pid_t engine = EnginePid();
  ASSERT_GT(engine, 0);
  serve_->Signal(SIGTERM);
  EXPECT_EQ(ExitCode(10'000), 0) << Log();
  EXPECT_FALSE(testing::ProcessAlive(engine));
}

TEST_F(LhServeTest, HealthyButHungEngineIsAFailure) {
  Serve({"--set", "extra_args=--hang"});
  EXPECT_EQ(ExitCode(20'000), 1);
  EXPECT_NE(Log().find("healthy but no generation in 1.5 s"), std::string::npos) << Log();
  EXPECT_FALSE(Ready());
  pid_t engine = EnginePid();
  ASSERT_GT(engine, 0);
  EXPECT_FALSE(testing::ProcessAlive(engine));
}

// Fast means during the load: the engine would load for 600 s, and lh-serve has ended with the
// fatal line well before (the wait's deadline is a fifth of that), however loaded the machine.
TEST_F(LhServeTest, FatalLogLineFailsFast) {
  Serve({"--set",
         "extra_args=--load-delay-s 600 --fatal-log-line 'RuntimeError: CUDA out of memory. "
         "Tried to allocate 2.00 GiB'"});
  EXPECT_EQ(ExitCode(120'000), 1);
  EXPECT_NE(Log().find("fatal log line matched 'CUDA out of memory': RuntimeError: CUDA out of "
                       "memory. Tried to allocate 2.00 GiB"),
            std::string::npos)
      << Log();
  std::string events = ReadTextFile(dir_.Join("events.jsonl"));
  EXPECT_NE(events.find(R"("level":"error")"), std::string::npos);
}

TEST_F(LhServeTest, EarlyExitDuringLoadIsReported) {
  Serve({"--set", "extra_args=--exit-at-start 7"});
  EXPECT_EQ(ExitCode(20'000), 1);
  EXPECT_NE(Log().find("engine exited with code 7 during load (last stderr line: ValueError: "
                       "cannot load model fake-model)"),
            std::string::npos)
      << Log();
}

TEST_F(LhServeTest, EngineCrashWhileServingEndsTheStage) {
  Serve({"--set", "extra_args=--crash-after 1"});  // the probe is request 1
  ASSERT_TRUE(WaitFor([&] { return Ready(); }, 20'000)) << Log();
  net::HttpRequest req;
  req.method = "POST";
  req.target = "/v1/completions";
  req.body = R"({"model":"fake-model","prompt":"hi","max_tokens":2})";
  (void)net::HttpFetch(*stages::ParseEndpoint(Output("endpoint")), req);
  EXPECT_EQ(ExitCode(20'000), 1);
  EXPECT_NE(Log().find("engine exited with code 3 while serving"), std::string::npos) << Log();
}

TEST_F(LhServeTest, StopReachesTheWholeProcessGroupEvenIgnoringSigterm) {
  Serve({"--set", "extra_args=--spawn-child --ignore-sigterm"});
  ASSERT_TRUE(WaitFor([&] { return Ready(); }, 20'000)) << Log();
  std::smatch m;
  std::string log = Log();
  ASSERT_TRUE(std::regex_search(log, m, std::regex("child pid ([0-9]+)"))) << log;
  pid_t child = std::stoi(m[1]);
  pid_t engine = EnginePid();
  ASSERT_TRUE(testing::ProcessAlive(child));
  auto start = std::chrono::steady_clock::now();
  serve_->Signal(SIGTERM);
  EXPECT_EQ(ExitCode(20'000), 0) << Log();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));  // the grace
  EXPECT_FALSE(testing::ProcessAlive(engine));
  EXPECT_TRUE(WaitFor([&] { return !testing::ProcessAlive(child); }, 5'000));
  EXPECT_NE(Log().find("SIGKILL"), std::string::npos);
}

TEST_F(LhServeTest, EngineDiesWithItsSupervisor) {
  Serve({});
  ASSERT_TRUE(WaitFor([&] { return Ready(); }, 20'000)) << Log();
  pid_t engine = EnginePid();
  serve_->Signal(SIGKILL);
  ExitCode(5'000);
  EXPECT_TRUE(WaitFor([&] { return !testing::ProcessAlive(engine); }, 5'000));
}

TEST_F(LhServeTest, DryRunRendersAndBadInputIsNamed) {
  ::mkdir(dir_.Join("drafter").c_str(), 0755);
  auto r = testing::RunCommand(
      {BinPath("lh-serve"), "--profile", "fake", "--dry-run", "--drafter", dir_.Join("drafter"),
       "--model", "m1", "--set", "extra_args=--x 'a b'", "--set", "port=4321"},
      {{"LONGHAUL_ENGINE_PROFILES", "/nonexistent:" + dir_.Join("profiles")}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("argv: a b\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("argv: --drafter\nargv: " + dir_.Join("drafter")), std::string::npos);
  EXPECT_NE(r.out.find("endpoint: http://127.0.0.1:4321\nmodel: m1"), std::string::npos);

  r = testing::RunCommand(
      {BinPath("lh-serve"), "--profile", "nope", "--profiles-dir", dir_.Join("profiles")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no engine profile 'nope'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("available: fake"), std::string::npos) << r.err;
  r = testing::RunCommand({BinPath("lh-serve"), "--profile", "fake", "--profiles-dir",
                           dir_.Join("profiles"), "--set", "tp=8"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--set tp: profile 'fake'"), std::string::npos) << r.err;
  r = testing::RunCommand(
      {BinPath("lh-serve"), "--profile", "vllm", "--dry-run", "--model", "/models/t"});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the repository's profiles are found built in
  EXPECT_NE(r.out.find("argv: vllm\nargv: serve\nargv: /models/t"), std::string::npos) << r.out;
}

TEST_F(LhServeTest, OnAnAgentWithAnAdvertisedAddressItBindsAndAdvertisesThatAddress) {
  auto serve = [&](const std::string& node, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {BinPath("lh-serve"),   "--profile", "fake",  "--profiles-dir",
                                     dir_.Join("profiles"), "--dry-run", "--set", "port=4321"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return testing::RunCommand(argv, {{"LONGHAUL_ADVERTISE_HOST", node}});
  };
  // An IP address: bound and advertised.
  auto r = serve("127.0.0.7");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("argv: --host\nargv: 127.0.0.7\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("endpoint: http://127.0.0.7:4321\n"), std::string::npos) << r.out;
  // A name: every address is bound (a name cannot be), the name is advertised.
  r = serve("gpu7.example");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("argv: --host\nargv: 0.0.0.0\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("endpoint: http://gpu7.example:4321\n"), std::string::npos) << r.out;
  // --host wins, and the endpoint never names an address the engine does not listen on.
  r = serve("127.0.0.7", {"--host", "127.0.0.1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("endpoint: http://127.0.0.1:4321\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace longhaul
