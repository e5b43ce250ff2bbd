// The client reads and longhauld's start-up on a store with many finished runs: builds the store
// through SqliteStore (store_builder.h), then starts the real longhauld on it and times, at the
// RPC (one client on loopback, each call end to end):
//   ListRuns first page, by workflow, by status, both filters, a page at a random cursor;
//   GetRun of a random 10-stage run (as `longhaul show`: without attempts), and with attempts;
//   ListEvents of one attempt (its first 1,000 events, as `longhaul events`);
//   GET /api/v1/runs first page and by workflow and status (the UI's run list);
// and the start-up: exec of longhauld -> the gRPC port answers a call -> /readyz says 200, on
// the store and, for comparison, on a new empty database.
//
//   store_bench [--db /var/tmp/longhaul-store-bench/longhaul.db] [--runs 100000]
//               [--events 10000000] [--requests 300] [--starts 5] [--rebuild]
//
// The store is kept next to a file PATH.shape naming what it holds, and reused by later runs
// with the same --runs/--events (--rebuild builds it again). Put it on a real disk, not tmpfs.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/store/store_builder.h"
#include "core/strings.h"
#include "longhaul/v1/client.grpc.pb.h"
#include "tests/http/http_client.h"
#include "tests/testing/test_util.h"

namespace longhaul::bench {
namespace {

using testing::Subprocess;

struct Flags {
  std::string db = "/var/tmp/longhaul-store-bench/longhaul.db";
  StoreShape shape;
  int requests = 300;
  int starts = 5;
  bool rebuild = false;
};

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The value at quantile q (0..1) of `v`, nearest rank.
double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// `cpu_ms`: longhauld's CPU time per call (utime + stime), when known.
void Report(const std::string& what, const std::vector<double>& ms, double cpu_ms = -1) {
  std::printf("  %-42s p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (n=%zu)", what.c_str(),
              Quantile(ms, 0.5), Quantile(ms, 0.99), Quantile(ms, 1.0), ms.size());
  if (cpu_ms >= 0) std::printf("  longhauld CPU %.2f ms/call", cpu_ms);
  std::printf("\n");
  std::fflush(stdout);
}

std::string ShapeLine(const StoreShape& s) {
  return StrCat("runs=", s.runs, " events=", s.events, " workflows=", s.workflows, "\n");
}

void PrintProgress(int64_t done, int64_t runs) {
  if (done % 10'000 == 0 || done == runs) {
    std::fprintf(stderr, "  built %lld / %lld runs%s", static_cast<long long>(done),
                 static_cast<long long>(runs), done == runs ? "\n" : "\r");
  }
}

// Builds the store unless one of the same shape is there already.
Status EnsureStore(const Flags& f) {
  std::string shape_file = f.db + ".shape";
  if (!f.rebuild && std::filesystem::exists(f.db) &&
      testing::ReadTextFile(shape_file) == ShapeLine(f.shape)) {
    std::printf("store: reusing %s (%s)", f.db.c_str(), ShapeLine(f.shape).c_str());
    return OkStatus();
  }
  for (const char* suffix : {"", "-wal", "-shm", ".shape"}) {
    std::filesystem::remove(f.db + suffix);
  }
  std::filesystem::create_directories(std::filesystem::path(f.db).parent_path());
  std::printf("store: building %s (%s)", f.db.c_str(), ShapeLine(f.shape).c_str());
  std::fflush(stdout);
  ASSIGN_OR_RETURN(BuiltStore built, BuildStore(f.db, f.shape, PrintProgress));
  testing::WriteTextFile(shape_file, ShapeLine(f.shape));
  std::printf("store: built %lld runs, %lld stages/attempts, %lld events in %.1f s; %.0f MiB\n",
              static_cast<long long>(built.runs), static_cast<long long>(built.stages),
              static_cast<long long>(built.events), built.seconds,
              static_cast<double>(std::filesystem::file_size(f.db)) / (1 << 20));
  return OkStatus();
}

struct Daemon {
  std::unique_ptr<Subprocess> process;
  std::string grpc_addr, http_addr;
  std::unique_ptr<v1::LonghaulService::Stub> stub;
  double ms_to_grpc = 0, ms_to_ready = 0;
};

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// Starts longhauld on the database `db` and waits until it answers a gRPC call and /readyz.
Result<Daemon> StartDaemon(const std::string& db, const std::string& state_dir) {
  std::filesystem::create_directories(state_dir);
  std::filesystem::remove(state_dir + "/coordinator.addr");
  std::filesystem::remove(state_dir + "/http.addr");
  Daemon d;
  auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(d.process,
                   Subprocess::Start({testing::BinPath("longhauld"), "--state-dir", state_dir,
                                      "--db", db, "--listen", "127.0.0.1:0", "--http",
                                      "127.0.0.1:0", "--log-level", "warn"},
                                     {}, state_dir + "/longhauld.log"));
  bool up = testing::WaitFor(
      [&] {
        d.grpc_addr = Trimmed(testing::ReadTextFile(state_dir + "/coordinator.addr"));
        return !d.grpc_addr.empty() || !d.process->Running();
      },
      120'000, 1);
  if (!up || d.grpc_addr.empty()) {
    return absl::UnavailableError(
        StrCat("longhauld did not start; see ", state_dir, "/longhauld.log"));
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  d.stub = v1::LonghaulService::NewStub(
      grpc::CreateCustomChannel(d.grpc_addr, grpc::InsecureChannelCredentials(), args));
  testing::WaitFor(
      [&] {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        v1::ListRunsRequest req;
        req.set_limit(1);
        v1::ListRunsResponse resp;
        return d.stub->ListRuns(&ctx, req, &resp).ok();
      },
      60'000, 1);
  d.ms_to_grpc = MsSince(t0);
  d.http_addr = Trimmed(testing::ReadTextFile(state_dir + "/http.addr"));
  bool ready = testing::WaitFor(
      [&] {
        auto r = testing::HttpGet(d.http_addr, "/readyz");
        return r.ok() && r->status == 200;
      },
      60'000, 1);
  d.ms_to_ready = MsSince(t0);
  if (!ready) return absl::UnavailableError("longhauld never said ready on /readyz");
  return d;
}

void Stop(Daemon& d) {
  d.process->Signal(SIGTERM);
  if (!d.process->Wait(20'000)) d.process->Signal(SIGKILL);
}

// Times `call` (which returns whether it succeeded) `n` times after 5 untimed warm-ups, and
// the CPU time that process `pid` spent on the timed calls.
template <typename Call>
Result<std::vector<double>> Time(pid_t pid, const std::string& what, int n, Call call) {
  std::vector<double> ms;
  double cpu0 = 0;
  for (int i = -5; i < n; ++i) {
    if (i == 0) cpu0 = testing::ProcessCpuSeconds(pid);
    auto t0 = std::chrono::steady_clock::now();
    Status st = call(i);
    double took = MsSince(t0);
    if (!st.ok()) return Annotate(st, what);
    if (i >= 0) ms.push_back(took);
  }
  Report(what, ms, (testing::ProcessCpuSeconds(pid) - cpu0) * 1000 / std::max(n, 1));
  return ms;
}

Status GrpcStatus(const grpc::Status& s) {
  return s.ok() ? OkStatus()
                : absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

Status MeasureReads(const Flags& f, Daemon& d) {
  std::mt19937_64 rng(7);
  const StoreShape& shape = f.shape;
  pid_t pid = d.process->pid();
  auto list = [&](v1::ListRunsRequest req, size_t expect_at_least) {
    return [&d, req, expect_at_least](int) -> Status {
      grpc::ClientContext ctx;
      v1::ListRunsResponse resp;
      RETURN_IF_ERROR(GrpcStatus(d.stub->ListRuns(&ctx, req, &resp)));
      if (static_cast<size_t>(resp.runs_size()) < expect_at_least) {
        return absl::InternalError(StrCat("only ", resp.runs_size(), " runs"));
      }
      return OkStatus();
    };
  };
  v1::ListRunsRequest first;
  first.set_limit(50);
  v1::ListRunsRequest by_workflow = first;
  by_workflow.set_workflow("wf7");
  v1::ListRunsRequest by_status = first;
  by_status.set_status("failed");
  v1::ListRunsRequest both = by_status;
  both.set_status("cancelled");
  both.set_workflow("wf3");
  v1::ListRunsRequest none = first;
  none.set_status("running");
  size_t page = static_cast<size_t>(std::min<int64_t>(50, shape.runs / 100));
  std::printf("gRPC reads (one client, loopback):\n");
  RETURN_IF_ERROR(Time(pid, "ListRuns limit 50 (first page)", f.requests, list(first, 1)).status());
  RETURN_IF_ERROR(Time(pid, "ListRuns workflow=wf7", f.requests, list(by_workflow, page)).status());
  RETURN_IF_ERROR(Time(pid, "ListRuns status=failed", f.requests, list(by_status, page)).status());
  RETURN_IF_ERROR(
      Time(pid, "ListRuns status=cancelled workflow=wf3", f.requests, list(both, 0)).status());
  RETURN_IF_ERROR(Time(pid, "ListRuns status=running (none)", f.requests, list(none, 0)).status());
  RETURN_IF_ERROR(Time(pid, "ListRuns page at a random cursor", f.requests, [&](int) -> Status {
                    v1::ListRunsRequest req = first;
                    req.set_page_token(std::to_string(1 + rng() % shape.runs));
                    return list(req, 0)(0);
                  }).status());
  // Runs with 10 stages: workflow w with w % 10 == 9.
  auto ten_stage_run = [&] {
    for (;;) {
      int64_t id = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(shape.runs));
      if (StagesOfRun(shape, id) == 10 || shape.workflows < 10) return id;
    }
  };
  for (bool attempts : {false, true}) {
    RETURN_IF_ERROR(Time(pid, attempts ? "GetRun 10-stage run, with attempts"
                                  : "GetRun 10-stage run (longhaul show)",
                         f.requests, [&](int) -> Status {
                           grpc::ClientContext ctx;
                           v1::GetRunRequest req;
                           req.set_id(ten_stage_run());
                           req.set_include_attempts(attempts);
                           v1::Run run;
                           RETURN_IF_ERROR(GrpcStatus(d.stub->GetRun(&ctx, req, &run)));
                           if (run.stages_size() != StagesOfRun(shape, req.id())) {
                             return absl::InternalError(StrCat("run ", req.id(), " has ",
                                                               run.stages_size(), " stages"));
                           }
                           return OkStatus();
                         }).status());
  }
  RETURN_IF_ERROR(Time(pid, "ListEvents of one attempt (limit 1000)", f.requests, [&](int) -> Status {
                    grpc::ClientContext ctx;
                    v1::ListEventsRequest req;
                    int64_t id = ten_stage_run();
                    req.set_run_id(id);
                    req.set_stage(StrCat("s", rng() % 10));
                    req.set_attempt(1);
                    v1::ListEventsResponse resp;
                    RETURN_IF_ERROR(GrpcStatus(d.stub->ListEvents(&ctx, req, &resp)));
                    if (shape.events >= shape.runs * 10 && resp.events_size() == 0) {
                      return absl::InternalError(StrCat("no events for run ", id));
                    }
                    return OkStatus();
                  }).status());
  std::printf("HTTP API (the UI's run list):\n");
  for (const char* target : {"/api/v1/runs?limit=50", "/api/v1/runs?limit=50&workflow=wf7",
                             "/api/v1/runs?limit=50&status=failed"}) {
    RETURN_IF_ERROR(Time(pid, StrCat("GET ", target), f.requests, [&](int) -> Status {
                      ASSIGN_OR_RETURN(testing::HttpResult r, testing::HttpGet(d.http_addr, target));
                      if (r.status != 200) return absl::InternalError(r.body);
                      return OkStatus();
                    }).status());
  }
  return OkStatus();
}

long RssKiB(pid_t pid) {
  std::string status = testing::ReadTextFile(StrCat("/proc/", pid, "/status"));
  size_t at = status.find("VmRSS:");
  return at == std::string::npos ? -1 : std::atol(status.c_str() + at + 6);
}

int Main(const Flags& f) {
  if (Status s = EnsureStore(f); !s.ok()) {
    std::fprintf(stderr, "store: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::string state_dir = std::filesystem::path(f.db).parent_path().string() + "/state";
  std::vector<double> grpc_ms, ready_ms, empty_grpc_ms, empty_ready_ms;
  std::printf("start-up of longhauld (exec -> gRPC answers, -> /readyz 200):\n");
  for (int i = 0; i < f.starts; ++i) {
    // The same on a new, empty database: what start-up costs without the store.
    std::string empty = state_dir + "/empty.db";
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(empty + suffix);
    Result<Daemon> e = StartDaemon(empty, state_dir);
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", std::string(e.status().message()).c_str());
      return 1;
    }
    empty_grpc_ms.push_back(e->ms_to_grpc);
    empty_ready_ms.push_back(e->ms_to_ready);
    Stop(*e);
    Result<Daemon> d = StartDaemon(f.db, state_dir);
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", std::string(d.status().message()).c_str());
      return 1;
    }
    std::printf("  start %d: gRPC %.0f ms, /readyz %.0f ms%s; on an empty database %.0f / %.0f ms\n",
                i + 1, d->ms_to_grpc, d->ms_to_ready,
                i == 0 ? " (the first may apply migrations)" : "", e->ms_to_grpc, e->ms_to_ready);
    if (i > 0 || f.starts == 1) {
      grpc_ms.push_back(d->ms_to_grpc);
      ready_ms.push_back(d->ms_to_ready);
    }
    bool last = i == f.starts - 1;
    if (last) {
      Status reads = MeasureReads(f, *d);
      std::printf("longhauld RSS after the reads: %ld MiB\n", RssKiB(d->process->pid()) / 1024);
      if (!reads.ok()) {
        std::fprintf(stderr, "%s\n", std::string(reads.message()).c_str());
        Stop(*d);
        return 1;
      }
    }
    Stop(*d);
  }
  Report("start-up, empty database: exec -> gRPC", empty_grpc_ms);
  Report("start-up, empty database: exec -> /readyz", empty_ready_ms);
  Report("start-up, the store: exec -> gRPC", grpc_ms);
  Report("start-up, the store: exec -> /readyz", ready_ms);
  return 0;
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) {
  longhaul::bench::Flags f;
  CLI::App app{"longhauld's client reads and start-up on a store with many finished runs"};
  app.add_option("--db", f.db, "where the store is built (kept and reused; a real disk)");
  app.add_option("--runs", f.shape.runs, "finished runs in the store");
  app.add_option("--events", f.shape.events, "event lines in the store, spread over attempts");
  app.add_option("--requests", f.requests, "timed calls of each kind");
  app.add_option("--starts", f.starts, "times longhauld is started (the first is not counted)");
  app.add_flag("--rebuild", f.rebuild, "build the store again even if one of this shape exists");
  CLI11_PARSE(app, argc, argv);
  return longhaul::bench::Main(f);
}
