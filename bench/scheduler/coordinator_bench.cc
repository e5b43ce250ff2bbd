// coordinator_bench: what one stage costs the coordinator alone, as a function of how many
// stages the run has. The real Scheduler over a real SQLite file (in --dir, on disk by default),
// driven the way SchedulerLoop drives it (one transaction per batch: handlers, Dispatch,
// FlushToStore, Commit, AfterCommit), with agents simulated in this process: every StartAttempt
// the coordinator sends is answered in the next batch by AttemptStarted, one progress event and
// AttemptExited (exit 0). No processes, no gRPC: the figures are the coordinator's own cost,
// which must not grow with the size of the run.
//
// For each size it runs one run of N independent stages, and a chain of --chain links, and
// prints stages/s, the coordinator's time per stage, and the process's RSS before, at peak and
// after the run ended (after the scheduler evicted it).
//
//   coordinator_bench [--sizes 1000,10000,100000] [--chain 10000] [--agents 4] [--slots 64]
//                     [--dir /var/tmp] [--repeat 1]
//
// Not a test: nothing here passes or fails.
#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/hash.h"
#include "core/logging.h"
#include "core/memory_policy.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::bench {
namespace {

using scheduler::Scheduler;

// Kilobytes from /proc/self/status ("VmRSS", "VmHWM").
int64_t StatusKb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  return -1;
}

void ResetPeak() {
  std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM to the current RSS
}

class Link : public scheduler::AgentLink {
 public:
  void Send(uint64_t session, const v1::CoordinatorMessage& msg) override {
    if (msg.has_start()) starts.push_back({session, msg.start().attempt_id()});
  }
  void Close(uint64_t) override {}
  std::deque<std::pair<uint64_t, int64_t>> starts;
};

struct Figures {
  double seconds = 0;
  double submit_ms = 0;  // the batch that submitted it: plan (cache keys), insert, readiness
  int64_t batches = 0;
  int64_t rss_before_kb = 0, rss_submitted_kb = 0, rss_peak_kb = 0, rss_after_kb = 0;
};

class Harness {
 public:
  Harness(const std::string& db, int agents, int slots) : agents_(agents) {
    auto s = store::SqliteStore::Open(db);
    if (!s.ok()) {
      std::fprintf(stderr, "coordinator_bench: %s\n", ToStd(s.status().message()).c_str());
      std::exit(1);
    }
    store_ = std::move(*s);
    scheduler::SchedulerOptions options;
    scheduler_ = std::make_unique<Scheduler>(store_.get(), &clock_, &link_, options);
    Batch([&] { Check(scheduler_->Recover()); });
    for (int i = 0; i < agents; ++i) {
      v1::Hello hello;
      hello.set_agent_id(StrCat("agent-", i));
      hello.set_hostname(StrCat("agent-", i, ".bench"));
      hello.mutable_resources()->set_cpus(slots);
      hello.mutable_resources()->set_memory_bytes(int64_t{64} << 30);
      hello.set_data_dir(StrCat("/data/agent-", i));
      hello.set_executor("local");
      Batch([&] { scheduler_->OnAgentConnected(i + 1, hello); });
    }
  }

  static void Check(const Status& st) {
    if (!st.ok()) {
      std::fprintf(stderr, "coordinator_bench: %s\n", ToStd(st.message()).c_str());
      std::exit(1);
    }
  }

  void Batch(const std::function<void()>& fn) {
    Check(store_->Begin());
    memory_.OnTick();
    scheduler_->Tick();
    fn();
    scheduler_->Dispatch();
    Check(scheduler_->FlushToStore());
    Check(store_->Commit());
    memory_.AfterCommit(scheduler_->AfterCommit(), [this] { scheduler_->ShrinkToFit(); });
    ++batches_;
  }

  // Submits `yaml` and answers every start until the run ends.
  Figures Run(const std::string& yaml, int max_per_batch) {
    Figures f;
    auto wf = workflow::ParseWorkflow(yaml, "bench.yaml");
    Check(wf.status());
    malloc_trim(0);
    f.rss_before_kb = StatusKb("VmRSS");
    ResetPeak();
    int64_t batches0 = batches_;
    auto t0 = std::chrono::steady_clock::now();
    scheduler::SubmitInput in;
    in.workflow = std::move(*wf);
    in.text = yaml;
    in.path = "bench.yaml";
    in.hash = Sha256Hex(yaml);
    in.no_cache = true;  // identical stages would otherwise reuse each other
    int64_t run_id = 0;
    auto s0 = std::chrono::steady_clock::now();
    Batch([&] {
      auto out = scheduler_->Submit(std::move(in));
      Check(out.status());
      run_id = out->run.id();
    });
    f.submit_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0).count();
    malloc_trim(0);
    f.rss_submitted_kb = StatusKb("VmRSS");
    int64_t seq = 0;
    while (scheduler_->FindRun(run_id) != nullptr) {
      if (link_.starts.empty()) {
        std::fprintf(stderr, "coordinator_bench: run %lld stopped making progress\n",
                     static_cast<long long>(run_id));
        std::exit(1);
      }
      std::vector<std::pair<uint64_t, int64_t>> now;
      while (!link_.starts.empty() && static_cast<int>(now.size()) < max_per_batch) {
        now.push_back(link_.starts.front());
        link_.starts.pop_front();
      }
      Batch([&] {
        int64_t ts = clock_.NowMs();
        for (int i = 0; i < agents_; ++i) {  // the agents' heartbeats, one per batch
          v1::AgentMessage hb;
          hb.mutable_heartbeat()->set_ts_ms(ts);
          scheduler_->OnAgentMessage(i + 1, hb);
        }
        for (auto [session, attempt] : now) {
          v1::AgentMessage m;
          m.mutable_started()->set_attempt_id(attempt);
          m.mutable_started()->set_pid(static_cast<int32_t>(attempt));
          m.mutable_started()->set_started_at_ms(ts);
          scheduler_->OnAgentMessage(session, m);
          v1::AgentMessage ev;
          ev.mutable_events()->set_attempt_id(attempt);
          v1::EventRecord* rec = ev.mutable_events()->add_events();
          rec->set_seq(1);
          rec->set_ts_ms(ts);
          rec->set_line(R"({"progress": {"done": 1, "total": 1}})");
          scheduler_->OnAgentMessage(session, ev);
          v1::AgentMessage x;
          x.mutable_exited()->set_attempt_id(attempt);
          x.mutable_exited()->set_exit_code(0);
          x.mutable_exited()->set_ended_at_ms(ts);
          scheduler_->OnAgentMessage(session, x);
          ++seq;
        }
      });
      f.rss_peak_kb = std::max(f.rss_peak_kb, StatusKb("VmHWM"));
    }
    f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    f.batches = batches_ - batches0;
    f.rss_peak_kb = std::max(f.rss_peak_kb, StatusKb("VmHWM"));
    malloc_trim(0);
    f.rss_after_kb = StatusKb("VmRSS");
    return f;
  }

 private:
  int agents_;
  SystemClock clock_;
  MemoryPolicy memory_{&clock_};  // as longhauld's loop tells it
  Link link_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<Scheduler> scheduler_;
  int64_t batches_ = 0;
};

std::string Wide(int n) {
  std::string text = StrCat("name: wide-", n, "\nstages:\n");
  for (int i = 0; i < n; ++i) {
    text += StrCat("  s", i, ":\n    run: [/bin/true]\n    resources: {cpus: 1}\n");
  }
  return text;
}

std::string Chain(int n) {
  std::string text = StrCat("name: chain-", n, "\nstages:\n");
  for (int i = 0; i < n; ++i) {
    text += StrCat("  s", i, ":\n    run: [/bin/true]\n    resources: {cpus: 1}\n");
    if (i > 0) text += StrCat("    needs: [s", i - 1, "]\n");
  }
  return text;
}

void Print(const std::string& what, int n, const Figures& f) {
  std::printf(
      "%-12s %7d stages %6.0f stages/s %7.1f us/stage %6lld batches, submit %6.0f ms; RSS MB: before %6.1f, "
      "submitted %6.1f, peak %6.1f, after %6.1f\n",
      what.c_str(), n, n / f.seconds, f.seconds * 1e6 / n, static_cast<long long>(f.batches), f.submit_ms,
      f.rss_before_kb / 1024.0, f.rss_submitted_kb / 1024.0, f.rss_peak_kb / 1024.0, f.rss_after_kb / 1024.0);
  std::fflush(stdout);
}

int Main(int argc, char** argv) {
  std::string sizes = "1000,10000,100000";
  int chain = 10000, agents = 4, slots = 64, repeat = 1;
  std::string dir = "/var/tmp";
  CLI::App app{"the coordinator's cost per stage against the size of the run"};
  app.add_option("--sizes", sizes, "run sizes (independent stages), comma-separated");
  app.add_option("--chain", chain, "links in the chain (0: none)");
  app.add_option("--agents", agents, "simulated agents");
  app.add_option("--slots", slots, "CPUs per agent (each stage asks for 1)");
  app.add_option("--dir", dir, "where the SQLite file goes (a disk, not tmpfs, for the figures)");
  app.add_option("--repeat", repeat, "repeat each size this many times");
  CLI11_PARSE(app, argc, argv);

  SetupLogging("warn");
  std::string tmp = StrCat(dir, "/coordinator-bench-", getpid());
  std::filesystem::create_directories(tmp);
  {
    Harness h(tmp + "/longhaul.db", agents, slots);
    std::printf("coordinator_bench: %d agents x %d slots, store %s/longhaul.db\n", agents, slots,
                tmp.c_str());
    for (int r = 0; r < repeat; ++r) {
      for (const std::string& s : StrSplit(sizes, ',')) {
        int n = std::stoi(s);
        Print("independent", n, h.Run(Wide(n), agents * slots));
      }
      if (chain > 0) Print("chain", chain, h.Run(Chain(chain), agents * slots));
    }
  }
  std::filesystem::remove_all(tmp);
  return 0;
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) { return longhaul::bench::Main(argc, argv); }
