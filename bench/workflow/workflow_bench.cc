// Big workflow files, with the real binaries:
//
//  (a) validate: `longhaul validate FILE` run as a child process (fork + exec, output to
//      /dev/null); its wall time and, from wait4's rusage, its CPU time (user + sys) and
//      peak RSS. Files: N independent stages (`run: [/bin/true]`, `resources: {cpus: 0.01}`)
//      for each N of --sizes, and a chain of --chain stages, each needing the one before.
//  (b) submit: SubmitRun of the largest independent file to a real longhauld (the
//      integration tests' Cluster, no agents) and the time until it answers: parse, plan with
//      cache keys, store the run and its stages, make the roots ready. Each round is a new
//      run of the same file on the same longhauld.
//
// Each figure is printed per round, then the median.
//
//   workflow_bench [--sizes 1000,10000,100000] [--chain 10000] [--rounds 5]
//                  [--submit-rounds 3] [--skip-submit]
//
// Run it on an otherwise idle machine: wall times count whatever else runs.
#include <fcntl.h>
#include <sys/resource.h>
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
#include "tests/integration/cluster.h"

namespace longhaul::testing {
namespace {

struct Flags {
  std::vector<int> sizes = {1000, 10000, 100000};
  int chain = 10000;
  int rounds = 5;
  int submit_rounds = 3;
  bool submit = true;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string Workflow(int n, bool chain) {
  std::string text = StrCat("name: ", chain ? "chain" : "wide", n, "\nstages:\n");
  text.reserve(static_cast<size_t>(n) * 80);
  for (int i = 0; i < n; ++i) {
    text += StrCat("  s", i, ":\n    run: [/bin/true]\n    resources: {cpus: 0.01}\n");
    if (chain && i > 0) text += StrCat("    needs: [s", i - 1, "]\n");
  }
  return text;
}

struct Measured {
  double wall_s = 0;
  double cpu_s = 0;
  double max_rss_mb = 0;
};

// Runs `longhaul validate file` with stdout and stderr to /dev/null.
Measured Validate(const std::string& file) {
  std::string bin = BinPath("longhaul");
  auto start = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(bin.c_str(), bin.c_str(), "validate", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  auto end = std::chrono::steady_clock::now();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "longhaul validate %s failed (status %d)\n", file.c_str(), status);
    std::exit(1);
  }
  Measured m;
  m.wall_s = std::chrono::duration<double>(end - start).count();
  m.cpu_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  m.max_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB
  return m;
}

void BenchValidate(const Flags& flags, TempDir& dir, const std::string& name,
                   const std::string& text) {
  std::string file = dir.Join(name + ".yaml");
  WriteTextFile(file, text);
  std::vector<double> wall, cpu, rss;
  for (int r = 0; r < flags.rounds; ++r) {
    Measured m = Validate(file);
    wall.push_back(m.wall_s);
    cpu.push_back(m.cpu_s);
    rss.push_back(m.max_rss_mb);
  }
  std::printf("validate %-12s %6.2f MiB: median wall %.3f s, cpu %.3f s, peak RSS %.0f MB\n",
              name.c_str(), static_cast<double>(text.size()) / (1 << 20), Median(wall),
              Median(cpu), Median(rss));
}

void BenchSubmit(const Flags& flags, int n) {
  ClusterOptions options;
  options.agents = 0;
  options.log_level = "info";
  Cluster cluster(options);
  Status started = cluster.Start();
  if (!started.ok()) {
    std::fprintf(stderr, "cluster: %s\n%s", std::string(started.message()).c_str(),
                 cluster.Logs().c_str());
    std::exit(1);
  }
  std::string text = Workflow(n, false);
  std::vector<double> took, cpu;
  for (int r = 0; r < flags.submit_rounds; ++r) {
    v1::SubmitRunRequest req;
    req.set_workflow_text(text);
    req.set_submission_id(StrCat("bench-", r));
    v1::SubmitRunResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
    double cpu_before = testing::ProcessCpuSeconds(cluster.coordinator_pid());
    auto start = std::chrono::steady_clock::now();
    grpc::Status st = cluster.stub().SubmitRun(&ctx, req, &resp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double cpu_s = testing::ProcessCpuSeconds(cluster.coordinator_pid()) - cpu_before;
    if (!st.ok()) {
      std::fprintf(stderr, "SubmitRun: %s\n", st.error_message().c_str());
      std::exit(1);
    }
    std::printf("  submit %d stages, round %d: %.3f s, longhauld CPU %.3f s (run %lld, answer "
                "%zu bytes)\n",
                n, r + 1, s, cpu_s, static_cast<long long>(resp.run().id()), resp.ByteSizeLong());
    took.push_back(s);
    cpu.push_back(cpu_s);
  }
  std::printf("submit %d stages: median %.3f s, longhauld CPU %.3f s\n", n, Median(took),
              Median(cpu));
}

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sizes") {
      f.sizes.clear();
      for (const std::string& s : StrSplit(next(), ',')) f.sizes.push_back(std::stoi(s));
    } else if (a == "--chain") {
      f.chain = std::stoi(next());
    } else if (a == "--rounds") {
      f.rounds = std::stoi(next());
    } else if (a == "--submit-rounds") {
      f.submit_rounds = std::stoi(next());
    } else if (a == "--skip-submit") {
      f.submit = false;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", a.c_str());
      std::exit(2);
    }
  }
  return f;
}

}  // namespace
}  // namespace longhaul::testing

int main(int argc, char** argv) {
  using namespace longhaul::testing;
  Flags flags = ParseFlags(argc, argv);
  TempDir dir;
  for (int n : flags.sizes) BenchValidate(flags, dir, longhaul::StrCat("wide", n), Workflow(n, false));
  if (flags.chain > 0) {
    BenchValidate(flags, dir, longhaul::StrCat("chain", flags.chain), Workflow(flags.chain, true));
  }
  if (flags.submit && !flags.sizes.empty()) {
    BenchSubmit(flags, *std::max_element(flags.sizes.begin(), flags.sizes.end()));
  }
  return 0;
}
