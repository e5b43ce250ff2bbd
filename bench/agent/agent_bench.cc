// Agent figures that are cheap to measure on one machine, with the real binaries:
//   1. StartAttempt sent -> AttemptStarted received, and -> AttemptExited received, for
//      trivial attempts (lh-testjob with no flags) run one after another against a fake
//      coordinator on loopback: the agent's start path (spec.json, spawn of the shim, the
//      shim's fork/exec of the stage, pid.json via inotify) plus two loopback gRPC hops. And
//      the CPU each attempt cost (/proc/PID/stat): the agent's own, and that of the shims
//      with their stages (the children the agent reaped).
//   2. longhaul-shim's own cost: its start-up alone (a usage error), and
//      `longhaul-shim -- /bin/true` (two log files, a lock, a fork, pid.json and exit.json)
//      against `/bin/true`.
//   3. Event throughput from events.jsonl through the agent to the fake coordinator.
//
//   agent_bench [--attempts 200] [--events 200000]
// The state dir is made under $TMPDIR (default /tmp): its file system's create costs are part
// of the figures.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/strings.h"
#include "tests/agent/agent_test_util.h"

extern char** environ;

namespace longhaul::testing {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void Report(const char* what, std::vector<double> v) {
  if (v.empty()) return;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))]; };
  std::printf("%-44s n=%zu  median %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", what,
              v.size(), at(0.5), at(0.9), at(0.99), v.back());
}

// CPU milliseconds of a process (utime + stime) and of the children it reaped.
struct Cpu {
  double self_ms = 0, children_ms = 0;
};

Cpu ReadCpu(pid_t pid) {
  std::string stat = ReadTextFile(StrCat("/proc/", pid, "/stat"));
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::vector<std::string> f = StrSplit(std::string_view(stat).substr(close + 2), ' ');
  if (f.size() < 15) return {};
  // f[0] is field 3 of proc(5): utime, stime, cutime, cstime are fields 14..17.
  double tick_ms = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return {static_cast<double>(std::stoll(f[11]) + std::stoll(f[12])) * tick_ms,
          static_cast<double>(std::stoll(f[13]) + std::stoll(f[14])) * tick_ms};
}

double SpawnAndWaitMs(const std::vector<std::string>& argv) {
  std::vector<char*> c;
  for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
  c.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  auto t0 = Clock::now();
  pid_t pid;
  if (::posix_spawn(&pid, c[0], &fa, nullptr, c.data(), environ) != 0) std::abort();
  posix_spawn_file_actions_destroy(&fa);
  int st;
  ::waitpid(pid, &st, 0);
  return Ms(Clock::now() - t0);
}

int Main(int argc, char** argv) {
  int attempts = 200;
  int64_t events = 200'000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--attempts") == 0) attempts = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--events") == 0) events = std::atoll(argv[i + 1]);
  }

  AgentHarness h;
  const char* level = std::getenv("AGENT_LOG_LEVEL");  // "debug" logs the agent's own timings
  h.StartAgent({"--log-level", level != nullptr ? level : "warn"});
  if (!h.WaitConnected()) {
    std::fprintf(stderr, "agent did not connect:\n%s\n", h.AgentLog().c_str());
    return 1;
  }
  FakeCoordinator& coord = h.coordinator();
  std::vector<double> to_started, to_exited;
  Cpu cpu0 = ReadCpu(h.agent_pid());
  for (int i = 1; i <= attempts; ++i) {
    auto t0 = Clock::now();
    coord.Start(h.Spec(i, {"lh-testjob"}));
    if (!h.WaitExited(i, 30'000)) {
      std::fprintf(stderr, "attempt %d did not end\n%s\n", i, h.AgentLog().c_str());
      return 1;
    }
    to_started.push_back(Ms(*coord.started_time(i) - t0));
    to_exited.push_back(Ms(*coord.exited_time(i) - t0));
  }
  // The last AckExit may still be on its way; the agent's share of it is noise.
  Cpu cpu1 = ReadCpu(h.agent_pid());
  Report("StartAttempt -> AttemptStarted", to_started);
  Report("StartAttempt -> AttemptExited (trivial stage)", to_exited);
  std::printf("%-44s agent %.2f ms, shim+stage %.2f ms (%.0f ms clock ticks over %d)\n",
              "CPU per attempt", (cpu1.self_ms - cpu0.self_ms) / attempts,
              (cpu1.children_ms - cpu0.children_ms) / attempts,
              1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK)), attempts);

  int64_t id = attempts + 1;
  auto t0 = Clock::now();
  coord.Start(h.Spec(id, {"lh-testjob", "--events", std::to_string(events)}));
  if (!h.WaitExited(id, 300'000)) return 1;
  double ms = Ms(*coord.exited_time(id) - t0);
  std::printf("%-44s %lld events in %.0f ms: %.0f events/s (each stored once: %s)\n",
              "events.jsonl -> coordinator", static_cast<long long>(events), ms,
              static_cast<double>(events) / ms * 1000,
              static_cast<int64_t>(coord.events(id).size()) == events ? "yes" : "NO");

  std::vector<double> bare, shim_only, shimmed;
  for (int i = 0; i < attempts; ++i) {
    bare.push_back(SpawnAndWaitMs({"/bin/true"}));
    shim_only.push_back(SpawnAndWaitMs({BinPath("longhaul-shim"), "--usage-error"}));
    std::string dir = h.tmp().Join(StrCat("shim-", i));
    std::system(StrCat("mkdir -p ", dir).c_str());
    shimmed.push_back(SpawnAndWaitMs({BinPath("longhaul-shim"), "--dir", dir, "--", "/bin/true"}));
  }
  Report("spawn+wait /bin/true", bare);
  Report("spawn+wait longhaul-shim (exits at once)", shim_only);
  Report("spawn+wait longhaul-shim -- /bin/true", shimmed);
  return 0;
}

}  // namespace
}  // namespace longhaul::testing

int main(int argc, char** argv) { return longhaul::testing::Main(argc, argv); }
