// GET /api/v1/metric-series against a real cluster: one metric of several runs in one answer,
// its points by step and only that metric's, thinned to `points` keeping the first and the last,
// last/min/max over every point, a run without the stage answered in its series, and the
// request's bounds as 400s that name what is wrong.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

// 30 points of `loss` (steps 1..30, value SCALE*100/step), 5 of `acc` (0.5) between them.
constexpr char kSeriesWorkflow[] =
    "name: series\n"
    "params: {scale: '1'}\n"
    "stages:\n"
    "  train:\n"
    "    run: [/bin/sh, -c, 'i=0; while [ $i -lt 30 ]; do i=$((i+1));\n"
    "      echo \"{\\\"metric\\\": {\\\"name\\\": \\\"loss\\\", \\\"value\\\": $(($1 * 100 / i)),\n"
    "      \\\"step\\\": $i}}\" >> \"$LONGHAUL_EVENTS\";\n"
    "      if [ $((i % 6)) -eq 0 ]; then echo \"{\\\"metric\\\": {\\\"name\\\": \\\"acc\\\",\n"
    "      \\\"value\\\": 0.5, \\\"step\\\": $i}}\" >> \"$LONGHAUL_EVENTS\"; fi; done',\n"
    "          sh, '${params.scale}']\n";

class HttpMetricSeriesTest : public ClusterTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartCluster());
    addr_ = cluster().http_address();
    ASSERT_FALSE(addr_.empty()) << "no STATE/http.addr";
  }
  // GET `target`: its status and its body as JSON.
  std::pair<int, json> Get(const std::string& target) {
    Result<HttpResult> r = HttpGet(addr_, target);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (!r.ok()) return {0, json()};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  int64_t RunToEnd(const std::string& scale) {
    json req = {{"workflow_text", kSeriesWorkflow},
                {"workflow_path", "series.yaml"},
                {"params", {{"scale", scale}}}};
    Result<HttpResult> r = HttpRequest(addr_, "POST", "/api/v1/runs", req.dump());
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    if (!r.ok()) return 0;
    int64_t id = std::stoll(json::parse(r->body)["run"]["id"].get<std::string>());
    EXPECT_TRUE(cluster().WaitForRunEnd(id).ok());
    return id;
  }
  std::string addr_;
};

TEST_F(HttpMetricSeriesTest, OneMetricOfSeveralRunsInOneAnswer) {
  int64_t a = RunToEnd("1");
  int64_t b = RunToEnd("2");
  auto [status, body] =
      Get(StrCat("/api/v1/metric-series?metric=train.loss&runs=", a, ",", b, ",999999&points=10"));
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body["metric"], "train.loss");
  ASSERT_EQ(body["series"].size(), 3u);
  const json& sa = body["series"][0];
  EXPECT_EQ(sa["run_id"], a);
  EXPECT_EQ(sa["total_points"], 30);
  EXPECT_EQ(sa["thinned"], true);
  EXPECT_EQ(sa["truncated"], false);
  ASSERT_EQ(sa["steps"].size(), 10u);
  ASSERT_EQ(sa["values"].size(), 10u);
  ASSERT_EQ(sa["ts_ms"].size(), 10u);
  EXPECT_EQ(sa["steps"].front(), 1);  // the first and the last point are kept
  EXPECT_EQ(sa["steps"].back(), 30);
  EXPECT_EQ(sa["values"].front(), 100.0);
  EXPECT_EQ(sa["last"], 3.0);  // 100 / 30
  EXPECT_EQ(sa["min"], 3.0);
  EXPECT_EQ(sa["max"], 100.0);
  for (const json& v : sa["values"]) EXPECT_NE(v, 0.5) << "a point of acc in loss's series";
  const json& sb = body["series"][1];
  EXPECT_EQ(sb["run_id"], b);
  EXPECT_EQ(sb["max"], 200.0);
  EXPECT_NE(body["series"][2]["error"].get<std::string>().find("has no stage 'train'"),
            std::string::npos)
      << body["series"][2].dump();

  // Unthinned by default: every point, in the order reported.
  auto [all_status, all] = Get(StrCat("/api/v1/metric-series?metric=train.acc&runs=", a));
  ASSERT_EQ(all_status, 200);
  const json& acc = all["series"][0];
  EXPECT_EQ(acc["thinned"], false);
  EXPECT_EQ(acc["steps"], json({6, 12, 18, 24, 30}));
  EXPECT_EQ(acc["last"], 0.5);

  // A metric nobody reported: an empty series, no values to stand for the run.
  auto [none_status, none] = Get(StrCat("/api/v1/metric-series?metric=train.nope&runs=", a));
  ASSERT_EQ(none_status, 200);
  EXPECT_EQ(none["series"][0]["total_points"], 0);
  EXPECT_TRUE(none["series"][0]["last"].is_null());
}

TEST_F(HttpMetricSeriesTest, BadRequestsNameWhatIsWrong) {
  auto expect_400 = [&](const std::string& target, const std::string& says) {
    auto [status, body] = Get(target);
    EXPECT_EQ(status, 400) << target;
    EXPECT_NE(body["error"].get<std::string>().find(says), std::string::npos)
        << target << ": " << body.dump();
  };
  expect_400("/api/v1/metric-series?metric=loss&runs=1", "must be STAGE.NAME");
  expect_400("/api/v1/metric-series?metric=train.loss", "'runs' is required");
  expect_400("/api/v1/metric-series?metric=train.loss&runs=1,x", "'x' is not a run id");
  expect_400("/api/v1/metric-series?metric=train.loss&runs=1&points=many", "'many'");
  std::string many;
  for (int i = 1; i <= 101; ++i) many += StrCat(i == 1 ? "" : ",", i);
  expect_400("/api/v1/metric-series?metric=train.loss&runs=" + many,
             "at most 100 runs in one request (101 asked)");
}

}  // namespace
}  // namespace longhaul::testing
