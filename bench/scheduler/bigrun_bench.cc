// bigrun_bench: does a stage cost the same in a big run as in a small one, through the real
// daemons? A real longhauld and --agents real longhaul-agents on loopback (the integration
// harness, tests/integration/cluster.h), every stage a real `/bin/true` started by a real
// longhaul-shim. For each size in --sizes, one run of that many independent stages; then one
// chain of --chain links. For each run it prints:
//
//   - stages/s: stages / (the run's recorded end - the SubmitRun call);
//   - handoff: for a chain, link i's recorded end -> link i+1's recorded start; for independent
//     stages, a slot freeing -> the slot taken again: on each agent, the k-th attempt to end ->
//     the (k + slots)-th attempt to start (p50 / p99);
//   - SubmitRun's own time;
//   - the CPU time longhauld and the agents used per stage, from the submit to the run's end
//     (utime + stime; the agent's shims and stages are other processes and not counted), and
//     the whole machine's (every process and the kernel, from /proc/stat; the bench's own
//     polling included, every 500 ms);
//   - how long each of those polls took (ListRuns, limit 1: the run's counts and cost), p50 and
//     p99: what `longhaul runs` or the UI's run list costs while a big run goes on;
//   - longhauld's RSS before the submit, at its peak during the run (sampled every 50 ms), and
//     after the run ended (the lowest of the following 2 s).
//
// And at the end, longhauld's RSS --settle seconds after the last run against its idle RSS
// (after a 10-stage run, before the first measured one): what a daemon keeps once big runs are
// over, including what the kernel gives back to it later (khugepaged fills hinted ranges in
// with huge pages seconds after a trim).
//
// The attempts' times are read from the coordinator's SQLite file (read-only, WAL) once the run
// has ended, so no reply has to carry 100,000 stages. State dirs go under $TMPDIR (default /tmp:
// a disk on this machine; the figures want a disk, not tmpfs).
//
//   bigrun_bench [--sizes 1000,10000,100000] [--chain 10000] [--agents 4] [--cpus 64]
//                [--settle 30]
//
// Not a test: nothing here passes or fails.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "daemon/store/sqlite.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"

namespace longhaul::bench {
namespace {

using testing::Cluster;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
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
  std::fprintf(stderr, "bigrun_bench: %s\n%s", what.c_str(), c.Logs(8 * 1024).c_str());
  // std::exit runs no destructors: stop the daemons here, or they run on.
  for (int i = 0; i < c.agent_count(); ++i) c.KillAgent(i);
  c.KillCoordinator();
  std::exit(1);
}

// Resident set of `pid` in MB (VmRSS of /proc/PID/status).
double RssMb(pid_t pid) {
  std::string status = testing::ReadTextFile(StrCat("/proc/", pid, "/status"));
  size_t at = status.find("VmRSS:");
  if (at == std::string::npos) return -1;
  return std::stod(status.substr(at + 6)) / 1024.0;
}

// CPU ms the whole machine has used (every process and the kernel: the first line of
// /proc/stat, all but idle and iowait); -1 when unreadable.
double MachineCpuMs() {
  std::string stat = testing::ReadTextFile("/proc/stat");
  std::vector<std::string> f = StrSplit(stat.substr(0, stat.find('\n')), ' ');
  // "cpu  user nice system idle iowait irq softirq steal ...": two spaces after "cpu".
  if (f.size() < 9) return -1;
  double ticks = 0;
  for (size_t i : {2, 3, 4, 7, 8}) ticks += std::stod(f[i]);
  return ticks * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU ms used by longhauld and by all agents together.
std::pair<double, double> DaemonCpuMs(Cluster& c) {
  double agents = 0;
  for (int i = 0; i < c.agent_count(); ++i) agents += testing::ProcessCpuSeconds(c.agent_pid(i));
  return {testing::ProcessCpuSeconds(c.coordinator_pid()) * 1e3, agents * 1e3};
}

struct Attempt {
  std::string agent;
  int64_t created = 0, started = 0, ended = 0;
  int position = 0;
};

std::vector<Attempt> ReadAttempts(Cluster& c, int64_t run_id) {
  auto db = store::Db::Open(c.db_path(), /*create=*/false, /*read_only=*/true);
  if (!db.ok()) Fail(c, ToStd(db.status().message()));
  auto st = (*db)->Prepare(
      "SELECT a.agent_id, a.created_at_ms, a.started_at_ms, a.ended_at_ms, s.position "
      "FROM attempts a JOIN stages s ON s.id = a.stage_id WHERE a.run_id = ? "
      "ORDER BY s.position, a.number");
  if (!st.ok()) Fail(c, ToStd(st.status().message()));
  (*st)->Bind(1, run_id);
  std::vector<Attempt> out;
  while (true) {
    Result<bool> row = (*st)->Step();
    if (!row.ok()) Fail(c, ToStd(row.status().message()));
    if (!*row) break;
    out.push_back({(*st)->Text(0), (*st)->Int(1), (*st)->Int(2), (*st)->Int(3),
                   static_cast<int>((*st)->Int(4))});
  }
  return out;
}

struct Figures {
  int stages = 0;
  bool chain = false;
  double per_s = 0, submit_ms = 0;
  std::vector<double> handoff_ms;
  std::vector<double> poll_ms;  // each ListRuns of the bench's polling, while the run goes on
  double rss_before = 0, rss_peak = 0, rss_after = 0;
  double coordinator_cpu_us = 0, agents_cpu_us = 0, machine_cpu_us = 0;  // per stage
};

Figures RunOne(Cluster& c, const std::string& name, int n, bool chain, int slots) {
  std::string text = StrCat("name: ", name, "\nstages:\n");
  for (int i = 0; i < n; ++i) {
    text += StrCat("  s", i, ":\n    run: [/bin/true]\n");
    if (chain && i > 0) text += StrCat("    needs: [s", i - 1, "]\n");
  }
  Figures f;
  f.stages = n;
  f.chain = chain;
  pid_t pid = c.coordinator_pid();
  f.rss_before = RssMb(pid);
  std::atomic<bool> running{true};
  std::atomic<double> peak{f.rss_before};
  std::thread sampler([&] {
    while (running) {
      double now = RssMb(pid);
      if (now > peak) peak = now;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });

  v1::SubmitRunRequest req;
  req.set_workflow_text(text);
  req.set_workflow_path("bigrun_bench");
  req.set_no_cache(true);  // the same stages again must run, not be reused
  v1::SubmitRunResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(300));
  auto [coordinator_cpu0, agents_cpu0] = DaemonCpuMs(c);
  double machine_cpu0 = MachineCpuMs();
  int64_t t0 = NowMs();
  grpc::Status st = c.stub().SubmitRun(&ctx, req, &resp);
  f.submit_ms = static_cast<double>(NowMs() - t0);
  if (!st.ok()) Fail(c, StrCat("SubmitRun: ", st.error_message()));
  int64_t id = resp.run().id();

  v1::Run summary;
  bool ended = testing::WaitFor(
      [&] {
        v1::ListRunsRequest lr;
        lr.set_limit(1);  // the run being measured is the newest
        auto poll0 = std::chrono::steady_clock::now();
        auto runs = c.ListRuns(lr);
        f.poll_ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - poll0)
                .count());
        if (!runs.ok() || runs->runs_size() == 0 || runs->runs(0).id() != id) return false;
        summary = runs->runs(0);
        return IsTerminal(summary.status());
      },
      3'600'000, 500);
  auto [coordinator_cpu1, agents_cpu1] = DaemonCpuMs(c);
  f.machine_cpu_us = (MachineCpuMs() - machine_cpu0) * 1e3 / n;
  f.coordinator_cpu_us = (coordinator_cpu1 - coordinator_cpu0) * 1e3 / n;
  f.agents_cpu_us = (agents_cpu1 - agents_cpu0) * 1e3 / n;
  running = false;
  sampler.join();
  if (!ended) Fail(c, StrCat("run ", id, " did not end within an hour"));
  if (summary.status() != v1::RUN_SUCCEEDED) {
    Fail(c, StrCat("run ", id, " ", RunStatusName(summary.status()), ": ", summary.reason()));
  }
  f.rss_peak = peak;
  f.rss_after = RssMb(pid);
  for (int i = 0; i < 40; ++i) {  // memory handed back after the eviction: the lowest of 2 s
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    f.rss_after = std::min(f.rss_after, RssMb(pid));
  }
  f.per_s = n / ((static_cast<double>(summary.ended_at_ms()) - static_cast<double>(t0)) / 1e3);

  std::vector<Attempt> attempts = ReadAttempts(c, id);
  if (chain) {
    for (size_t i = 1; i < attempts.size(); ++i) {
      f.handoff_ms.push_back(static_cast<double>(attempts[i].started - attempts[i - 1].ended));
    }
  } else {
    std::map<std::string, std::pair<std::vector<int64_t>, std::vector<int64_t>>> by_agent;
    for (const Attempt& a : attempts) {
      by_agent[a.agent].first.push_back(a.ended);
      by_agent[a.agent].second.push_back(a.started);
    }
    for (auto& [agent, times] : by_agent) {
      auto& [ends, starts] = times;
      std::sort(ends.begin(), ends.end());
      std::sort(starts.begin(), starts.end());
      for (size_t k = 0; k + slots < starts.size(); ++k) {
        f.handoff_ms.push_back(static_cast<double>(starts[k + slots] - ends[k]));
      }
    }
  }
  return f;
}

void Print(const Figures& f) {
  std::printf(
      "%-11s %7d stages: %6.0f stages/s, handoff p50 %4.0f ms p99 %5.0f ms (n=%zu), SubmitRun "
      "%6.0f ms, CPU a stage: longhauld %4.0f us, agents %4.0f us, machine %5.0f us, longhauld "
      "RSS before %6.1f MB, peak %6.1f MB, after %6.1f MB, ListRuns while it runs p50 %.1f ms "
      "p99 %.1f ms\n",
      f.chain ? "chain" : "independent", f.stages, f.per_s, Percentile(f.handoff_ms, 50),
      Percentile(f.handoff_ms, 99), f.handoff_ms.size(), f.submit_ms, f.coordinator_cpu_us,
      f.agents_cpu_us, f.machine_cpu_us, f.rss_before, f.rss_peak, f.rss_after,
      Percentile(f.poll_ms, 50), Percentile(f.poll_ms, 99));
  std::fflush(stdout);
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) {
  using namespace longhaul;
  using namespace longhaul::bench;
  CLI::App app{"bigrun_bench: stages/s, handoff and longhauld's memory against run size"};
  std::string sizes = "1000,10000,100000";
  int chain = 10000, agents = 4;
  double cpus = 64;
  std::string log_level = "warn";
  app.add_option("--sizes", sizes, "independent stages per run, comma-separated")
      ->capture_default_str();
  app.add_option("--chain", chain, "links in the chain (< 2: none)")->capture_default_str();
  app.add_option("--agents", agents, "agents to start")->capture_default_str();
  app.add_option("--cpus", cpus, "CPUs each agent offers (each stage takes 1)")
      ->capture_default_str();
  app.add_option("--log-level", log_level, "the daemons' log level")->capture_default_str();
  int settle_s = 30;
  app.add_option("--settle", settle_s, "seconds after the last run before the final RSS")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  longhaul::testing::ClusterOptions options;
  options.agents = agents;
  options.cpus = cpus;
  options.agent_timeout = "15s";  // the daemons' production timeouts
  options.lost_after = "3m";
  options.log_level = log_level;
  Cluster c(options);
  if (Status st = c.Start(); !st.ok()) Fail(c, ToStd(st.message()));
  std::printf("bigrun_bench: %d agents x %g cpus, state under %s\n", agents, cpus,
              c.dir().path().c_str());
  int slots = static_cast<int>(cpus);
  // Idle: a daemon that has served a run (the code pages a first run touches stay resident,
  // whatever the run's size).
  RunOne(c, "warmup", 10, /*chain=*/false, slots);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  double idle = RssMb(c.coordinator_pid());
  for (const std::string& s : StrSplit(sizes, ',')) {
    int n = std::stoi(s);
    Print(RunOne(c, StrCat("wide-", n), n, /*chain=*/false, slots));
  }
  if (chain > 1) Print(RunOne(c, StrCat("chain-", chain), chain, /*chain=*/true, slots));
  std::this_thread::sleep_for(std::chrono::seconds(settle_s));
  double end = RssMb(c.coordinator_pid());
  std::printf("longhauld RSS idle %.1f MB (after a 10-stage run), %d s after the last run %.1f MB "
              "(%+.0f %%)\n",
              idle, settle_s, end, (end / idle - 1) * 100);
  return 0;
}
