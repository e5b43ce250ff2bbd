// The watch stream of a run bigger than one message: its snapshot arrives in pieces of at most
// kMaxStagesPerMessage stages ("snapshot", then "update"s, the last with snapshot_complete and
// an id to resume from), every stage exactly once and in the run's order; a second viewer of
// the same run gets the same.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "core/strings.h"
#include "proto/stage_merge.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

constexpr int kItems = 1250;  // 2 x 1250 sweep stages + prep + report: 2,502 stages

std::string SweepWorkflow() {
  std::string items;
  for (int i = 0; i < kItems; ++i) items += StrCat(i == 0 ? "" : ", ", i);
  return StrCat("name: pieces\nstages:\n  prep:\n    run: [/bin/true]\n  sweep:\n",
                "    foreach: {a: [", items, "], b: [x, y]}\n    needs: [prep]\n",
                "    run: [/bin/true]\n  report:\n    needs: [sweep]\n    run: [/bin/true]\n");
}

// Reads one watch's snapshot; returns the stage names in the order they came.
std::vector<std::string> ReadSnapshot(SseClient& stream) {
  std::vector<std::string> names;
  for (int piece = 0;; ++piece) {
    auto ev = stream.Next(60'000);
    EXPECT_TRUE(ev.ok()) << ev.status().message();
    if (!ev.ok()) return names;
    EXPECT_EQ(ev->event, piece == 0 ? "snapshot" : "update") << "piece " << piece;
    json j = json::parse(ev->data);
    EXPECT_EQ(j["snapshot"], piece == 0) << "piece " << piece;
    EXPECT_LE(j["run"]["stages"].size(), static_cast<size_t>(kMaxStagesPerMessage));
    for (const json& s : j["run"]["stages"]) names.push_back(s["name"]);
    if (j["snapshot_complete"] == true) {
      EXPECT_FALSE(ev->id.empty()) << "the last piece carries the id";
      return names;
    }
  }
}

class HttpWatchPieces : public ClusterTest {};

TEST_F(HttpWatchPieces, ABigRunsSnapshotComesInPiecesEveryStageOnceInOrder) {
  ClusterOptions o;
  o.agents = 0;  // every stage stays queued: the snapshot is the whole run
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  std::string addr = cluster().http_address();
  json req = {{"workflow_text", SweepWorkflow()}, {"workflow_path", "pieces.yaml"}};
  auto r = HttpRequest(addr, "POST", "/api/v1/runs", req.dump(), {}, 60'000);
  ASSERT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
  std::string id = json::parse(r->body)["run"]["id"];
  std::string target = StrCat("/api/v1/runs/", id, "/watch");

  auto one = SseClient::Open(addr, target, "", 60'000);
  ASSERT_TRUE(one.ok()) << one.status().message();
  auto two = SseClient::Open(addr, target, "", 60'000);
  ASSERT_TRUE(two.ok()) << two.status().message();
  std::vector<std::string> a = ReadSnapshot(**one);
  std::vector<std::string> b = ReadSnapshot(**two);
  ASSERT_EQ(a.size(), 2u * kItems + 2);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), a.size()) << "a stage came twice";
  EXPECT_EQ(a.front(), "prep");
  EXPECT_EQ(a.back(), "report");
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace longhaul::testing
