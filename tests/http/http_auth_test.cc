// longhauld's HTTP listener with --tokens: the same roles as the gRPC API, from a bearer header
// or from the cookie that POST /api/v1/login sets for the browser; mutations in the same audit
// trail as the gRPC API's, readable by an admin over both.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"
#include "tests/integration/tokens.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

constexpr char kHello[] =
    "name: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, hello]\n";

class HttpAuthTest : public ClusterTest {
 protected:
  void SetUp() override {
    tokens_ = MakeTokens(dir_, {{"viewer", "vera"}, {"operator", "olga"}, {"admin", "ada"}});
    ClusterOptions o;
    o.coordinator_flags = {"--tokens", tokens_.file};
    o.client_token = tokens_.by_name["olga"];
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty());
  }
  Result<HttpResult> Call(const std::string& method, const std::string& target,
                          const std::string& body, std::map<std::string, std::string> headers) {
    return HttpRequest(addr_, method, target, body, headers);
  }
  std::map<std::string, std::string> As(const std::string& name) {
    return {{"Authorization", "Bearer " + tokens_.by_name[name]}};
  }
  std::string SubmitBody() const {
    return json{{"workflow_text", kHello}, {"workflow_path", "hello.yaml"}}.dump();
  }
  TempDir dir_;
  Tokens tokens_;
  std::string addr_;
};

TEST_F(HttpAuthTest, ReadsNeedATokenAndMutationsAnOperator) {
  auto none = Call("GET", "/api/v1/runs", "", {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->status, 401) << none->body;

  auto wrong = Call("GET", "/api/v1/runs", "", {{"Authorization", "Bearer not-a-token"}});
  ASSERT_TRUE(wrong.ok());
  EXPECT_EQ(wrong->status, 401) << wrong->body;

  std::string viewer = "Bearer " + tokens_.by_name["vera"];
  auto read = Call("GET", "/api/v1/runs", "", {{"Authorization", viewer}});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, 200) << read->body;

  // /metrics names runs and stages: a viewer's read too (Prometheus sends a bearer token).
  auto scrape = Call("GET", "/metrics", "", {});
  ASSERT_TRUE(scrape.ok());
  EXPECT_EQ(scrape->status, 401) << scrape->body;
  scrape = Call("GET", "/metrics", "", {{"Authorization", viewer}});
  ASSERT_TRUE(scrape.ok());
  EXPECT_EQ(scrape->status, 200) << scrape->body;

  auto denied = Call("POST", "/api/v1/runs", SubmitBody(), {{"Authorization", viewer}});
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403) << denied->body;
  EXPECT_EQ(cluster().Query("SELECT count(*) FROM runs").value_or("?"), "0");

  auto submitted = Call("POST", "/api/v1/runs", SubmitBody(),
                        {{"Authorization", "Bearer " + tokens_.by_name["olga"]}});
  ASSERT_TRUE(submitted.ok());
  EXPECT_EQ(submitted->status, 200) << submitted->body;
  EXPECT_EQ(cluster().Query("SELECT count(*) FROM runs").value_or("?"), "1");
}

// Tags: a viewer lists them; setting and removing one needs an operator, like any change of
// runs, and a DELETE from another site is refused as a POST is.
TEST_F(HttpAuthTest, TagsAreListedByAViewerAndSetOrRemovedByAnOperator) {
  auto submitted = Call("POST", "/api/v1/runs", SubmitBody(), As("olga"));
  ASSERT_TRUE(submitted.ok());
  ASSERT_EQ(submitted->status, 200) << submitted->body;
  std::string id = json::parse(submitted->body)["run"]["id"].get<std::string>();
  Result<v1::Run> done = cluster().WaitForRunEnd(std::stoll(id), 60'000);
  ASSERT_TRUE(done.ok()) << done.status().message();
  std::string body =
      json{{"name", "hello-tag"}, {"run_id", std::stoll(id)}, {"stage", "greet"}}.dump();

  auto denied = Call("POST", "/api/v1/tags", body, As("vera"));
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403) << denied->body;
  auto set = Call("POST", "/api/v1/tags", body, As("olga"));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->status, 200) << set->body;
  EXPECT_EQ(json::parse(set->body)["set_by"], "olga");
  auto listed = Call("GET", "/api/v1/tags", "", As("vera"));
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(json::parse(listed->body)["tags"][0]["name"], "hello-tag");

  auto viewer_rm = Call("DELETE", "/api/v1/tags/hello-tag", "", As("vera"));
  ASSERT_TRUE(viewer_rm.ok());
  EXPECT_EQ(viewer_rm->status, 403) << viewer_rm->body;
  auto headers = As("olga");
  headers["Origin"] = "http://evil.example";
  auto cross = Call("DELETE", "/api/v1/tags/hello-tag", "", headers);
  ASSERT_TRUE(cross.ok());
  EXPECT_EQ(cross->status, 403) << cross->body;
  auto removed = Call("DELETE", "/api/v1/tags/hello-tag", "", As("olga"));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->status, 200) << removed->body;
}

// Quotas and budgets: a viewer lists them; setting and removing one needs an admin (an
// operator is refused), and who did it is on the record.
TEST_F(HttpAuthTest, QuotasAndBudgetsAreListedByAViewerAndChangedByAnAdminOnly) {
  std::string quota = json{{"team", "vision"}, {"gpus", 2}}.dump();
  auto by_operator = Call("POST", "/api/v1/quotas", quota, As("olga"));
  ASSERT_TRUE(by_operator.ok());
  EXPECT_EQ(by_operator->status, 403) << by_operator->body;
  auto set = Call("POST", "/api/v1/quotas", quota, As("ada"));
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->status, 200) << set->body;
  EXPECT_EQ(json::parse(set->body)["set_by"], "ada");
  auto listed = Call("GET", "/api/v1/quotas", "", As("vera"));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->status, 200) << listed->body;
  EXPECT_EQ(json::parse(listed->body)["quotas"][0]["rule"], "gpus:2");
  EXPECT_EQ(Call("DELETE", "/api/v1/quotas/vision", "", As("olga"))->status, 403);
  auto removed = Call("DELETE", "/api/v1/quotas/vision", "", As("ada"));
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(removed->status, 200) << removed->body;
  auto again = Call("DELETE", "/api/v1/quotas/vision", "", As("ada"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 404) << again->body;

  std::string budget = json{{"scope", "team"}, {"name", "vision"}, {"gpu_hours", 5}}.dump();
  ASSERT_EQ(Call("POST", "/api/v1/budgets", budget, As("ada"))->status, 200);
  EXPECT_EQ(Call("DELETE", "/api/v1/budgets/team/vision", "", As("olga"))->status, 403);
  EXPECT_EQ(Call("DELETE", "/api/v1/budgets/team/vision", "", As("vera"))->status, 403);
  auto gone = Call("DELETE", "/api/v1/budgets/team/vision", "", As("ada"));
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->status, 200) << gone->body;
  EXPECT_EQ(json::parse(gone->body)["gpu_hours"], 5.0);
  auto list = Call("GET", "/api/v1/budgets", "", As("vera"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(json::parse(list->body)["budgets"].size(), 0u) << list->body;
}

// What the UI's New run page asks before it offers Submit.
TEST_F(HttpAuthTest, WhoAmISaysEachTokensRoleAndWhetherItMaySubmit) {
  auto none = Call("GET", "/api/v1/whoami", "", {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->status, 401) << none->body;
  struct Want {
    std::string name, role;
    bool submit, admin;
  };
  for (const Want& w : {Want{"vera", "viewer", false, false}, Want{"olga", "operator", true, false},
                        Want{"ada", "admin", true, true}}) {
    auto r = Call("GET", "/api/v1/whoami", "",
                  {{"Cookie", "longhaul_token=" + tokens_.by_name[w.name]}});
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(json::parse(r->body), json({{"name", w.name},
                                          {"role", w.role},
                                          {"can_submit", w.submit},
                                          {"can_admin", w.admin}}));
  }
}

TEST_F(HttpAuthTest, LoginSetsAStrictHttpOnlyCookieThatLaterRequestsCarry) {
  auto bad = Call("POST", "/api/v1/login", json{{"token", "nope"}}.dump(), {});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 401) << bad->body;
  EXPECT_EQ(bad->Header("set-cookie"), "");

  std::string token = tokens_.by_name["vera"];
  auto good = Call("POST", "/api/v1/login", json{{"token", token}}.dump(), {});
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->status, 204) << good->body;
  std::string cookie = good->Header("set-cookie");
  EXPECT_NE(cookie.find("longhaul_token=" + token), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos) << cookie;
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos) << cookie;

  auto read = Call("GET", "/api/v1/runs", "", {{"Cookie", "theme=dark; longhaul_token=" + token}});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status, 200) << read->body;
  // The cookie is the viewer's: a mutation is still refused.
  auto denied = Call("POST", "/api/v1/runs", SubmitBody(), {{"Cookie", "longhaul_token=" + token}});
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403) << denied->body;
}

TEST_F(HttpAuthTest, LoginFromAnotherSiteIsRefused) {
  auto r = Call("POST", "/api/v1/login", json{{"token", tokens_.by_name["olga"]}}.dump(),
                {{"Origin", "http://evil.example"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 403) << r->body;
  EXPECT_EQ(r->Header("set-cookie"), "");
}

TEST_F(HttpAuthTest, MutationsAreAuditedLikeTheirGrpcTwins) {
  json dry = {{"workflow_text", kHello}, {"workflow_path", "hello.yaml"}, {"dry_run", true}};
  auto planned = Call("POST", "/api/v1/runs", dry.dump(), As("olga"));
  ASSERT_TRUE(planned.ok());
  ASSERT_EQ(planned->status, 200) << planned->body;
  auto submitted = Call("POST", "/api/v1/runs", SubmitBody(), As("olga"));
  ASSERT_TRUE(submitted.ok());
  ASSERT_EQ(submitted->status, 200) << submitted->body;
  std::string run = json::parse(submitted->body)["run"]["id"].get<std::string>();
  ASSERT_TRUE(cluster().WaitForRunEnd(std::stoll(run)).ok());
  auto pivot =
      Call("POST", "/api/v1/runs/" + run + "/pivot", json{{"dry_run", true}}.dump(), As("olga"));
  ASSERT_TRUE(pivot.ok());
  EXPECT_EQ(pivot->status, 200) << pivot->body;
  auto cancel = Call("POST", "/api/v1/runs/" + run + "/cancel", "{}", As("ada"));
  ASSERT_TRUE(cancel.ok());
  EXPECT_EQ(cancel->status, 409) << cancel->body;  // it has ended: audited as refused
  auto retry = Call("POST", "/api/v1/runs/" + run + "/retry", R"({"stage": "greet"})", As("olga"));
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->status, 409) << retry->body;
  // Refused by the check: in longhauld's log, not in the trail.
  auto denied = Call("POST", "/api/v1/runs/" + run + "/cancel", "{}", As("vera"));
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(denied->status, 403);

  // GET /api/v1/audit needs the role ListAudit needs over gRPC: admin.
  EXPECT_EQ(Call("GET", "/api/v1/audit", "", As("olga"))->status, 403);
  EXPECT_EQ(Call("GET", "/api/v1/audit", "", As("vera"))->status, 403);
  json entries;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = Call("GET", "/api/v1/audit?limit=10", "", As("ada"));
        if (!r.ok() || r->status != 200) return false;
        entries = json::parse(r->body)["entries"];
        return entries.size() >= 5;
      },
      20'000))
      << entries.dump();
  ASSERT_EQ(entries.size(), 5u) << entries.dump();
  std::vector<std::string> rows;
  for (const json& e : entries) {
    rows.push_back(StrCat(e["principal"].get<std::string>(), " ", e["role"].get<std::string>(), " ",
                          e["action"].get<std::string>(), " ", e["target"].get<std::string>(), " ",
                          e["result"].get<std::string>().substr(0, 19)));
    EXPECT_EQ(e["peer"].get<std::string>().rfind("127.0.0.1:", 0), 0u) << e.dump();
    EXPECT_GT(std::stoll(e["ts_ms"].get<std::string>()), 0) << e.dump();
  }
  // Newest first.
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "olga operator RetryStage run " + run + " stage greet FAILED_PRECONDITION",
                      "ada admin CancelRun run " + run + " FAILED_PRECONDITION",
                      "olga operator PivotRun  OK",
                      "olga operator SubmitRun run " + run + " OK",
                      "olga operator SubmitRun  OK",
                  }));
  EXPECT_NE(entries[2]["detail"].get<std::string>().find("pivot of run " + run), std::string::npos)
      << entries[2].dump();
  EXPECT_NE(entries[4]["detail"].get<std::string>().find("dry run"), std::string::npos)
      << entries[4].dump();
  // Paging: older than the newest entry.
  auto older =
      Call("GET", StrCat("/api/v1/audit?limit=2&before=", entries[0]["id"].get<std::string>()), "",
           As("ada"));
  ASSERT_TRUE(older.ok());
  json page = json::parse(older->body)["entries"];
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0]["id"], entries[1]["id"]);

  // The same trail through the gRPC API.
  std::map<std::string, std::string> env = cluster().CliEnv();
  env["LONGHAUL_TOKEN"] = tokens_.by_name["ada"];
  CommandResult cli = RunCommand({BinPath("longhaul"), "audit", "--json"}, env, 30'000);
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  json via_grpc = json::parse(cli.out, nullptr, false);
  ASSERT_FALSE(via_grpc.is_discarded()) << cli.out;
  // The CLI prints set fields only; compare what both show.
  auto summary = [](const json& list) {
    std::vector<std::string> out;
    for (const json& e : list) {
      out.push_back(StrCat(e.value("id", ""), " ", e.value("principal", ""), " ",
                           e.value("peer", ""), " ", e.value("action", ""), " ",
                           e.value("target", ""), " ", e.value("detail", ""), " ",
                           e.value("result", "")));
    }
    return out;
  };
  EXPECT_EQ(summary(via_grpc["entries"]), summary(entries));
}

}  // namespace
}  // namespace longhaul::testing
