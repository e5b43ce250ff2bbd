// longhauld's HTTP listener with --tokens: the same roles as the gRPC API, from a bearer header
// or from the cookie that POST /api/v1/login sets for the browser.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
    tokens_ = MakeTokens(dir_, {{"viewer", "vera"}, {"operator", "olga"}});
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

}  // namespace
}  // namespace longhaul::testing
