// What the UI's "New run" page asks of longhauld's HTTP listener: a dry run of POST /runs
// names the workflow and its declared params (the page's form), a refused workflow answers 400
// with each problem's file:line:col, GET /runs/{id}?workflow_text=1 gives the file as
// submitted, and GET /whoami without tokens says every caller is an admin (with tokens:
// http_auth_test).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

constexpr char kParamsWorkflow[] =
    "name: form\n"
    "params:\n"
    "  steps: 20\n"
    "  lr: 0.1\n"
    "  greeting: hello\n"
    "stages:\n"
    "  greet:\n"
    "    run: [lh-testjob, --print, '${params.greeting} ${params.steps} ${params.lr}']\n";

class HttpSubmitTest : public ClusterTest {
 protected:
  void Start() {
    ASSERT_NO_FATAL_FAILURE(StartCluster(ClusterOptions{}));
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty()) << "no STATE/http.addr";
  }
  Result<HttpResult> Call(const std::string& method, const std::string& target,
                          const std::string& body = "",
                          std::map<std::string, std::string> headers = {}) {
    return HttpRequest(addr_, method, target, body, headers);
  }
  // GET `target`, which must answer 200; its JSON body.
  json GetJson(const std::string& target) {
    auto r = Call("GET", target);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? json::parse(r->body, nullptr, false) : json();
  }
  std::string addr_;
};

TEST_F(HttpSubmitTest, DryRunNamesTheDeclaredParamsInFileOrder) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json req = {{"workflow_text", kParamsWorkflow},
              {"workflow_path", "form.yaml"},
              {"params", {{"steps", "3"}}},
              {"dry_run", true}};
  auto r = Call("POST", "/api/v1/runs", req.dump());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["workflow_name"], "form");
  json want = json::array({{{"name", "steps"}, {"default_value", "20"}, {"line", 3}},
                           {{"name", "lr"}, {"default_value", "0.1"}, {"line", 4}},
                           {{"name", "greeting"}, {"default_value", "hello"}, {"line", 5}}});
  EXPECT_EQ(j["declared_params"], want) << r->body;
  ASSERT_EQ(j["plan"].size(), 1u) << r->body;
  EXPECT_EQ(j["plan"][0]["action"], "run");
  EXPECT_EQ(cluster().Query("SELECT count(*) FROM runs").value_or("?"), "0");
}

TEST_F(HttpSubmitTest, ARefusedWorkflowAnswers400WithEachProblemsPlace) {
  ASSERT_NO_FATAL_FAILURE(Start());
  std::string text = kParamsWorkflow;
  text += "    retyr: {limit: 1}\n";  // line 9, column 5
  json req = {{"workflow_text", text}, {"workflow_path", "form.yaml"}, {"dry_run", true}};
  auto r = Call("POST", "/api/v1/runs", req.dump());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 400) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["code"], "INVALID_ARGUMENT");
  EXPECT_NE(j["error"].get<std::string>().find("form.yaml:9:5: unknown key 'retyr'"),
            std::string::npos)
      << r->body;
}

TEST_F(HttpSubmitTest, ARunGivesItsWorkflowTextOnlyWhenAsked) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json req = {{"workflow_text", kParamsWorkflow}, {"workflow_path", "form.yaml"}};
  auto submitted = Call("POST", "/api/v1/runs", req.dump());
  ASSERT_TRUE(submitted.ok());
  ASSERT_EQ(submitted->status, 200) << submitted->body;
  json s = json::parse(submitted->body);
  EXPECT_EQ(s["declared_params"].size(), 3u) << submitted->body;
  std::string id = s["run"]["id"];

  json with = GetJson(StrCat("/api/v1/runs/", id, "?stages=-1&workflow_text=1"));
  EXPECT_EQ(with["workflow_text"], kParamsWorkflow);
  EXPECT_EQ(with["workflow_path"], "form.yaml");
  EXPECT_EQ(with["stages"].size(), 0u);
  json without = GetJson(StrCat("/api/v1/runs/", id));
  EXPECT_FALSE(without.contains("workflow_text")) << without.dump();
}

TEST_F(HttpSubmitTest, WhoAmIWithoutTokensIsALocalAdmin) {
  ASSERT_NO_FATAL_FAILURE(Start());
  json j = GetJson("/api/v1/whoami");
  EXPECT_EQ(
      j, json({{"name", "local"}, {"role", "admin"}, {"can_submit", true}, {"can_admin", true}}));
  auto post = Call("POST", "/api/v1/whoami", "{}");
  ASSERT_TRUE(post.ok());
  EXPECT_EQ(post->status, 405) << post->body;
}

}  // namespace
}  // namespace longhaul::testing
