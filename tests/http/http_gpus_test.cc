// The GPU endpoints of longhauld's HTTP API against a real cluster whose agent reads two fake
// GPUs through the fake NVML (--nvml-library): a stage's telemetry (GET .../stages/S/gpus),
// the agents' GPU states, and drain/undrain (POST /api/v1/agents/A/gpus/I/drain): admin only,
// in the audit trail exactly as `longhaul gpu drain` over gRPC puts it there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/agent/fake_nvml/fake_nvml_state.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr int64_t kMemUsed = int64_t{40} << 30;

// One GPU for about 1.5 s (the fake NVML sampled every 100 ms meanwhile), then a stage that
// holds none.
constexpr char kGpuWorkflow[] =
    "name: gpus\n"
    "stages:\n"
    "  train:\n"
    "    resources: {cpus: 0.5, gpus: 1}\n"
    "    run: [lh-testjob, --sleep, '1.5']\n"
    "  report:\n"
    "    needs: [train]\n"
    "    run: [lh-testjob, --print, done]\n";

class HttpGpusTest : public ClusterTest {
 protected:
  void SetUp() override {
    gpus_ = FakeGpus(2);
    for (FakeGpuState& g : gpus_) {
      g.sm_util = 80;
      g.mem_used = kMemUsed;
      g.power_mw = 300'000;
      g.temp_c = 55;
    }
    state_ = dir_.Join("nvml.json");
    WriteFakeNvmlState(state_, gpus_);
    ::setenv("LONGHAUL_FAKE_NVML_STATE", state_.c_str(), 1);  // the agent inherits it
    tokens_ = MakeTokens(dir_, {{"viewer", "vera"}, {"operator", "olga"}, {"admin", "ada"}});
    ClusterOptions o;
    o.gpus = 2;
    o.agent_flags = {"--nvml-library", LONGHAUL_FAKE_NVML, "--gpu-sample", "100ms"};
    o.coordinator_flags = {"--tokens", tokens_.file};
    o.client_token = tokens_.by_name["ada"];
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty());
  }
  void TearDown() override {
    ClusterTest::TearDown();
    ::unsetenv("LONGHAUL_FAKE_NVML_STATE");
  }

  Result<HttpResult> Call(const std::string& method, const std::string& target,
                          const std::string& who, const std::string& body = "") {
    return HttpRequest(addr_, method, target, body,
                       {{"Authorization", "Bearer " + tokens_.by_name[who]}});
  }
  json Body(const Result<HttpResult>& r, int status) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return json();
    EXPECT_EQ(r->status, status) << r->body;
    return json::parse(r->body, nullptr, false);
  }
  // GPU `index` of agent n0 as GET /api/v1/agents prints it.
  json Gpu(int index) {
    json agents = Body(Call("GET", "/api/v1/agents", "vera"), 200)["agents"];
    for (const json& g : agents[0]["gpus"]) {
      if (g["index"] == index) return g;
    }
    return json();
  }

  TempDir dir_;
  std::vector<FakeGpuState> gpus_;
  std::string state_;
  Tokens tokens_;
  std::string addr_;
};

TEST_F(HttpGpusTest, AStagesTelemetryPerAttemptAndGpuWithItsSummary) {
  json submitted =
      Body(Call("POST", "/api/v1/runs", "olga",
                json{{"workflow_text", kGpuWorkflow}, {"workflow_path", "g.yaml"}}.dump()),
           200);
  int64_t run = std::stoll(submitted["run"]["id"].get<std::string>());
  auto ended = cluster().WaitForRunEnd(run, 60'000);
  ASSERT_TRUE(ended.ok()) << ended.status().message();
  ASSERT_EQ(ended->status(), v1::RUN_SUCCEEDED);

  // A viewer may read it.
  json g = Body(Call("GET", StrCat("/api/v1/runs/", run, "/stages/train/gpus"), "vera"), 200);
  ASSERT_EQ(g["series"].size(), 1u) << g.dump();
  const json& s = g["series"][0];
  EXPECT_EQ(s["attempt"], 1);
  EXPECT_EQ(s["agent_id"], "n0");
  int index = s["gpu_index"].get<int>();
  ASSERT_TRUE(index == 0 || index == 1) << s.dump();
  EXPECT_EQ(s["uuid"], gpus_[index].uuid);
  ASSERT_GE(s["points"].size(), 3u) << s.dump();
  int64_t last_t = 0;
  for (const json& p : s["points"]) {
    int64_t t = std::stoll(p["t_ms"].get<std::string>());
    EXPECT_GE(t, last_t) << "points out of order: " << s.dump();
    last_t = t;
    EXPECT_DOUBLE_EQ(p["sm_util"].get<double>(), 80) << p.dump();
    EXPECT_EQ(p["mem_used_max"], std::to_string(kMemUsed)) << p.dump();
    EXPECT_EQ(p["mem_total"], std::to_string(gpus_[0].mem_total)) << p.dump();
    EXPECT_DOUBLE_EQ(p["power_w"].get<double>(), 300) << p.dump();
    EXPECT_DOUBLE_EQ(p["temp_max"].get<double>(), 55) << p.dump();
  }
  for (const json* sum : std::vector<const json*>{&s["summary"], &g["summary"]}) {
    EXPECT_NEAR((*sum)["mean_sm_util_pct"].get<double>(), 80, 1e-6) << sum->dump();
    EXPECT_EQ((*sum)["peak_mem_used_bytes"], std::to_string(kMemUsed)) << sum->dump();
    EXPECT_EQ((*sum)["idle_gpu_hours"].get<double>(), 0) << sum->dump();
    // 300 W over what was sampled.
    double hours = (*sum)["sampled_gpu_hours"].get<double>();
    EXPECT_GT(hours, 0) << sum->dump();
    EXPECT_NEAR((*sum)["energy_kwh"].get<double>(), 0.3 * hours, 1e-9) << sum->dump();
  }

  // A stage that held no GPU: an empty list, not an error.
  json none = Body(Call("GET", StrCat("/api/v1/runs/", run, "/stages/report/gpus"), "vera"), 200);
  EXPECT_EQ(none["series"], json::array()) << none.dump();
  EXPECT_EQ(none["summary"]["sampled_gpu_hours"].get<double>(), 0) << none.dump();

  // Unknown stage and run: 404 naming them.
  json stage = Body(Call("GET", StrCat("/api/v1/runs/", run, "/stages/nope/gpus"), "vera"), 404);
  EXPECT_EQ(stage["code"], "NOT_FOUND");
  EXPECT_THAT(stage["error"].get<std::string>(), HasSubstr("'nope'"));
  json norun = Body(Call("GET", "/api/v1/runs/987654/stages/train/gpus", "vera"), 404);
  EXPECT_THAT(norun["error"].get<std::string>(), HasSubstr("987654"));
  // Read-only.
  Body(Call("POST", StrCat("/api/v1/runs/", run, "/stages/train/gpus"), "ada", "{}"), 405);
}

TEST_F(HttpGpusTest, DrainIsForAdminsAndAuditedAsOverGrpc) {
  // The agents list carries each GPU's identity, state and last reading.
  ASSERT_TRUE(WaitFor([&] { return Gpu(1).contains("reading"); }, 20'000));
  json before = Gpu(1);
  EXPECT_EQ(before["uuid"], gpus_[1].uuid);
  EXPECT_EQ(before["health"], "ok");
  EXPECT_DOUBLE_EQ(before["reading"]["sm_util_pct"].get<double>(), 80) << before.dump();
  EXPECT_EQ(before["reading"]["mem_used_bytes"], std::to_string(kMemUsed)) << before.dump();

  const std::string drain = "/api/v1/agents/n0/gpus/1/drain";
  const std::string body = json{{"reason", "fan noise"}}.dump();
  // A viewer and an operator are refused, and nothing changes.
  json refused = Body(Call("POST", drain, "vera", body), 403);
  EXPECT_EQ(refused["code"], "PERMISSION_DENIED");
  Body(Call("POST", drain, "olga", body), 403);
  EXPECT_EQ(Gpu(1)["health"], "ok");
  // From another site's page: refused whoever sends it.
  auto foreign = HttpRequest(
      addr_, "POST", drain, body,
      {{"Authorization", "Bearer " + tokens_.by_name["ada"]}, {"Origin", "http://evil.example"}});
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(foreign->status, 403);
  EXPECT_EQ(Gpu(1)["health"], "ok");

  json drained = Body(Call("POST", drain, "ada", body), 200);
  ASSERT_EQ(drained["gpus"].size(), 1u) << drained.dump();
  EXPECT_EQ(drained["gpus"][0]["health"], "drained");
  json now = Gpu(1);
  EXPECT_EQ(now["health"], "drained");
  EXPECT_EQ(now["health_reason"], "drained by ada: fan noise");
  EXPECT_GT(std::stoll(now["health_since_ms"].get<std::string>()), 0);
  EXPECT_EQ(Gpu(0)["health"], "ok");

  // The same drain over gRPC, for the audit trail to compare.
  std::map<std::string, std::string> env = cluster().CliEnv();
  env["LONGHAUL_TOKEN"] = tokens_.by_name["ada"];
  CommandResult cli = RunCommand(
      {BinPath("longhaul"), "gpu", "drain", "n0:1", "--reason", "fan noise"}, env, 30'000);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;

  // Every GPU, then back.
  json all = Body(Call("POST", "/api/v1/agents/n0/gpus/all/drain", "ada", "{}"), 200);
  EXPECT_EQ(all["gpus"].size(), 2u) << all.dump();
  EXPECT_EQ(Gpu(0)["health"], "drained");
  Body(Call("POST", "/api/v1/agents/n0/gpus/all/undrain", "ada", ""), 200);
  EXPECT_EQ(Gpu(0)["health"], "ok");
  EXPECT_EQ(Gpu(1)["health"], "ok");

  // Bad targets.
  EXPECT_THAT(Body(Call("POST", "/api/v1/agents/n0/gpus/x/drain", "ada", "{}"), 400)["error"]
                  .get<std::string>(),
              HasSubstr("'x'"));
  Body(Call("POST", "/api/v1/agents/n0/gpus/-1/drain", "ada", "{}"), 400);
  Body(Call("POST", "/api/v1/agents/n0/gpus/7/drain", "ada", "{}"), 400);
  EXPECT_THAT(Body(Call("POST", "/api/v1/agents/nobody/gpus/0/drain", "ada", "{}"), 404)["error"]
                  .get<std::string>(),
              HasSubstr("nobody"));
  Body(Call("GET", drain, "ada"), 405);
  Body(Call("POST", "/api/v1/agents/n0/gpus/0/reset", "ada", "{}"), 404);

  // In the trail, newest first: the HTTP drain and the gRPC one alike, and the calls that
  // reached DrainGpu and failed there; those refused before it (role, Origin, a bad path) are
  // not.
  json entries;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = Call("GET", "/api/v1/audit?limit=50", "ada");
        if (!r.ok() || r->status != 200) return false;
        entries = json::parse(r->body)["entries"];
        return entries.size() >= 6;
      },
      20'000))
      << entries.dump();
  std::vector<std::string> rows;
  for (const json& e : entries) {
    EXPECT_EQ(e["action"], "DrainGpu") << e.dump();
    std::string result = e["result"].get<std::string>();
    rows.push_back(StrCat(e["principal"].get<std::string>(), " ", e["role"].get<std::string>(), " ",
                          e["target"].get<std::string>(), " | ", e["detail"].get<std::string>(),
                          " | ", result.substr(0, result.find(':'))));
  }
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "ada admin agent nobody GPU 0 | drain | NOT_FOUND",
                      "ada admin agent n0 GPU 7 | drain | INVALID_ARGUMENT",
                      "ada admin agent n0 every GPU | undrain | OK",
                      "ada admin agent n0 every GPU | drain | OK",
                      "ada admin agent n0 GPU 1 | drain: fan noise | OK",  // gRPC
                      "ada admin agent n0 GPU 1 | drain: fan noise | OK",  // HTTP
                  }))
      << entries.dump();
}

}  // namespace
}  // namespace longhaul::testing
