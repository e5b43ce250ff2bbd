// POST /api/v1/agents/A/drain and /undrain (docs/http-api.md; docs/scheduling.md,
// "Maintenance") against a real cluster: admin only, the drain shown in GET /api/v1/agents, the
// errors, and the audit trail as `longhaul agent drain` over gRPC puts it there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class HttpDrainTest : public ClusterTest {
 protected:
  void SetUp() override {
    tokens_ = MakeTokens(dir_, {{"viewer", "vera"}, {"operator", "olga"}, {"admin", "ada"}});
    ClusterOptions o;
    o.agents = 1;
    o.coordinator_flags = {"--tokens", tokens_.file};
    o.client_token = tokens_.by_name["ada"];
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty());
  }
  json Call(const std::string& method, const std::string& target, const std::string& who,
            const std::string& body, int status) {
    Result<HttpResult> r = HttpRequest(addr_, method, target, body,
                                       {{"Authorization", "Bearer " + tokens_.by_name[who]}});
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return json();
    EXPECT_EQ(r->status, status) << method << " " << target << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Agent() { return Call("GET", "/api/v1/agents", "vera", "", 200)["agents"][0]; }

  TempDir dir_;
  Tokens tokens_;
  std::string addr_;
};

TEST_F(HttpDrainTest, AnAdminDrainsAndUndrainsAnAgentAndTheTrailSaysSo) {
  const std::string drain = "/api/v1/agents/n0/drain";
  const std::string body = R"({"atMs": "1796479200000", "reason": "kernel upgrade"})";
  Call("POST", drain, "vera", body, 403);
  Call("POST", drain, "olga", body, 403);
  EXPECT_FALSE(Agent().contains("drain"));

  json after = Call("POST", drain, "ada", body, 200);
  EXPECT_EQ(after["agent"]["drain"]["reason"], "kernel upgrade") << after.dump();
  json shown = Agent()["drain"];
  EXPECT_EQ(shown["at_ms"], "1796479200000") << shown.dump();
  EXPECT_EQ(shown["by"], "ada");

  Call("POST", "/api/v1/agents/n0/undrain", "ada", "{}", 200);
  EXPECT_FALSE(Agent().contains("drain"));
  EXPECT_THAT(Call("POST", "/api/v1/agents/n0/undrain", "ada", "", 409)["error"].get<std::string>(),
              HasSubstr("agent n0 is not drained"));
  EXPECT_THAT(
      Call("POST", "/api/v1/agents/nobody/drain", "ada", "{}", 404)["error"].get<std::string>(),
      HasSubstr("nobody"));
  Call("GET", drain, "ada", "", 405);
  Call("POST", "/api/v1/agents/n0/reboot", "ada", "{}", 404);

  // The same over gRPC, as the CLI sends it (a time from now).
  std::map<std::string, std::string> env = cluster().CliEnv();
  env["LONGHAUL_TOKEN"] = tokens_.by_name["ada"];
  CommandResult cli =
      RunCommand({BinPath("longhaul"), "agent", "drain", "n0", "--reason", "disk"}, env, 30'000);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_THAT(cli.out, HasSubstr("agent n0 is drained since"));
  CommandResult bad =
      RunCommand({BinPath("longhaul"), "agent", "drain", "n0", "--at", "tomorrow"}, env, 30'000);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("--at 'tomorrow': expected an RFC 3339 time"));

  json entries;
  ASSERT_TRUE(WaitFor(
      [&] {
        entries = Call("GET", "/api/v1/audit?limit=50", "ada", "", 200)["entries"];
        return entries.size() >= 5;
      },
      20'000))
      << entries.dump();
  std::vector<std::string> rows;
  for (const json& e : entries) {
    EXPECT_EQ(e["action"], "DrainAgent") << e.dump();
    std::string result = e["result"].get<std::string>();
    rows.push_back(StrCat(e["principal"].get<std::string>(), " ", e["target"].get<std::string>(),
                          " | ", e["detail"].get<std::string>(), " | ",
                          result.substr(0, result.find(':'))));
  }
  ASSERT_EQ(rows.size(), 5u) << entries.dump();
  EXPECT_THAT(rows[0], ::testing::MatchesRegex("ada agent n0 \\| drain at .*Z: disk \\| OK"));
  EXPECT_EQ(rows[1], "ada agent nobody | drain now | NOT_FOUND");
  EXPECT_EQ(rows[2], "ada agent n0 | undrain | FAILED_PRECONDITION");
  EXPECT_EQ(rows[3], "ada agent n0 | undrain | OK");
  EXPECT_EQ(rows[4], "ada agent n0 | drain at 2026-12-05T14:00:00Z: kernel upgrade | OK");
}

}  // namespace
}  // namespace longhaul::testing
