// scheduler_bench: how fast real longhauld, agents, shims and stage processes on loopback
// (tests/integration/cluster.h) turn events into started processes.
//
//   (a) submit -> first stage started: SubmitRun is called at T; the attempt records
//       started_at_ms (the shim, right after exec) and the stage stamps its own start.
//   (b) handoff: in a chain of N stages, stage i's recorded ended_at_ms -> stage i+1's
//       started_at_ms; and, on the stages' own clocks, i's last instruction -> i+1's first.
//       Split at the coordinator's decision (i+1's created_at_ms).
//   (c) throughput: M independent stages, completed per second from the submit call to the
//       run's end; and the CPU time each stage cost the coordinator, the agents and the
//       shims with their stages (/proc/PID/stat), which bounds the rate on an idle machine.
//
// Prints p50/p99 and the sample count of each; --runs K repeats everything on a fresh cluster
// and prints the median over the runs. Not a test: nothing here passes or fails.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::bench {
namespace {

using testing::Cluster;

struct Flags {
  int agents = 4;
  double cpus = 64;
  int submit_samples = 50;
  int chain = 1000;
  int independent = 5000;
  int runs = 1;
  std::string log_level = "info";
  std::string heartbeat = "1s";
};

struct Figures {
  std::vector<double> submit_recorded_ms, submit_stage_ms;             // (a)
  std::vector<double> handoff_recorded_ms, handoff_stage_ms;           // (b)
  std::vector<double> exit_to_dispatch_ms, dispatch_to_started_ms;     // (b) split
  double chain_submit_ms = 0;                                          // (b) SubmitRun
  double per_s = 0, per_s_attempts = 0, wide_submit_ms = 0;            // (c)
  double cpu_coordinator_ms = 0, cpu_agents_ms = 0, cpu_shims_ms = 0;  // (c) per stage
  std::map<std::string, double> phase_s;
};

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

[[noreturn]] void Fail(Cluster& c, const std::string& what) {
  std::fprintf(stderr, "scheduler_bench: %s\n%s", what.c_str(), c.Logs(8 * 1024).c_str());
  std::exit(1);
}

// CPU seconds of a process: its own, and that of the children it has reaped (an agent reaps
// its shims, a shim its stage).
struct Cpu {
  double self_s = 0, children_s = 0;
};

Cpu ReadCpu(pid_t pid) {
  std::string stat = testing::ReadTextFile(StrCat("/proc/", pid, "/stat"));
  auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream in(stat.substr(close + 2));
  std::string state;
  long long f[14] = {};  // fields 4..17 of proc(5): utime is [10], cstime [13]
  in >> state;
  for (long long& v : f) in >> v;
  double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {static_cast<double>(f[10] + f[11]) / tick, static_cast<double>(f[12] + f[13]) / tick};
}

// Stamp lines by stage name: {start_ns, end_ns}.
std::map<std::string, std::pair<int64_t, int64_t>> ReadStamps(const std::string& file) {
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  std::istringstream in(testing::ReadTextFile(file));
  std::string stage;
  int64_t start = 0, end = 0;
  while (in >> stage >> start >> end) out[stage] = {start, end};
  return out;
}

int64_t SubmitNoCache(Cluster& c, const std::string& text) {
  v1::SubmitRunRequest req;
  req.set_workflow_text(text);
  req.set_workflow_path("scheduler_bench");
  req.set_no_cache(true);  // the same stages again must run, not be reused
  v1::SubmitRunResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  grpc::Status st = c.stub().SubmitRun(&ctx, req, &resp);
  if (!st.ok()) Fail(c, StrCat("SubmitRun: ", st.error_message()));
  return resp.run().id();
}

// Waits for the run's end by polling ListRuns for the newest run (no stage rows), so that
// waiting adds little load to the coordinator being measured (each call counts the run's
// stages: a few ms for thousands); then reads the whole run. The figures come from the
// recorded times, so the polling interval does not bias them.
v1::Run WaitSucceeded(Cluster& c, int64_t id, int64_t timeout_ms, int64_t poll_ms) {
  bool ended = testing::WaitFor(
      [&] {
        v1::ListRunsRequest req;
        req.set_limit(1);  // the run being measured is the newest
        auto runs = c.ListRuns(req);
        if (!runs.ok()) return false;
        for (const v1::Run& r : runs->runs()) {
          if (r.id() == id) return IsTerminal(r.status());
        }
        return false;
      },
      timeout_ms, poll_ms);
  if (!ended) Fail(c, StrCat("run ", id, " did not end within ", timeout_ms, " ms"));
  Result<v1::Run> run = c.GetRun(id, true);
  if (!run.ok()) Fail(c, StrCat("GetRun: ", ToStd(run.status().message())));
  if (run->status() != v1::RUN_SUCCEEDED) Fail(c, testing::DescribeRun(*run));
  return *std::move(run);
}

void MeasureSubmit(Cluster& c, const Flags& f, const std::string& stage_bin, Figures& out) {
  for (int i = 0; i < f.submit_samples; ++i) {
    std::string stamps = c.dir().Join(StrCat("submit-", i, ".stamps"));
    std::string text = StrCat("name: bench-submit\nstages:\n  s:\n    run: ",
                              testing::YamlList({stage_bin, stamps}), "\n");
    int64_t t0 = NowNs();
    v1::Run run = WaitSucceeded(c, SubmitNoCache(c, text), 60'000, 5);
    const v1::Attempt& a = run.stages(0).attempts(0);
    out.submit_recorded_ms.push_back(static_cast<double>(a.started_at_ms()) - t0 / 1e6);
    auto stamp = ReadStamps(stamps);
    if (stamp.count("s")) out.submit_stage_ms.push_back((stamp["s"].first - t0) / 1e6);
  }
}

void MeasureChain(Cluster& c, const Flags& f, const std::string& stage_bin, Figures& out) {
  std::string stamps = c.dir().Join("chain.stamps");
  std::string text = "name: bench-chain\nstages:\n";
  for (int i = 0; i < f.chain; ++i) {
    text += StrCat("  s", i, ":\n");
    if (i > 0) text += StrCat("    needs: [s", i - 1, "]\n");
    text += StrCat("    run: ", testing::YamlList({stage_bin, stamps}), "\n");
  }
  int64_t t0 = NowNs();
  int64_t id = SubmitNoCache(c, text);
  out.chain_submit_ms = (NowNs() - t0) / 1e6;
  v1::Run run = WaitSucceeded(c, id, 600'000, 1'000);
  auto stamp = ReadStamps(stamps);
  for (int i = 1; i < f.chain; ++i) {
    const v1::Stage* prev = testing::FindStage(run, StrCat("s", i - 1));
    const v1::Stage* next = testing::FindStage(run, StrCat("s", i));
    const v1::Attempt& p = prev->attempts(0);
    const v1::Attempt& n = next->attempts(0);
    out.handoff_recorded_ms.push_back(static_cast<double>(n.started_at_ms() - p.ended_at_ms()));
    out.exit_to_dispatch_ms.push_back(static_cast<double>(n.created_at_ms() - p.ended_at_ms()));
    out.dispatch_to_started_ms.push_back(
        static_cast<double>(n.started_at_ms() - n.created_at_ms()));
    auto ps = stamp.find(prev->name()), ns = stamp.find(next->name());
    if (ps != stamp.end() && ns != stamp.end()) {
      out.handoff_stage_ms.push_back((ns->second.first - ps->second.second) / 1e6);
    }
  }
}

void MeasureThroughput(Cluster& c, const Flags& f, Figures& out) {
  std::string text = "name: bench-wide\nstages:\n";
  for (int i = 0; i < f.independent; ++i) text += StrCat("  s", i, ":\n    run: [/bin/true]\n");
  auto cpu = [&](Cpu& coordinator, Cpu& agents) {
    coordinator = ReadCpu(c.coordinator_pid());
    agents = {};
    for (int i = 0; i < c.agent_count(); ++i) {
      Cpu a = ReadCpu(c.agent_pid(i));
      agents.self_s += a.self_s;
      agents.children_s += a.children_s;
    }
  };
  Cpu coord0, agents0, coord1, agents1;
  cpu(coord0, agents0);
  int64_t t0 = NowNs();
  int64_t id = SubmitNoCache(c, text);
  out.wide_submit_ms = (NowNs() - t0) / 1e6;
  v1::Run run = WaitSucceeded(c, id, 600'000, 1'000);
  cpu(coord1, agents1);
  int64_t first_start = INT64_MAX, last_end = 0;
  for (const v1::Stage& s : run.stages()) {
    first_start = std::min(first_start, s.attempts(0).started_at_ms());
    last_end = std::max(last_end, s.attempts(0).ended_at_ms());
  }
  double n = f.independent;
  out.per_s = n / ((static_cast<double>(run.ended_at_ms()) - t0 / 1e6) / 1e3);
  out.per_s_attempts = n / (static_cast<double>(last_end - first_start) / 1e3);
  out.cpu_coordinator_ms = (coord1.self_s - coord0.self_s) * 1e3 / n;
  out.cpu_agents_ms = (agents1.self_s - agents0.self_s) * 1e3 / n;
  out.cpu_shims_ms = (agents1.children_s - agents0.children_s) * 1e3 / n;
}

std::string Latency(const std::vector<double>& v, int decimals = 1) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "p50 %.*f ms, p99 %.*f ms (n=%zu)", decimals, Percentile(v, 50),
                decimals, Percentile(v, 99), v.size());
  return buf;
}

void Print(const Flags& f, const Figures& r) {
  if (f.submit_samples > 0) {
    std::printf("(a) submit -> first stage started: recorded %s; stage clock %s\n",
                Latency(r.submit_recorded_ms).c_str(), Latency(r.submit_stage_ms, 2).c_str());
  }
  if (f.chain > 1) {
    std::printf("(b) handoff over a chain of %d: recorded %s; stage clock %s\n", f.chain,
                Latency(r.handoff_recorded_ms).c_str(), Latency(r.handoff_stage_ms, 2).c_str());
    std::printf("    exit -> coordinator's dispatch %s; dispatch -> stage started %s\n",
                Latency(r.exit_to_dispatch_ms).c_str(), Latency(r.dispatch_to_started_ms).c_str());
  }
  if (f.independent > 0) {
    double cpu = r.cpu_coordinator_ms + r.cpu_agents_ms + r.cpu_shims_ms;
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    std::printf(
        "(c) %d independent stages on %d agents: %.0f stages/s submit to end (%.0f/s first start "
        "to last end)\n"
        "    CPU per stage: coordinator %.2f ms, agents %.2f ms, shims+stages %.2f ms; at most "
        "%.0f stages/s on %u idle cores\n",
        f.independent, f.agents, r.per_s, r.per_s_attempts, r.cpu_coordinator_ms, r.cpu_agents_ms,
        r.cpu_shims_ms, cpu > 0 ? cores * 1e3 / cpu : 0.0, cores);
  }
  std::printf("    SubmitRun took %.0f ms for the chain, %.0f ms for the wide run; phases:",
              r.chain_submit_ms, r.wide_submit_ms);
  for (const auto& [name, s] : r.phase_s) std::printf(" (%s) %.1f s", name.c_str(), s);
  std::printf("\n");
  std::fflush(stdout);
}

// The median over runs of each figure (of p50s and p99s alike).
void PrintMedians(const std::vector<Figures>& all) {
  auto med = [&](const std::function<double(const Figures&)>& get) {
    std::vector<double> v;
    for (const Figures& r : all) v.push_back(get(r));
    return Percentile(v, 50);
  };
  auto pct = [](const std::vector<double> Figures::*field, double p) {
    return [field, p](const Figures& r) { return Percentile(r.*field, p); };
  };
  std::printf("median of %zu runs:\n", all.size());
  std::printf(
      "(a) submit -> started: recorded p50 %.1f ms, p99 %.1f ms; stage clock p50 %.2f ms, "
      "p99 %.2f ms\n",
      med(pct(&Figures::submit_recorded_ms, 50)), med(pct(&Figures::submit_recorded_ms, 99)),
      med(pct(&Figures::submit_stage_ms, 50)), med(pct(&Figures::submit_stage_ms, 99)));
  std::printf(
      "(b) handoff: recorded p50 %.1f ms, p99 %.1f ms; stage clock p50 %.2f ms, p99 %.2f "
      "ms; exit -> dispatch p50 %.1f ms, dispatch -> started p50 %.1f ms\n",
      med(pct(&Figures::handoff_recorded_ms, 50)), med(pct(&Figures::handoff_recorded_ms, 99)),
      med(pct(&Figures::handoff_stage_ms, 50)), med(pct(&Figures::handoff_stage_ms, 99)),
      med(pct(&Figures::exit_to_dispatch_ms, 50)), med(pct(&Figures::dispatch_to_started_ms, 50)));
  std::printf(
      "(c) throughput: %.0f stages/s submit to end; CPU per stage: coordinator %.2f ms, "
      "agents %.2f ms, shims+stages %.2f ms\n",
      med([](const Figures& r) { return r.per_s; }),
      med([](const Figures& r) { return r.cpu_coordinator_ms; }),
      med([](const Figures& r) { return r.cpu_agents_ms; }),
      med([](const Figures& r) { return r.cpu_shims_ms; }));
}

Figures RunOnce(const Flags& f) {
  testing::ClusterOptions options;
  options.agents = f.agents;
  options.cpus = f.cpus;
  options.heartbeat = f.heartbeat;
  // The daemons' production defaults: nothing here waits on silence.
  options.agent_timeout = "15s";
  options.lost_after = "3m";
  options.log_level = f.log_level;
  Cluster c(options);
  if (Status st = c.Start(); !st.ok()) Fail(c, ToStd(st.message()));
  std::string stage_bin = testing::BinPath("scheduler_bench_stage");
  Figures r;
  auto timed = [&](const char* name, const std::function<void()>& fn) {
    int64_t t0 = NowNs();
    fn();
    r.phase_s[name] = (NowNs() - t0) / 1e9;
  };
  if (f.submit_samples > 0) timed("a", [&] { MeasureSubmit(c, f, stage_bin, r); });
  if (f.chain > 1) timed("b", [&] { MeasureChain(c, f, stage_bin, r); });
  if (f.independent > 0) timed("c", [&] { MeasureThroughput(c, f, r); });
  return r;
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) {
  using namespace longhaul::bench;
  CLI::App app{
      "scheduler_bench: submit latency, stage handoff and throughput of the real coordinator, "
      "agents and shims on loopback"};
  Flags f;
  app.add_option("--agents", f.agents, "agents to start")->capture_default_str();
  app.add_option("--cpus", f.cpus, "CPUs each agent offers (each stage takes 1)")
      ->capture_default_str();
  app.add_option("--submit-samples", f.submit_samples, "(a): one-stage runs, one at a time")
      ->capture_default_str();
  app.add_option("--chain", f.chain, "(b): stages in the chain (< 2: skip)")->capture_default_str();
  app.add_option("--independent", f.independent, "(c): independent stages in one run")
      ->capture_default_str();
  app.add_option("--runs", f.runs, "repeat on a fresh cluster; then print the median of the runs")
      ->capture_default_str();
  app.add_option("--log-level", f.log_level, "the daemons' log level")->capture_default_str();
  app.add_option("--heartbeat", f.heartbeat, "the agents' heartbeat interval")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::printf("scheduler_bench: %d agents x %g cpus, daemons' log level %s, %d run(s)\n", f.agents,
              f.cpus, f.log_level.c_str(), f.runs);
  std::vector<Figures> all;
  for (int i = 0; i < f.runs; ++i) {
    // The machine's load says how far to trust the run: other processes compete for the CPUs.
    double load[1] = {0};
    ::getloadavg(load, 1);
    std::printf("run %d/%d (load average %.1f on %u CPUs)\n", i + 1, f.runs, load[0],
                std::thread::hardware_concurrency());
    all.push_back(RunOnce(f));
    Print(f, all.back());
  }
  if (f.runs > 1) PrintMedians(all);
  return 0;
}
