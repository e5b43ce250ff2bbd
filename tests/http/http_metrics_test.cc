// GET /metrics on a real cluster: the exposition is parsed as strictly as the text format
// (version 0.0.4) is defined, and its values are checked after a run whose numbers are known:
// one stage that reports progress, one that fails twice (a retry), so three attempts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "tests/http/exposition.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

// VmRSS of `pid` in bytes, from /proc/PID/status; 0 where it cannot be read.
double ResidentBytes(pid_t pid) {
  std::ifstream status(StrCat("/proc/", pid, "/status"));
  std::string key;
  double kb = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> kb;
      return kb * 1024;
    }
    status.ignore(1 << 10, '\n');
  }
  return 0;
}

TEST_F(ClusterTest, MetricsAreWellFormedAndCountARunWithARetry) {
  ClusterOptions o;
  o.gpus = 2;
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(
      "name: m\n"
      "stages:\n"
      "  work:\n"
      "    run: [lh-testjob, --events, '40']\n"
      "  flaky:\n"
      "    run: [lh-testjob, --exit, '3']\n"
      "    retry: {limit: 1, backoff: 1ms}\n");
  ASSERT_TRUE(id.ok()) << id.status();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->status(), v1::RUN_FAILED) << DescribeRun(*run);

  // Ready: the scheduler loop ran a batch and the store committed it.
  Result<HttpResult> ready = HttpRequest(cluster().http_address(), "GET", "/readyz");
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200) << ready->body;
  EXPECT_EQ(ready->body, "ok");

  Result<HttpResult> r = HttpRequest(cluster().http_address(), "GET", "/metrics");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  Exposition e;
  ParseExposition(r->body, e);
  ASSERT_FALSE(HasFailure()) << r->body;

  EXPECT_EQ(SeriesValue(e, "longhaul_runs{status=\"failed\"}"), 1);
  EXPECT_EQ(SeriesValue(e, "longhaul_runs{status=\"succeeded\"}"), 0);
  EXPECT_EQ(SeriesValue(e, "longhaul_attempts_started_total"), 3);
  EXPECT_EQ(SeriesValue(e, "longhaul_attempt_failures_total{reason=\"exit\"}"), 2);
  Result<std::string> events = cluster().Query("SELECT count(*) FROM events");
  ASSERT_TRUE(events.ok()) << events.status();
  EXPECT_EQ(SeriesValue(e, "longhaul_events_ingested_total"), std::stod(*events));
  EXPECT_GE(std::stod(*events), 40);
  EXPECT_EQ(SeriesValue(e, "longhaul_agents{state=\"connected\"}"), 1);
  EXPECT_EQ(SeriesValue(e, "longhaul_gpus{state=\"free\"}"), 2);
  EXPECT_EQ(SeriesValue(e, "longhaul_gpus{state=\"busy\"}"), 0);
  // longhauld's own memory, as /proc says it at about the same time.
  double resident = SeriesValue(e, "process_resident_memory_bytes");
  double proc_rss = ResidentBytes(cluster().coordinator_pid());
  EXPECT_GT(resident, proc_rss / 2);
  EXPECT_LT(resident, proc_rss * 2);
  EXPECT_GT(SeriesValue(e, "longhaul_anonymous_memory_bytes"), 0);
  EXPECT_LT(SeriesValue(e, "longhaul_anonymous_memory_bytes"), resident);
  EXPECT_GT(SeriesValue(e, "longhaul_malloc_bytes{state=\"in_use\"}"), 0);
  EXPECT_GE(SeriesValue(e, "longhaul_malloc_bytes{state=\"in_use\"}"),
            SeriesValue(e, "longhaul_malloc_bytes{state=\"mapped\"}"));
  // Every attempt had a handoff; the buckets only grow and end at the count.
  for (const char* h : {"longhaul_handoff_seconds", "longhaul_sqlite_commit_seconds"}) {
    EXPECT_EQ(e.types[h], "histogram");
    double count = SeriesValue(e, StrCat(h, "_count"));
    EXPECT_EQ(SeriesValue(e, StrCat(h, "_bucket{le=\"+Inf\"}")), count);
    std::vector<std::pair<double, double>> buckets;  // (le, cumulative count)
    std::string prefix = StrCat(h, "_bucket{le=\"");
    for (const auto& [series, v] : e.samples) {
      if (series.rfind(prefix, 0) != 0) continue;
      std::string le = series.substr(prefix.size(), series.size() - prefix.size() - 2);
      buckets.emplace_back(le == "+Inf" ? INFINITY : std::stod(le), v);
    }
    std::sort(buckets.begin(), buckets.end());
    ASSERT_GE(buckets.size(), 2u) << h;
    for (size_t i = 1; i < buckets.size(); ++i) {
      EXPECT_LE(buckets[i - 1].second, buckets[i].second) << h << " le=" << buckets[i].first;
    }
    EXPECT_EQ(buckets.back().second, count) << h;
  }
  EXPECT_EQ(SeriesValue(e, "longhaul_handoff_seconds_count"), 3);
  EXPECT_GT(SeriesValue(e, "longhaul_sqlite_commit_seconds_count"), 0);

  // The Grafana dashboard asks only for series longhauld serves (longhaul_agent_*: the
  // agents', tests/http/agent_metrics_test.cc).
  int asked = 0;
  for (const auto& [title, metric] : DashboardMetrics()) {
    if (metric.rfind("longhaul_agent_", 0) == 0) continue;
    ++asked;
    EXPECT_TRUE(e.types.count(FamilyOf(metric, e.types)))
        << title << ": " << metric << " is not served";
  }
  EXPECT_GE(asked, 10);
}

// Per team: the loopback client ("local") is of team vision, guaranteed 1 GPU and allowed to
// borrow a second; both of its stages run, one of them on the borrowed GPU.
TEST_F(ClusterTest, MetricsShowATeamsGpusInUseBorrowedAndItsDecayedHours) {
  ClusterOptions o;
  o.gpus = 2;
  o.coordinator_flags = {"--teams",
                         "local=vision",
                         "--quota",
                         "team:vision=gpus:1,borrow:2",
                         "--quota",
                         "team:nlp=gpus:1",
                         "--fair-share-half-life",
                         "1h"};
  ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  Result<int64_t> id = cluster().Submit(
      "name: v\n"
      "stages:\n"
      "  a: {run: [lh-testjob, --sleep, '60'], resources: {gpus: 1}}\n"
      "  b: {run: [lh-testjob, --sleep, '60'], resources: {gpus: 1}}\n");
  ASSERT_TRUE(id.ok()) << id.status();
  Result<v1::Run> both = cluster().WaitForRun(*id, [](const v1::Run& r) {
    return r.stages(0).status() == v1::STAGE_RUNNING && r.stages(1).status() == v1::STAGE_RUNNING;
  });
  ASSERT_TRUE(both.ok()) << both.status();

  Result<HttpResult> r = HttpRequest(cluster().http_address(), "GET", "/metrics");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  Exposition e;
  ParseExposition(r->body, e);
  ASSERT_FALSE(HasFailure()) << r->body;
  EXPECT_EQ(e.types["longhaul_team_gpus_in_use"], "gauge");
  EXPECT_EQ(SeriesValue(e, "longhaul_team_gpus_in_use{team=\"vision\"}"), 2);
  EXPECT_EQ(SeriesValue(e, "longhaul_team_gpus_borrowed{team=\"vision\"}"), 1);
  EXPECT_EQ(SeriesValue(e, "longhaul_team_gpus_in_use{team=\"nlp\"}"), 0) << "idle, shown";
  EXPECT_EQ(SeriesValue(e, "longhaul_team_gpus_borrowed{team=\"nlp\"}"), 0);
  EXPECT_GT(SeriesValue(e, "longhaul_team_fair_share_gpu_hours{team=\"vision\"}"), 0);
  EXPECT_EQ(SeriesValue(e, "longhaul_team_fair_share_gpu_hours{team=\"nlp\"}"), 0);
  CommandResult cancel = cluster().Cli({"cancel", std::to_string(*id)});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
}

}  // namespace
}  // namespace longhaul::testing
