// Coordinator figures with the real binaries on loopback (the integration tests' Cluster:
// longhauld, agents, shims and lh-testjob stages, each its own process):
//
//  (a) Event ingest. One run of A stages, each an attempt that writes N progress lines as fast
//      as it can (lh-testjob --events N), through the agents into longhauld. Counted in SQLite
//      (a read-only connection on the coordinator's database): events committed per second
//      from the first committed event to the last, the same over the whole wall time from
//      submission, and the drain: from the moment the last stage had ended (its exit.json
//      time) until its last event was committed.
//  (b) Idle load. Q quiet attempts (lh-testjob --sleep) running on the agents; longhauld's
//      CPU time (utime + stime of /proc/PID/stat) over windows of W seconds, as a share of
//      one core. The agents' CPU over the same window is printed beside it.
//
// Each figure is printed per round or window, then as the median.
//
//   ingest_bench [--attempts 100] [--events 10000] [--rounds 5] [--agents 4]
//                [--quiet 1000] [--window 30] [--windows 3] [--skip-ingest] [--skip-idle]
//
// Run it on an otherwise idle machine: every process of the cluster shares its cores, so other
// load lowers (a) and raises nothing in (b) but the noise. $TMPDIR holds the state dirs.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

struct Flags {
  int attempts = 100;
  int64_t events = 10000;
  int rounds = 5;
  int agents = 4;
  int quiet = 1000;
  int window_s = 30;
  int windows = 3;
  bool ingest = true;
  bool idle = true;
};

int64_t NowMs() { return SystemClock::Get()->NowMs(); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A read-only view of the coordinator's database.
class Db {
 public:
  explicit Db(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "cannot open %s\n", path.c_str());
      std::exit(1);
    }
    sqlite3_busy_timeout(db_, 5'000);
  }
  ~Db() { sqlite3_close(db_); }
  // One integer from a query with one `?` bound to `arg`.
  int64_t Int(const char* sql, int64_t arg) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) {
      std::fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db_));
      std::exit(1);
    }
    sqlite3_bind_int64(st, 1, arg);
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return v;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Submits `yaml` with no_cache (every round really runs); exits on error.
int64_t SubmitNoCache(Cluster& c, const std::string& yaml) {
  v1::SubmitRunRequest req;
  req.set_workflow_text(yaml);
  req.set_workflow_path("<ingest_bench>");
  req.set_no_cache(true);
  v1::SubmitRunResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::Status st = c.stub().SubmitRun(&ctx, req, &resp);
  if (!st.ok()) {
    std::fprintf(stderr, "SubmitRun: %s\n", st.error_message().c_str());
    std::exit(1);
  }
  return resp.run().id();
}

std::string ManyStages(int n, const std::string& run) {
  std::string yaml = "name: bench\nstages:\n";
  for (int i = 0; i < n; ++i) yaml += StrCat("  s", i, ":\n    run: ", run, "\n");
  return yaml;
}

ClusterOptions BenchCluster(const Flags& f, int attempts) {
  ClusterOptions o;
  o.agents = f.agents;
  o.cpus = attempts / f.agents + 1;
  // Production defaults, except that nothing in a benchmark should ever be declared lost.
  o.heartbeat = "1s";
  o.agent_timeout = "15s";
  o.lost_after = "10m";
  o.log_level = "info";
  o.start_timeout_ms = 60'000;
  return o;
}

void Ingest(const Flags& f) {
  Cluster c(BenchCluster(f, f.attempts));
  if (Status st = c.Start(); !st.ok()) {
    std::fprintf(stderr, "cluster: %s\n%s\n", ToStd(st.message()).c_str(), c.Logs().c_str());
    std::exit(1);
  }
  Db db(c.db_path());
  const int64_t total = f.attempts * f.events;
  std::string yaml = ManyStages(f.attempts, StrCat("[lh-testjob, --events, '", f.events, "']"));
  std::printf("(a) event ingest: %d attempts x %lld events = %lld events per round, %d agents\n",
              f.attempts, static_cast<long long>(f.events), static_cast<long long>(total),
              f.agents);
  std::vector<double> rates, wall_rates, drains;
  auto agents_cpu = [&c] {
    double sum = 0;
    for (int i = 0; i < c.agent_count(); ++i) sum += ProcessCpuSeconds(c.agent_pid(i));
    return sum;
  };
  for (int round = 1; round <= f.rounds; ++round) {
    double coord_cpu0 = ProcessCpuSeconds(c.coordinator_pid()), agents_cpu0 = agents_cpu();
    int64_t t0 = NowMs();
    int64_t id = SubmitNoCache(c, yaml);
    int64_t first = 0, committed = 0, t_end = 0;
    while (NowMs() - t0 < 300'000) {
      committed = db.Int("SELECT coalesce(sum(events), 0) FROM attempts WHERE run_id = ?", id);
      int64_t now = NowMs();
      if (committed > 0 && first == 0) first = now;
      if (committed >= total) {
        t_end = now;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (t_end == 0) {
      std::fprintf(stderr, "round %d: only %lld of %lld events after 300 s\n%s\n", round,
                   static_cast<long long>(committed), static_cast<long long>(total),
                   c.Logs().c_str());
      std::exit(1);
    }
    double coord_cpu = ProcessCpuSeconds(c.coordinator_pid()) - coord_cpu0;
    double agent_cpu = agents_cpu() - agents_cpu0;
    // attempts.events is the highest seq stored; the rows themselves must agree.
    int64_t rows = db.Int(
        "SELECT count(*) FROM events WHERE attempt_id IN "
        "(SELECT id FROM attempts WHERE run_id = ?)",
        id);
    Result<v1::Run> run = c.WaitForRunEnd(id, 120'000);
    if (!run.ok() || run->status() != v1::RUN_SUCCEEDED || rows != total) {
      std::fprintf(stderr, "round %d: %lld event rows for %lld; %s\n", round,
                   static_cast<long long>(rows), static_cast<long long>(total),
                   run.ok() ? DescribeRun(*run).c_str() : ToStd(run.status().message()).c_str());
      std::exit(1);
    }
    int64_t last_exit = 0;
    for (const v1::Stage& s : run->stages()) {
      for (const v1::Attempt& a : s.attempts()) last_exit = std::max(last_exit, a.ended_at_ms());
    }
    double window_s = std::max<int64_t>(t_end - first, 1) / 1000.0;
    double wall_s = std::max<int64_t>(t_end - t0, 1) / 1000.0;
    double drain_ms = static_cast<double>(t_end - last_exit);
    rates.push_back(static_cast<double>(total) / window_s);
    wall_rates.push_back(static_cast<double>(total) / wall_s);
    drains.push_back(drain_ms);
    std::printf(
        "  round %d: %lld events in %.2f s from the first committed (%.0f events/s); "
        "%.2f s from submission (%.0f events/s); drain after the last stage ended %.0f ms; "
        "CPU longhauld %.2f s (%.1f us/event), agents %.2f s\n",
        round, static_cast<long long>(rows), window_s, rates.back(), wall_s, wall_rates.back(),
        drain_ms, coord_cpu, 1e6 * coord_cpu / static_cast<double>(total), agent_cpu);
    std::fflush(stdout);
  }
  std::printf(
      "  median: %.0f events/s committed (first to last event), %.0f events/s from "
      "submission, drain %.0f ms\n",
      Median(rates), Median(wall_rates), Median(drains));
}

void Idle(const Flags& f) {
  Cluster c(BenchCluster(f, f.quiet));
  if (Status st = c.Start(); !st.ok()) {
    std::fprintf(stderr, "cluster: %s\n%s\n", ToStd(st.message()).c_str(), c.Logs().c_str());
    std::exit(1);
  }
  Db db(c.db_path());
  std::printf("(b) idle load: %d quiet attempts (lh-testjob --sleep 3600) on %d agents\n", f.quiet,
              f.agents);
  int64_t t0 = NowMs();
  int64_t id = SubmitNoCache(c, ManyStages(f.quiet, "[lh-testjob, --sleep, '3600']"));
  int64_t running = 0;
  while (NowMs() - t0 < 600'000) {
    running = db.Int("SELECT count(*) FROM attempts WHERE run_id = ? AND state = 'running'", id);
    if (running >= f.quiet) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (running < f.quiet) {
    std::fprintf(stderr, "only %lld of %d attempts running after 600 s\n%s\n",
                 static_cast<long long>(running), f.quiet, c.Logs().c_str());
    std::exit(1);
  }
  std::printf("  all %d running %.1f s after submission; settling 5 s\n", f.quiet,
              (NowMs() - t0) / 1000.0);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(5));
  pid_t coord = c.coordinator_pid();
  std::vector<double> shares;
  for (int w = 1; w <= f.windows; ++w) {
    double c0 = ProcessCpuSeconds(coord), a0 = 0;
    for (int i = 0; i < c.agent_count(); ++i) a0 += ProcessCpuSeconds(c.agent_pid(i));
    auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(f.window_s));
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double c1 = ProcessCpuSeconds(coord), a1 = 0;
    for (int i = 0; i < c.agent_count(); ++i) a1 += ProcessCpuSeconds(c.agent_pid(i));
    shares.push_back(100.0 * (c1 - c0) / secs);
    std::printf("  window %d: longhauld %.2f s CPU in %.1f s = %.2f %% of a core; agents %.2f %%\n",
                w, c1 - c0, secs, shares.back(), 100.0 * (a1 - a0) / secs);
    std::fflush(stdout);
  }
  int64_t still =
      db.Int("SELECT count(*) FROM attempts WHERE run_id = ? AND state = 'running'", id);
  std::printf("  median: longhauld %.2f %% of a core with %lld attempts running\n", Median(shares),
              static_cast<long long>(still));
  v1::CancelRunRequest req;
  req.set_id(id);
  v1::Run out;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  c.stub().CancelRun(&ctx, req, &out);
  // The cluster's destructor kills whatever is left; waiting here only keeps the end tidy.
  if (Result<v1::Run> end = c.WaitForRunEnd(id, 120'000); !end.ok()) {
    std::fprintf(stderr, "after the cancel: %s\n", ToStd(end.status().message()).c_str());
  }
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> long long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: missing value\n", a.c_str());
        std::exit(2);
      }
      return std::atoll(argv[++i]);
    };
    if (a == "--attempts") {
      f.attempts = static_cast<int>(value());
    } else if (a == "--events") {
      f.events = value();
    } else if (a == "--rounds") {
      f.rounds = static_cast<int>(value());
    } else if (a == "--agents") {
      f.agents = static_cast<int>(value());
    } else if (a == "--quiet") {
      f.quiet = static_cast<int>(value());
    } else if (a == "--window") {
      f.window_s = static_cast<int>(value());
    } else if (a == "--windows") {
      f.windows = static_cast<int>(value());
    } else if (a == "--skip-ingest") {
      f.ingest = false;
    } else if (a == "--skip-idle") {
      f.idle = false;
    } else {
      std::fprintf(stderr,
                   "unknown argument '%s'\nusage: ingest_bench [--attempts 100] [--events 10000] "
                   "[--rounds 5] [--agents 4] [--quiet 1000] [--window 30] [--windows 3] "
                   "[--skip-ingest] [--skip-idle]\n",
                   a.c_str());
      return 2;
    }
  }
  if (f.attempts < 1 || f.events < 1 || f.rounds < 1 || f.agents < 1 || f.quiet < 1 ||
      f.window_s < 1 || f.windows < 1) {
    std::fprintf(stderr, "every count must be at least 1\n");
    return 2;
  }
  std::printf("ingest_bench on %ld CPUs, load average at start: %s",
              ::sysconf(_SC_NPROCESSORS_ONLN),
              [] {
                std::ifstream in("/proc/loadavg");
                std::string s;
                std::getline(in, s);
                return s + "\n";
              }()
                  .c_str());
  if (f.ingest) Ingest(f);
  if (f.idle) Idle(f);
  return 0;
}

}  // namespace
}  // namespace longhaul::testing

int main(int argc, char** argv) { return longhaul::testing::Main(argc, argv); }
