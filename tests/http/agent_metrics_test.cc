// longhaul-agent's /metrics on a real cluster: the agent listens on --metrics-listen
// 127.0.0.1:0 and writes the bound address to STATE/metrics.addr; the exposition is parsed as
// strictly as longhauld's, and its values are checked against a run whose numbers are known
// (three stages, each writing a known number of events) and against the files on disk.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include "core/strings.h"
#include "tests/http/exposition.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

namespace fs = std::filesystem;

struct Tree {
  int64_t file_bytes = 0;  // sum of the regular files' sizes
  int64_t entries = 0;     // files and directories
};

// What is under `root`, measured here by size, independently of the agent's st_blocks walk.
Tree Measure(const std::string& root) {
  Tree t;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    ++t.entries;
    struct stat st;
    if (::lstat(it->path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) t.file_bytes += st.st_size;
  }
  return t;
}

class AgentMetricsTest : public ClusterTest {
 protected:
  void StartWithMetrics() {
    ClusterOptions o;
    o.agent_flags = {"--metrics-listen", "127.0.0.1:0", "--metrics-disk-interval", "100ms"};
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
    addr_ =
        std::string(StripWhitespace(ReadTextFile(cluster().AgentStateDir(0) + "/metrics.addr")));
    ASSERT_FALSE(addr_.empty()) << "the agent wrote no STATE/metrics.addr";
  }

  // One scrape, parsed strictly; fails the test when the answer is not a good exposition.
  Exposition Scrape() {
    Exposition e;
    Result<HttpResult> r = HttpRequest(addr_, "GET", "/metrics");
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return e;
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_EQ(r->Header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    ParseExposition(r->body, e);
    last_body_ = r->body;
    return e;
  }

  // Scrapes until `done` holds for the exposition (or a scrape fails), up to 20 s; the last
  // one either way.
  Exposition ScrapeUntil(const std::function<bool(const Exposition&)>& done) {
    Exposition e;
    WaitFor(
        [&] {
          e = Scrape();
          return HasFailure() || done(e);
        },
        20'000, 50);
    return e;
  }

  static double Get(const Exposition& e, const std::string& series) {
    auto it = e.samples.find(series);
    return it == e.samples.end() ? NAN : it->second;
  }

  std::string addr_;
  std::string last_body_;
};

TEST_F(AgentMetricsTest, CountsARunAndMeasuresTheAttemptDirs) {
  ASSERT_NO_FATAL_FAILURE(StartWithMetrics());

  Result<HttpResult> health = HttpRequest(addr_, "GET", "/healthz");
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->body, "ok");

  // Before any work: connected (the coordinator lists it), nothing started.
  Exposition before = Scrape();
  ASSERT_FALSE(HasFailure()) << last_body_;
  EXPECT_EQ(SeriesValue(before, "longhaul_agent_connected"), 1);
  EXPECT_EQ(SeriesValue(before, "longhaul_agent_attempts_started_total"), 0);
  EXPECT_EQ(SeriesValue(before, "longhaul_agent_attempts_running"), 0);

  Result<int64_t> id = cluster().Submit(
      "name: agentmetrics\n"
      "stages:\n"
      "  a:\n"
      "    run: [lh-testjob, --events, '30']\n"
      "  b:\n"
      "    run: [lh-testjob, --events, '20']\n"
      "    needs: [a]\n"
      "  c:\n"
      "    run: [lh-testjob, --events, '10']\n"
      "    needs: [a]\n");
  ASSERT_TRUE(id.ok()) << id.status();
  Result<v1::Run> run = cluster().WaitForRunEnd(*id);
  ASSERT_TRUE(run.ok()) << run.status();
  ASSERT_EQ(run->status(), v1::RUN_SUCCEEDED) << DescribeRun(*run);

  // Every event acknowledged (the heartbeat refreshes the lag), and a measurement of the
  // attempt dirs taken after their last change: within a block per entry of their files'
  // sizes.
  std::string attempts_dir = cluster().AgentStateDir(0) + "/attempts";
  Tree tree;
  Exposition e = ScrapeUntil([&](const Exposition& x) {
    tree = Measure(attempts_dir);
    double bytes = Get(x, "longhaul_agent_attempt_dir_bytes");
    return Get(x, "longhaul_agent_events_in_flight") == 0 &&
           Get(x, "longhaul_agent_event_lag_seconds") == 0 && bytes >= tree.file_bytes &&
           bytes <= tree.file_bytes + (tree.entries + 1) * 8192.0;
  });
  ASSERT_FALSE(HasFailure()) << last_body_;

  EXPECT_EQ(SeriesValue(e, "longhaul_agent_connected"), 1);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_attempts_started_total"), 3);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_attempts_exited_total"), 3);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_attempts_running"), 0);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_events_in_flight"), 0);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_event_lag_seconds"), 0);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_disk_full"), 0);
  // No reconnect, so no line was read or sent twice: what the coordinator stored.
  Result<std::string> stored = cluster().Query("SELECT count(*) FROM events");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_GE(std::stod(*stored), 60);
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_events_read_total"), std::stod(*stored));
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_events_sent_total"), std::stod(*stored));
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_events_acked_total"), std::stod(*stored));

  double bytes = SeriesValue(e, "longhaul_agent_attempt_dir_bytes");
  EXPECT_GT(tree.file_bytes, 0);
  EXPECT_GE(bytes, tree.file_bytes) << tree.entries << " entries";
  EXPECT_LE(bytes, tree.file_bytes + (tree.entries + 1) * 8192.0) << tree.entries << " entries";

  struct statvfs vfs;
  ASSERT_EQ(::statvfs(cluster().AgentStateDir(0).c_str(), &vfs), 0);
  double free_bytes = SeriesValue(e, "longhaul_agent_state_free_bytes");
  EXPECT_GT(free_bytes, 0);
  EXPECT_LE(free_bytes, static_cast<double>(vfs.f_blocks) * static_cast<double>(vfs.f_frsize));

  // The Grafana dashboard asks only for agent series the agent serves.
  int asked = 0;
  for (const auto& [title, metric] : DashboardMetrics()) {
    if (metric.rfind("longhaul_agent_", 0) != 0) continue;
    ++asked;
    EXPECT_TRUE(e.types.count(FamilyOf(metric, e.types)))
        << title << ": " << metric << " is not served by the agent";
  }
  EXPECT_GE(asked, 5);
}

TEST_F(AgentMetricsTest, AnswersOnlyGetOfItsPaths) {
  ASSERT_NO_FATAL_FAILURE(StartWithMetrics());
  Result<HttpResult> missing = HttpRequest(addr_, "GET", "/api/v1/runs");
  ASSERT_TRUE(missing.ok()) << missing.status();
  EXPECT_EQ(missing->status, 404) << missing->body;
  Result<HttpResult> post = HttpRequest(addr_, "POST", "/metrics");
  ASSERT_TRUE(post.ok()) << post.status();
  EXPECT_EQ(post->status, 405) << post->body;
  EXPECT_EQ(post->Header("allow"), "GET, HEAD");
  // The agent goes on with its work: a scrape after them is still well-formed.
  Exposition e = Scrape();
  ASSERT_FALSE(HasFailure()) << last_body_;
  EXPECT_EQ(SeriesValue(e, "longhaul_agent_connected"), 1);
}

}  // namespace
}  // namespace longhaul::testing
