// longhauld's HTTP listener against a real cluster: the JSON shapes of every endpoint,
// keyset paging, the watch stream (snapshot, updates, end, ids, Last-Event-ID), the stream
// cap, the Origin check, the UI's files and 404s.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

constexpr char kWorkflow[] =
    "name: web\n"
    "params: {n: '3'}\n"
    "stages:\n"
    "  produce:\n"
    "    resources: {gpus: 1}\n"
    "    run: [lh-testjob, --print, 'made ${params.n}', --output, 'count=${params.n}',\n"
    "          --metric, 'loss=0.5', --metric, 'loss=0.25', --progress, '3', --sleep, '0.2']\n"
    "  consume:\n"
    "    needs: [produce]\n"
    "    run: [lh-testjob, --print, 'got ${produce.outputs.count}', --metric, 'acc=0.9']\n";

constexpr char kSlowWorkflow[] =
    "name: slow\n"
    "stages:\n"
    "  first:\n"
    "    run: [lh-testjob, --progress, '4', --sleep, '1.5']\n"
    "  second:\n"
    "    needs: [first]\n"
    "    run: [lh-testjob, --sleep, '0.3']\n";

constexpr char kLongWorkflow[] =
    "name: long\n"
    "stages:\n"
    "  nap:\n"
    "    run: [lh-testjob, --sleep, '60']\n";

json Parse(const Result<HttpResult>& r) {
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return json();
  json j = json::parse(r->body, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r->body;
  return j;
}

class HttpApiTest : public ClusterTest {
 protected:
  void Start(std::vector<std::string> flags = {}) {
    ClusterOptions o;
    o.gpus = 2;
    o.coordinator_flags = std::move(flags);
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    ASSERT_FALSE(cluster().http_address().empty()) << "no STATE/http.addr";
    addr_ = cluster().http_address();
  }
  Result<HttpResult> Get(const std::string& target) { return HttpGet(addr_, target); }
  Result<HttpResult> Post(const std::string& target, const json& body) {
    return HttpRequest(addr_, "POST", target, body.dump());
  }
  // Submits through POST /api/v1/runs; returns the run id.
  int64_t Submit(const std::string& text, const json& params = json::object()) {
    json req = {{"workflow_text", text}, {"workflow_path", "web.yaml"}, {"params", params}};
    auto r = Post("/api/v1/runs", req);
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    json j = Parse(r);
    return std::stoll(j["run"]["id"].get<std::string>());
  }
  std::string addr_;
};

TEST_F(HttpApiTest, BudgetsOfTeamsAndWorkflowsAreSetAndListed) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto set = Post("/api/v1/budgets", {{"scope", "workflow"},
                                      {"name", "web"},
                                      {"gpu_hours", 12.5},
                                      {"period_ms", "604800000"},
                                      {"hard", true}});
  ASSERT_TRUE(set.ok());
  ASSERT_EQ(set->status, 200) << set->body;
  json b = Parse(set);
  EXPECT_EQ(b["scope"], "workflow");
  EXPECT_EQ(b["name"], "web");
  EXPECT_EQ(b["gpu_hours"], 12.5);
  EXPECT_EQ(b["period_ms"], "604800000");
  EXPECT_EQ(b["hard"], true);
  EXPECT_EQ(b["reached"], false);
  EXPECT_EQ(b["set_by"], "local");

  json list = Parse(Get("/api/v1/budgets"));
  ASSERT_EQ(list["budgets"].size(), 1u) << list.dump();
  EXPECT_EQ(list["budgets"][0]["name"], "web");
  EXPECT_EQ(list["budgets"][0]["used_gpu_hours"], 0.0);

  auto bad = Post("/api/v1/budgets", {{"scope", "group"}, {"name", "x"}, {"gpu_hours", 1}});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("budget scope: expected team or workflow, got 'group'"),
            std::string::npos)
      << bad->body;
  auto zero = Post("/api/v1/budgets", {{"scope", "team"}, {"name", "vision"}, {"gpu_hours", 0}});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->status, 400);
  EXPECT_NE(zero->body.find("--gpu-hours: expected a number > 0, got 0"), std::string::npos)
      << zero->body;
}

TEST_F(HttpApiTest, EveryEndpointAnswersTheContractsJson) {
  ASSERT_NO_FATAL_FAILURE(Start());
  int64_t id = Submit(kWorkflow);
  ASSERT_TRUE(cluster().WaitForRunEnd(id).ok());
  std::string run = std::to_string(id);

  json list = Parse(Get("/api/v1/runs?limit=10&metric=produce.loss"));
  ASSERT_EQ(list["runs"].size(), 1u);
  const json& r0 = list["runs"][0];
  EXPECT_EQ(r0["id"], run);  // int64 as a string
  EXPECT_EQ(r0["status"], "RUN_SUCCEEDED");
  EXPECT_EQ(r0["stage_counts"]["succeeded"], 2) << r0.dump();
  EXPECT_TRUE(r0["wall_seconds"].is_number());
  EXPECT_GT(r0["gpu_hours"].get<double>(), 0.0);
  EXPECT_EQ(r0["summary_metrics"]["produce.loss"], 0.25);
  EXPECT_TRUE(r0["stages"].empty());
  EXPECT_EQ(list["next_page_token"], "");

  json detail = Parse(Get("/api/v1/runs/" + run));
  ASSERT_EQ(detail["stages"].size(), 2u);
  const json& produce = detail["stages"][0];
  EXPECT_EQ(produce["name"], "produce");
  EXPECT_EQ(produce["status"], "STAGE_SUCCEEDED");
  EXPECT_TRUE(produce["attempts"].empty());
  EXPECT_EQ(produce["outputs"]["count"], "3");
  EXPECT_GT(produce["wall_seconds"].get<double>(), 0.1);
  EXPECT_NEAR(produce["gpu_hours"].get<double>(), produce["wall_seconds"].get<double>() / 3600.0,
              1e-9);
  EXPECT_EQ(detail["stages"][1]["gpu_hours"], 0.0);
  ASSERT_EQ(produce["metrics"].size(), 1u);  // the latest per name only
  EXPECT_EQ(produce["metrics"][0]["value"], 0.25);

  EXPECT_EQ(detail["stage_counts"]["succeeded"], 2);
  EXPECT_EQ(detail["next_stage_page_token"], "");  // every stage is in this page

  // Stages a page at a time: the first of one stage, then on from its token, filtered.
  json counts_only = Parse(Get("/api/v1/runs/" + run + "?stages=-1"));
  EXPECT_TRUE(counts_only["stages"].empty());
  EXPECT_EQ(counts_only["stage_counts"]["succeeded"], 2);
  json page1 = Parse(Get("/api/v1/runs/" + run + "/stages?limit=1"));
  ASSERT_EQ(page1["stages"].size(), 1u);
  EXPECT_EQ(page1["stages"][0]["name"], "produce");
  ASSERT_NE(page1["next_page_token"], "");
  json page2 = Parse(Get("/api/v1/runs/" + run +
                         "/stages?limit=1&cursor=" + page1["next_page_token"].get<std::string>()));
  ASSERT_EQ(page2["stages"].size(), 1u);
  EXPECT_EQ(page2["stages"][0]["name"], "consume");
  EXPECT_EQ(page2["next_page_token"], "");
  json by_name = Parse(Get("/api/v1/runs/" + run + "/stages?name=consume&attempts=1"));
  ASSERT_EQ(by_name["stages"].size(), 1u);
  EXPECT_EQ(by_name["stages"][0]["attempts"].size(), 1u);
  EXPECT_TRUE(Parse(Get("/api/v1/runs/" + run + "/stages?status=failed"))["stages"].empty());
  auto bad_status = Get("/api/v1/runs/" + run + "/stages?status=sleepy");
  ASSERT_TRUE(bad_status.ok());
  EXPECT_EQ(bad_status->status, 400) << bad_status->body;

  json with = Parse(Get("/api/v1/runs/" + run + "?attempts=1"));
  EXPECT_EQ(with["stages"][0]["attempts"].size(), 1u);
  json attempts = Parse(Get("/api/v1/runs/" + run + "/stages/produce/attempts"));
  ASSERT_EQ(attempts["attempts"].size(), 1u);
  EXPECT_EQ(attempts["attempts"][0]["state"], "ATTEMPT_EXITED");
  EXPECT_EQ(attempts["attempts"][0]["number"], 1);

  json events = Parse(Get("/api/v1/runs/" + run + "/events?stage=produce&type=progress"));
  ASSERT_EQ(events["events"].size(), 3u);
  EXPECT_EQ(events["events"][0]["event"]["seq"].get<std::string>().empty(), false);

  // Metrics page on: the cursor of the last page gives only newer points.
  json m1 = Parse(Get("/api/v1/runs/" + run + "/stages/produce/metrics?limit=1"));
  ASSERT_EQ(m1["points"].size(), 1u);
  EXPECT_EQ(m1["points"][0]["value"], 0.5);
  json m2 = Parse(Get("/api/v1/runs/" + run +
                      "/stages/produce/metrics?after=" + m1["next_cursor"].get<std::string>()));
  ASSERT_EQ(m2["points"].size(), 1u);
  EXPECT_EQ(m2["points"][0]["value"], 0.25);
  json m3 = Parse(Get("/api/v1/runs/" + run +
                      "/stages/produce/metrics?after=" + m2["next_cursor"].get<std::string>()));
  EXPECT_TRUE(m3["points"].empty());
  EXPECT_EQ(m3["next_cursor"], m2["next_cursor"]);

  auto log = Get("/api/v1/runs/" + run + "/stages/produce/logs?offset=0");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->status, 200);
  EXPECT_EQ(log->Header("content-type"), "text/plain; charset=utf-8");
  EXPECT_NE(log->body.find("made 3"), std::string::npos) << log->body;
  EXPECT_EQ(log->Header("x-longhaul-offset"), "0");
  EXPECT_EQ(log->Header("x-longhaul-next-offset"), std::to_string(log->body.size()));
  EXPECT_EQ(log->Header("x-longhaul-finished"), "true");
  EXPECT_EQ(log->Header("x-longhaul-attempt"), "1");
  // Search: the whole log, by line, with each match's byte offset.
  json found = Parse(Get("/api/v1/runs/" + run + "/stages/produce/logs/search?q=MADE&icase=1"));
  ASSERT_EQ(found["matches"].size(), 1u) << found.dump();
  EXPECT_EQ(found["matches"][0]["line"], "made 3");
  EXPECT_EQ(found["matches"][0]["offset"], log->body.find("made 3"));
  EXPECT_EQ(found["more"], false);
  EXPECT_EQ(found["finished"], true);
  EXPECT_EQ(found["end_offset"], log->body.size());
  EXPECT_TRUE(
      Parse(Get("/api/v1/runs/" + run + "/stages/produce/logs/search?q=MADE"))["matches"].empty());
  auto bad = Get("/api/v1/runs/" + run + "/stages/produce/logs/search?q=made+(&regex=1");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("query parameter 'q' 'made (': not a regular expression"),
            std::string::npos)
      << bad->body;
  auto empty = Get("/api/v1/runs/" + run + "/stages/produce/logs/search");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->status, 400);
  auto download = Get("/api/v1/runs/" + run + "/stages/produce/logs?download=1");
  ASSERT_TRUE(download.ok());
  EXPECT_NE(download->Header("content-disposition").find("attachment"), std::string::npos);
  EXPECT_EQ(download->body, log->body);

  json agents = Parse(Get("/api/v1/agents"));
  ASSERT_EQ(agents["agents"].size(), 1u);
  EXPECT_EQ(agents["agents"][0]["state"], "AGENT_CONNECTED");
  ASSERT_EQ(agents["agents"][0]["gpus"].size(), 2u);  // --gpus 2: one entry per GPU
  EXPECT_EQ(agents["agents"][0]["gpus"][1]["index"], 1);
  EXPECT_EQ(agents["agents"][0]["gpus"][1]["attempt_id"], "0");  // free

  // Pivot: a dry run plans only, and says what reusing produce saves.
  json plan = Parse(Post("/api/v1/runs/" + run + "/pivot",
                         {{"params", {{"n", "3"}}}, {"from_stage", "consume"}, {"dry_run", true}}));
  ASSERT_EQ(plan["plan"].size(), 2u) << plan.dump();
  EXPECT_EQ(plan["plan"][0]["action"], "reuse");
  EXPECT_EQ(plan["plan"][0]["saved_wall_seconds"], produce["wall_seconds"]);
  EXPECT_EQ(plan["plan"][0]["saved_gpu_hours"], produce["gpu_hours"]);
  EXPECT_FALSE(plan.contains("run"));  // a dry run stores nothing
  json pivot = Parse(Post("/api/v1/runs/" + run + "/pivot", {{"params", {{"n", "4"}}}}));
  std::string child = pivot["run"]["id"].get<std::string>();
  ASSERT_TRUE(cluster().WaitForRunEnd(std::stoll(child)).ok());
  json children = Parse(Get("/api/v1/runs/" + run + "/children"));
  ASSERT_EQ(children["runs"].size(), 1u);
  EXPECT_EQ(children["runs"][0]["id"], child);
  EXPECT_EQ(children["runs"][0]["parent_run_id"], run);
  json by_param = Parse(Get("/api/v1/runs?param=n=4"));
  ASSERT_EQ(by_param["runs"].size(), 1u);
  EXPECT_EQ(by_param["runs"][0]["id"], child);
  json by_id = Parse(Get("/api/v1/runs?id=" + run));
  ASSERT_EQ(by_id["runs"].size(), 1u);
  EXPECT_EQ(by_id["runs"][0]["id"], run);

  // A succeeded stage cannot be retried: the scheduler's rule, as a 409.
  auto retry = Post("/api/v1/runs/" + run + "/retry", {{"stage", "consume"}});
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->status, 409) << retry->body;
  EXPECT_EQ(Parse(retry)["code"], "FAILED_PRECONDITION");

  int64_t long_id = Submit(kLongWorkflow);
  std::string long_run = std::to_string(long_id);
  json cancelled = Parse(Post("/api/v1/runs/" + long_run + "/cancel", json::object()));
  EXPECT_EQ(cancelled["id"], long_run);
  auto ended = cluster().WaitForRunEnd(long_id);
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->status(), v1::RUN_CANCELLED);
  json retried = Parse(Post("/api/v1/runs/" + long_run + "/retry", json::object()));
  EXPECT_EQ(retried["id"], long_run);

  // Without tokens every mutation is in the audit trail too, by "local" (a loopback caller).
  json audit;
  ASSERT_TRUE(WaitFor(
      [&] {
        audit = Parse(Get("/api/v1/audit?limit=1"));
        return audit["entries"].size() == 1 && audit["entries"][0]["result"] == "OK" &&
               audit["entries"][0]["action"] == "RetryStage";
      },
      20'000))
      << audit.dump();
  EXPECT_EQ(audit["entries"][0]["principal"], "local");
  EXPECT_EQ(audit["entries"][0]["role"], "admin");
  EXPECT_EQ(audit["entries"][0]["target"], "run " + long_run);
}

TEST_F(HttpApiTest, ErrorsAreJsonWithTheirCode) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto unknown = Get("/api/v1/nothing/here");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(unknown->Header("content-type"), "application/json");
  EXPECT_EQ(Parse(unknown)["code"], "NOT_FOUND");
  auto no_run = Get("/api/v1/runs/999");
  ASSERT_TRUE(no_run.ok());
  EXPECT_EQ(no_run->status, 404);
  EXPECT_EQ(Parse(no_run)["error"], "no run 999");
  auto bad = Get("/api/v1/runs?limit=ten");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_EQ(Parse(bad)["code"], "INVALID_ARGUMENT");
  auto broken = Post("/api/v1/runs", {{"workflow_text", "name: x\nstages: {a: {nope: 1}}\n"}});
  ASSERT_TRUE(broken.ok());
  EXPECT_EQ(broken->status, 400) << broken->body;
  auto not_json = HttpRequest(addr_, "POST", "/api/v1/runs", "{oops");
  ASSERT_TRUE(not_json.ok());
  EXPECT_EQ(not_json->status, 400);
  EXPECT_NE(Parse(not_json)["error"].get<std::string>().find("body"), std::string::npos);
}

// GET .../stages/{stage}/lineage: a pivot from `consume` reuses `produce`; the first run's
// produce is then used by its own consume and reused by the pivot, which made its consume
// from it. The same answer `longhaul lineage` prints.
TEST_F(HttpApiTest, LineageNamesTheRunsThatReusedAResultAndWhatTheyMade) {
  ASSERT_NO_FATAL_FAILURE(Start());
  int64_t first = Submit(kWorkflow);
  ASSERT_TRUE(cluster().WaitForRunEnd(first).ok());
  std::string run = std::to_string(first);
  json pivot = Parse(Post("/api/v1/runs/" + run + "/pivot", {{"from_stage", "consume"}}));
  std::string second = pivot["run"]["id"].get<std::string>();
  ASSERT_TRUE(cluster().WaitForRunEnd(std::stoll(second)).ok());

  json made = Parse(Get("/api/v1/runs/" + run + "/stages/produce/lineage"));
  EXPECT_EQ(made["stage"], "produce");
  EXPECT_EQ(made["status"], "STAGE_SUCCEEDED");
  EXPECT_EQ(made["made_by"]["run_id"], run);
  EXPECT_EQ(made["made_by"]["how"], "fresh");
  EXPECT_EQ(made["made_by"]["attempt"], 1);
  EXPECT_EQ(made["inputs"].size(), 0u);
  ASSERT_EQ(made["used_by"].size(), 2u) << made.dump();
  EXPECT_EQ(made["used_by"][0]["run_id"], run);
  EXPECT_EQ(made["used_by"][0]["stage"], "consume");
  EXPECT_EQ(made["used_by"][0]["how"], "needs it");
  EXPECT_EQ(made["used_by"][1]["run_id"], second);
  EXPECT_EQ(made["used_by"][1]["how"], "reused this result");
  EXPECT_EQ(made["used_by"][1]["status"], "STAGE_CACHED");
  EXPECT_EQ(made["used_by"][1]["produced"], json::array({"consume"}));

  // The pivot's consume: its input was made by the first run, reused here.
  json input = Parse(Get("/api/v1/runs/" + second + "/stages/consume/lineage"));
  ASSERT_EQ(input["inputs"].size(), 1u) << input.dump();
  EXPECT_EQ(input["inputs"][0]["needs"], "produce");
  EXPECT_EQ(input["inputs"][0]["made_by"]["run_id"], run);
  EXPECT_EQ(input["inputs"][0]["made_by"]["how"], "reused");
  EXPECT_EQ(input["made_by"]["how"], "fresh");

  auto missing = Get("/api/v1/runs/" + run + "/stages/nope/lineage");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Parse(missing)["error"], "run " + run + " has no stage 'nope'");
  // A stage without foreach is no sweep.
  auto no_sweep = Get("/api/v1/runs/" + run + "/sweeps/produce");
  ASSERT_TRUE(no_sweep.ok());
  EXPECT_EQ(no_sweep->status, 400) << no_sweep->body;
  EXPECT_NE(no_sweep->body.find("not a sweep"), std::string::npos) << no_sweep->body;
}

TEST_F(HttpApiTest, KeysetPagingReachesTheOldestRun) {
  ASSERT_NO_FATAL_FAILURE(Start());
  std::vector<std::string> ids;
  for (int i = 0; i < 7; ++i) {
    ids.push_back(std::to_string(Submit("name: tiny\nstages:\n  a:\n    run: [lh-testjob]\n")));
  }
  std::vector<std::string> seen;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    json j = Parse(Get("/api/v1/runs?limit=3&cursor=" + cursor));
    for (const auto& r : j["runs"]) seen.push_back(r["id"].get<std::string>());
    cursor = j["next_page_token"].get<std::string>();
    if (cursor.empty()) break;
  }
  std::vector<std::string> newest_first(ids.rbegin(), ids.rend());
  EXPECT_EQ(seen, newest_first);
}

TEST_F(HttpApiTest, PostFromAnotherOriginIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto other =
      HttpRequest(addr_, "POST", "/api/v1/runs", "{}", {{"Origin", "http://evil.example:8080"}});
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->status, 403);
  EXPECT_EQ(Parse(other)["code"], "PERMISSION_DENIED");
  auto same = HttpRequest(addr_, "POST", "/api/v1/runs", "{\"dry_run\": true}",
                          {{"Origin", "http://" + addr_}});
  ASSERT_TRUE(same.ok());
  EXPECT_NE(same->status, 403) << same->body;  // past the check (the empty workflow is bad)
}

TEST_F(HttpApiTest, WatchSendsSnapshotUpdatesAndEndWithIds) {
  ASSERT_NO_FATAL_FAILURE(Start({"--sse-heartbeat", "100ms"}));
  int64_t id = Submit(kSlowWorkflow);
  std::string target = StrCat("/api/v1/runs/", id, "/watch");
  auto stream = SseClient::Open(addr_, target);
  ASSERT_TRUE(stream.ok()) << stream.status().message();
  auto first = (*stream)->Next();
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->event, "snapshot");
  json snap = json::parse(first->data);
  EXPECT_EQ(snap["snapshot"], true);
  EXPECT_EQ(snap["run"]["stages"].size(), 2u);
  std::vector<SseEvent> events = {*first};
  for (;;) {
    auto ev = (*stream)->Next(30'000);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    events.push_back(*ev);
    if (ev->event == "end") break;
    EXPECT_EQ(ev->event, "update");
  }
  EXPECT_EQ((*stream)->Next().status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_GT((*stream)->comments(), 0);  // heartbeats while the stage slept
  ASSERT_GE(events.size(), 3u);
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GT(std::stoll(events[i].id), std::stoll(events[i - 1].id));
  }
  json last_update = json::parse(events[events.size() - 2].data);
  EXPECT_EQ(last_update["run"]["status"], "RUN_SUCCEEDED");
  EXPECT_EQ(events.back().data, "{}");

  // A watch of an ended run: snapshot, then end.
  auto again = SseClient::Open(addr_, target);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->Next()->event, "snapshot");
  EXPECT_EQ((*again)->Next()->event, "end");

  auto missing = SseClient::Open(addr_, "/api/v1/runs/4242/watch");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("status 404"), std::string::npos);
}

TEST_F(HttpApiTest, LastEventIdResumesWithWhatFollowed) {
  ASSERT_NO_FATAL_FAILURE(Start());
  int64_t id = Submit(kSlowWorkflow);
  std::string target = StrCat("/api/v1/runs/", id, "/watch");
  // A first stream keeps the run's feed (and its history) alive throughout.
  auto keeper = SseClient::Open(addr_, target);
  ASSERT_TRUE(keeper.ok());
  auto snap = (*keeper)->Next();
  ASSERT_TRUE(snap.ok());
  auto update = (*keeper)->Next(30'000);
  ASSERT_TRUE(update.ok());
  ASSERT_EQ(update->event, "update");
  // Reconnect as of the snapshot: the first thing is the update the keeper saw, not a snapshot.
  auto resumed = SseClient::Open(addr_, target, snap->id);
  ASSERT_TRUE(resumed.ok());
  auto next = (*resumed)->Next();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->event, "update");
  EXPECT_EQ(next->id, update->id);
  EXPECT_EQ(next->data, update->data);
  // An id the server never gave: a snapshot.
  auto stale = SseClient::Open(addr_, target, "17");
  ASSERT_TRUE(stale.ok());
  EXPECT_EQ((*stale)->Next()->event, "snapshot");
}

TEST_F(HttpApiTest, StreamsPastTheCapGet503) {
  ASSERT_NO_FATAL_FAILURE(Start({"--http-max-streams", "2"}));
  int64_t id = Submit(kLongWorkflow);
  std::string target = StrCat("/api/v1/runs/", id, "/watch");
  auto a = SseClient::Open(addr_, target);
  auto b = SseClient::Open(addr_, target);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Next().ok());
  ASSERT_TRUE((*b)->Next().ok());
  auto c = SseClient::Open(addr_, target);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("status 503"), std::string::npos) << c.status();
  // Closing one frees its place.
  a->reset();
  bool reopened = WaitFor([&] { return SseClient::Open(addr_, target).ok(); }, 10'000, 50);
  EXPECT_TRUE(reopened);
}

TEST_F(HttpApiTest, ServesTheUiFilesWithTheirTypes) {
  TempDir ui;
  WriteTextFile(ui.Join("index.html"), "<!doctype html><title>ui</title>");
  std::filesystem::create_directories(ui.Join("assets"));
  WriteTextFile(ui.Join("assets/app-1234.js"), "console.log(1)");
  WriteTextFile(ui.Join("assets/app-1234.css"), "body{}");
  ASSERT_NO_FATAL_FAILURE(Start({"--ui-dir", ui.path()}));
  auto index = Get("/");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(index->body, "<!doctype html><title>ui</title>");
  auto route = Get("/runs/12");  // a client-side route: the app's page
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(route->body, index->body);
  auto js = Get("/assets/app-1234.js");
  ASSERT_TRUE(js.ok());
  EXPECT_EQ(js->Header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js->body, "console.log(1)");
  EXPECT_EQ(Get("/assets/app-1234.css")->Header("content-type"), "text/css; charset=utf-8");
  EXPECT_EQ(Get("/assets/nope.js")->status, 404);
  EXPECT_EQ(Get("/assets/../../etc/passwd")->status, 400);  // http_paths_test has the rest
  auto health = Get("/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->body, "ok");
}

// Found by tests/fuzz/http_fuzzer: an error body that echoed a decoded path which is not
// UTF-8 threw from nlohmann's dump() and ended longhauld.
TEST_F(HttpApiTest, PathsThatAreNotUtf8GetJsonErrorsAndLonghauldStaysUp) {
  ASSERT_NO_FATAL_FAILURE(Start());
  for (const char* target : {"/assets/%FF.js", "/api/v1/%FF", "/api/%FE%FF"}) {
    auto r = Get(target);
    ASSERT_TRUE(r.ok()) << target << ": " << r.status().message();
    EXPECT_EQ(r->status, 404) << target;
    EXPECT_NE(Parse(r)["error"].get<std::string>().find("\xEF\xBF\xBD"), std::string::npos)
        << target << ": the byte shows as U+FFFD: " << r->body;
  }
  auto health = Get("/healthz");
  ASSERT_TRUE(health.ok()) << health.status().message();
  EXPECT_EQ(health->body, "ok");
}

TEST_F(HttpApiTest, BuiltInUiIsServedWithoutUiDir) {
  ASSERT_NO_FATAL_FAILURE(Start());
  auto index = Get("/");
  ASSERT_TRUE(index.ok());
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->Header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(index->body.find("<html"), std::string::npos);
}

}  // namespace
}  // namespace longhaul::testing
