// GET/POST /api/v1/reservations and DELETE /api/v1/reservations/{id} (docs/http-api.md;
// docs/scheduling.md, "Reservations") against a real cluster: any role lists, only an admin
// reserves and cancels, the reservation shows in GET /api/v1/agents, the errors, and the audit
// trail as `longhaul reserve` over gRPC puts it there.
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

class HttpReservationsTest : public ClusterTest {
 protected:
  void SetUp() override {
    tokens_ = MakeTokens(dir_, {{"viewer", "vera"}, {"operator", "olga"}, {"admin", "ada"}});
    ClusterOptions o;
    o.agents = 1;
    o.gpus = 4;
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

  TempDir dir_;
  Tokens tokens_;
  std::string addr_;
};

TEST_F(HttpReservationsTest, AnAdminReservesAndCancelsAnyRoleListsAndTheTrailSaysSo) {
  const std::string list = "/api/v1/reservations";
  // 2027-01-01T00:00:00Z to 02:00: in the future whenever this runs before then.
  const std::string body =
      R"({"agent_id": "n0", "gpus": 2, "holder_kind": "team", "holder": "vision",
          "from_ms": "1798761600000", "until_ms": "1798768800000", "reason": "sprint"})";
  Call("POST", list, "vera", body, 403);
  Call("POST", list, "olga", body, 403);
  json made = Call("POST", list, "ada", body, 200);
  ASSERT_TRUE(made.contains("id")) << made.dump();
  std::string id = made["id"].get<std::string>();
  EXPECT_EQ(made["by"], "ada");
  json listed = Call("GET", list, "vera", "", 200)["reservations"];
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["holder"], "vision");
  json agent = Call("GET", "/api/v1/agents", "vera", "", 200)["agents"][0];
  ASSERT_EQ(agent["reservations"].size(), 1u) << agent.dump();
  EXPECT_EQ(agent["reservations"][0]["gpus"], 2);

  EXPECT_THAT(Call("POST", list, "ada",
                   R"({"agent_id": "n0", "gpus": 3, "holder_kind": "user", "holder": "bob",
                       "from_ms": "1798761600000", "until_ms": "1798768800000"})",
                   400)["error"]
                  .get<std::string>(),
              HasSubstr("5 of agent n0's 4 GPUs would be reserved"));
  EXPECT_THAT(Call("POST", list, "ada",
                   R"({"agent_id": "m0", "gpus": 1, "holder_kind": "team", "holder": "x",
                       "until_ms": "1798768800000"})",
                   404)["error"]
                  .get<std::string>(),
              HasSubstr("no agent 'm0' (did you mean 'n0'?)"));

  Call("DELETE", list + "/" + id, "olga", R"({"reason": "moved"})", 403);
  json cancelled = Call("DELETE", list + "/" + id, "ada", R"({"reason": "moved"})", 200);
  EXPECT_EQ(cancelled["cancelled_by"], "ada") << cancelled.dump();
  EXPECT_EQ(Call("GET", list, "vera", "", 200)["reservations"].size(), 0u);
  EXPECT_EQ(Call("GET", list + "?all=1", "vera", "", 200)["reservations"].size(), 1u);
  Call("DELETE", list + "/" + id, "ada", "", 404);
  Call("PUT", list, "ada", "", 405);

  // The same over gRPC, as the CLI sends it; an operator is refused.
  std::map<std::string, std::string> env = cluster().CliEnv();
  env["LONGHAUL_TOKEN"] = tokens_.by_name["olga"];
  std::vector<std::string> reserve = {
      BinPath("longhaul"), "reserve", "n0",       "--gpus", "all", "--user", "bob",
      "--until",           "+1h",     "--reason", "demo"};
  CommandResult denied = RunCommand(reserve, env, 30'000);
  EXPECT_EQ(denied.exit_code, 7) << denied.err;
  env["LONGHAUL_TOKEN"] = tokens_.by_name["ada"];
  CommandResult cli = RunCommand(reserve, env, 30'000);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_THAT(cli.out, HasSubstr("4 of n0's GPUs for user bob"));
  CommandResult past = RunCommand({BinPath("longhaul"), "reserve", "n0", "--gpus", "1", "--team",
                                   "x", "--until", "2020-01-01T00:00:00Z", "--reason", "r"},
                                  env, 30'000);
  EXPECT_NE(past.exit_code, 0);
  EXPECT_THAT(past.err, HasSubstr("in the past"));

  json entries;
  ASSERT_TRUE(WaitFor(
      [&] {
        entries = Call("GET", "/api/v1/audit?limit=50", "ada", "", 200)["entries"];
        return entries.size() >= 7;
      },
      20'000))
      << entries.dump();
  std::vector<std::string> rows;
  for (const json& e : entries) {
    std::string result = e["result"].get<std::string>();
    rows.push_back(StrCat(e["principal"].get<std::string>(), " ", e["action"].get<std::string>(),
                          " | ", result.substr(0, result.find(':'))));
  }
  // Newest first; refused roles are not in the trail.
  ASSERT_EQ(rows.size(), 7u) << entries.dump();
  EXPECT_EQ(rows[0], "ada Reserve | INVALID_ARGUMENT");
  EXPECT_EQ(rows[1], "ada Reserve | OK");
  EXPECT_EQ(rows[2], "ada Unreserve | NOT_FOUND");
  EXPECT_EQ(entries[2]["target"], "reservation " + id) << "no agent to name";
  EXPECT_EQ(entries[3]["target"], "agent n0");
  EXPECT_EQ(rows[3], "ada Unreserve | OK");
  EXPECT_EQ(entries[3]["detail"], "cancel reservation " + id + ": moved");
  EXPECT_EQ(rows[4], "ada Reserve | NOT_FOUND");
  EXPECT_EQ(rows[5], "ada Reserve | INVALID_ARGUMENT");
  EXPECT_EQ(rows[6], "ada Reserve | OK");
  EXPECT_EQ(entries[6]["detail"],
            "reservation " + id +
                ": 2 GPUs for team vision from 2027-01-01T00:00:00Z until 2027-01-01T02:00:00Z: "
                "sprint");
}

}  // namespace
}  // namespace longhaul::testing
