// The HTTP listener's figures, with the real binaries on loopback:
//
//  (a) API latency on a big store. R runs of S stages (one finished attempt each) written
//      straight through SqliteStore (no scheduler), then a real longhauld on that database:
//      GET /api/v1/runs?limit=50 (first page, and pages at random cursors) and
//      GET /api/v1/runs/{random id}, one client, each request timed end to end.
//  (b) Fan-out. C SSE clients (one thread each) watch one busy run: a stage that reports
//      P progress events over T seconds. Each client stamps every update on arrival; the
//      delay is arrival - the stage's progress.updated_at_ms (the agent's clock, same host).
//      Every client must see the same ids, in order.
//  (c) Idle streams. One quiet run (a sleeping stage), W-second windows of longhauld's CPU
//      (utime + stime) with 0 and then Q open watch streams, as a share of one core.
//
//   http_bench [--runs 100000] [--stages 10] [--requests 500] [--clients 100]
//              [--progress 200] [--seconds 20] [--quiet-streams 20] [--window 30]
//              [--skip-api] [--skip-fanout] [--skip-idle]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/strings.h"
#include "daemon/store/sqlite_store.h"
#include "tests/http/http_client.h"
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

using nlohmann::json;

struct Flags {
  int runs = 100'000, stages = 10, requests = 500, clients = 100, progress = 200, seconds = 20;
  int quiet_streams = 20, window = 30;
  bool api = true, fanout = true, idle = true;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double NowMsF() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Writes `runs` finished runs of `stages` stages, one attempt each, in transactions of 2,000.
Status Generate(const std::string& db, int runs, int stages) {
  ASSIGN_OR_RETURN(auto store, store::SqliteStore::Open(db));
  RETURN_IF_ERROR(store->Begin());
  ASSIGN_OR_RETURN(int64_t wf, store->PutWorkflow("bench", "name: bench\n", "bench-hash", 1));
  int64_t t = 1'700'000'000'000;
  for (int r = 0; r < runs; ++r) {
    store::RunRow run;
    run.workflow_id = wf;
    run.workflow_name = "bench";
    run.status = r % 10 == 9 ? v1::RUN_FAILED : v1::RUN_SUCCEEDED;
    run.params = {{"lr", std::to_string(r % 7)}, {"model", "m" + std::to_string(r % 3)}};
    run.created_at_ms = t;
    run.started_at_ms = t;
    run.ended_at_ms = t + 60'000;
    RETURN_IF_ERROR(store->InsertRun(&run));
    for (int s = 0; s < stages; ++s) {
      store::StageRow st;
      st.run_id = run.id;
      st.name = StrCat("stage", s);
      st.position = s;
      st.kind = "task";
      st.status = v1::STAGE_SUCCEEDED;
      st.resources.set_gpus(s % 2);
      if (s > 0) st.needs = {StrCat("stage", s - 1)};
      RETURN_IF_ERROR(store->InsertStage(&st));
      store::AttemptRow at;
      at.stage_id = st.id;
      at.run_id = run.id;
      at.number = 1;
      at.agent_id = "n0";
      at.state = v1::ATTEMPT_EXITED;
      at.created_at_ms = t;
      at.started_at_ms = t + s * 6'000;
      at.ended_at_ms = t + (s + 1) * 6'000;
      RETURN_IF_ERROR(store->InsertAttempt(&at));
      RETURN_IF_ERROR(store->InsertMetric({st.id, at.id, 1, "loss", 1.0 / (r + 1), 1, t}));
    }
    t += 1000;
    if (r % 2000 == 1999) {
      RETURN_IF_ERROR(store->Commit());
      RETURN_IF_ERROR(store->Begin());
    }
  }
  return store->Commit();
}

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("  %-34s n=%zu  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", what, ms.size(),
              Percentile(ms, 0.5), Percentile(ms, 0.99), Percentile(ms, 1.0));
}

int Api(const Flags& f) {
  TempDir dir;
  std::string db = dir.Join("longhaul.db");
  double t0 = NowMsF();
  if (Status s = Generate(db, f.runs, f.stages); !s.ok()) {
    std::fprintf(stderr, "generate: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("(a) API on %d runs x %d stages: generated in %.1f s\n", f.runs, f.stages,
              (NowMsF() - t0) / 1000);
  auto daemon = Subprocess::Start({BinPath("longhauld"), "--state-dir", dir.path(), "--listen",
                                   "127.0.0.1:0", "--http", "127.0.0.1:0", "--log-level",
                                   "warn"},
                                  {}, dir.Join("longhauld.log"));
  if (!daemon.ok()) return 1;
  std::string addr;
  WaitFor([&] { return !(addr = ReadTextFile(dir.Join("coordinator.addr"))).empty(); }, 60'000);
  addr = ReadTextFile(dir.Join("http.addr"));
  while (!addr.empty() && addr.back() == '\n') addr.pop_back();
  if (addr.empty()) {
    std::fprintf(stderr, "longhauld did not start; see %s\n", dir.Join("longhauld.log").c_str());
    return 1;
  }
  std::mt19937_64 rng(42);
  auto timed = [&](const std::string& target) {
    double a = NowMsF();
    auto r = HttpGet(addr, target);
    double ms = NowMsF() - a;
    if (!r.ok() || r->status != 200) {
      std::fprintf(stderr, "GET %s failed\n", target.c_str());
      std::exit(1);
    }
    return ms;
  };
  std::vector<double> first, deep, detail, filtered;
  for (int i = 0; i < f.requests; ++i) {
    first.push_back(timed("/api/v1/runs?limit=50"));
    deep.push_back(timed(StrCat("/api/v1/runs?limit=50&cursor=", 1 + rng() % f.runs)));
    detail.push_back(timed(StrCat("/api/v1/runs/", 1 + rng() % f.runs)));
    filtered.push_back(
        timed("/api/v1/runs?limit=50&status=failed&param=lr%3D3&metric=stage9.loss"));
  }
  Report("GET /runs?limit=50 (first page)", first);
  Report("GET /runs?limit=50&cursor=random", deep);
  Report("GET /runs/{random id}", detail);
  Report("GET /runs?status&param&metric", filtered);
  return 0;
}

constexpr char kBusy[] =
    "name: busy\nstages:\n  work:\n    run: [lh-testjob, --progress, '%d', --sleep, '%d']\n";

int Fanout(const Flags& f) {
  Cluster c;
  if (!c.Start().ok()) return 1;
  std::vector<char> text(256);
  std::snprintf(text.data(), text.size(), kBusy, f.progress, f.seconds);
  auto id = c.Submit(text.data());
  if (!id.ok()) return 1;
  std::string target = StrCat("/api/v1/runs/", *id, "/watch");
  struct Seen {
    int64_t snapshot_id = 0;
    std::vector<int64_t> ids;
    std::vector<double> delays;
    bool ended = false;
  };
  std::vector<Seen> seen(static_cast<size_t>(f.clients));
  std::vector<std::thread> threads;
  std::atomic<int> open{0};
  for (int i = 0; i < f.clients; ++i) {
    threads.emplace_back([&, i] {
      auto s = SseClient::Open(c.http_address(), target);
      if (!s.ok()) return;
      ++open;
      Seen& me = seen[static_cast<size_t>(i)];
      for (;;) {
        auto ev = (*s)->Next(60'000);
        if (!ev.ok()) break;
        double now = static_cast<double>(SystemClock::Get()->NowMs());
        if (ev->event == "end") {
          me.ended = true;
          break;
        }
        if (ev->event == "snapshot") me.snapshot_id = std::stoll(ev->id);
        if (ev->event != "update") continue;
        me.ids.push_back(std::stoll(ev->id));
        json j = json::parse(ev->data, nullptr, false);
        for (const auto& st : j["run"]["stages"]) {
          if (!st.contains("progress")) continue;
          double at = std::stod(st["progress"]["updated_at_ms"].get<std::string>());
          if (at > 0) me.delays.push_back(now - at);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  // Ids of one run's events are consecutive: a client saw every change after its snapshot
  // when its ids run from snapshot + 1 to the run's last update without a gap.
  int64_t last = 0;
  for (const Seen& s : seen) {
    if (!s.ids.empty()) last = std::max(last, s.ids.back());
  }
  size_t complete = 0, ended = 0;
  for (const Seen& s : seen) {
    all.insert(all.end(), s.delays.begin(), s.delays.end());
    bool ok = !s.ids.empty() && s.ids.back() == last;
    for (size_t i = 0; ok && i < s.ids.size(); ++i) {
      ok = s.ids[i] == s.snapshot_id + 1 + static_cast<int64_t>(i);
    }
    complete += ok;
    ended += s.ended;
  }
  std::printf("(b) %d SSE clients (%d opened) on one run with %d progress events over %d s:\n",
              f.clients, open.load(), f.progress, f.seconds);
  std::printf("  updates to the first client %zu; clients that saw every change after their "
              "snapshot: %zu; saw the end: %zu\n",
              seen[0].ids.size(), complete, ended);
  Report("update delay (arrival - event)", all);
  return 0;
}

int Idle(const Flags& f) {
  ClusterOptions o;
  o.heartbeat = "1s";  // the default agent heartbeat, not the tests' fast one
  o.log_level = "info";
  Cluster c(o);
  if (!c.Start().ok()) return 1;
  auto id = c.Submit("name: quiet\nstages:\n  nap:\n    run: [lh-testjob, --sleep, '3600']\n");
  if (!id.ok()) return 1;
  std::string target = StrCat("/api/v1/runs/", *id, "/watch");
  auto window = [&] {
    double cpu0 = ProcessCpuSeconds(c.coordinator_pid());
    std::this_thread::sleep_for(std::chrono::seconds(f.window));
    return (ProcessCpuSeconds(c.coordinator_pid()) - cpu0) / f.window * 100;
  };
  std::this_thread::sleep_for(std::chrono::seconds(2));
  double base = window();
  std::vector<std::unique_ptr<SseClient>> streams;
  for (int i = 0; i < f.quiet_streams; ++i) {
    auto s = SseClient::Open(c.http_address(), target);
    if (!s.ok() || !(*s)->Next().ok()) return 1;
    streams.push_back(std::move(*s));
  }
  double with = window();
  std::printf("(c) longhauld CPU over %d s, one quiet run, 1 agent (1 s heartbeat):\n", f.window);
  std::printf("  0 watch streams: %.2f %% of a core;  %d open streams: %.2f %% of a core\n", base,
              f.quiet_streams, with);
  return 0;
}

int Main(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--runs") f.runs = next();
    else if (a == "--stages") f.stages = next();
    else if (a == "--requests") f.requests = next();
    else if (a == "--clients") f.clients = next();
    else if (a == "--progress") f.progress = next();
    else if (a == "--seconds") f.seconds = next();
    else if (a == "--quiet-streams") f.quiet_streams = next();
    else if (a == "--window") f.window = next();
    else if (a == "--skip-api") f.api = false;
    else if (a == "--skip-fanout") f.fanout = false;
    else if (a == "--skip-idle") f.idle = false;
    else {
      std::fprintf(stderr, "http_bench: unknown flag %s (see the top of http_bench.cc)\n",
                   a.c_str());
      return 2;
    }
  }
  if (f.api && Api(f) != 0) return 1;
  if (f.fanout && Fanout(f) != 0) return 1;
  if (f.idle && Idle(f) != 0) return 1;
  return 0;
}

}  // namespace
}  // namespace longhaul::testing

int main(int argc, char** argv) { return longhaul::testing::Main(argc, argv); }
