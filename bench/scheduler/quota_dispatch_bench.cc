// quota_dispatch_bench: what an attempt's end and the dispatch pass after it cost the
// coordinator when many GPU stages wait, with quotas and fair share on against off
// (docs/scheduling.md, "Quotas" and "Fair share"). The real Scheduler over a real SQLite file,
// driven as SchedulerLoop drives it (one transaction per batch: handlers, Dispatch,
// FlushToStore, Commit), with one agent simulated in this process.
//
// --teams teams each submit --runs-per-team runs of 1-GPU stages, --ready stages in all, onto
// one agent of --gpus GPUs: the GPUs fill, the rest waits in the ready queue. Then, --samples
// times, one running attempt exits (timed: the batch that handles AttemptExited and whose
// dispatch pass starts the next stage in line) and the new attempt reports AttemptStarted (a
// batch of its own, not timed). Prints the median and p90 of the timed batch and of its
// phases (the handler, Dispatch, FlushToStore + Commit), for each mode:
//   none    no --quota, no --fair-share-half-life
//   quotas  --quota team:tI=gpus:G/T,borrow:G for each team, --fair-share-half-life 1h
//
//   quota_dispatch_bench [--ready 10000] [--teams 4] [--runs-per-team 5] [--gpus 8]
//                        [--samples 200] [--dir /var/tmp]
//
// Not a test: nothing here passes or fails.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/hash.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"
#include "daemon/store/sqlite_store.h"
#include "daemon/workflow/workflow.h"

namespace longhaul::bench {
namespace {

using Clk = std::chrono::steady_clock;

double MsSince(Clk::time_point t) {
  return std::chrono::duration<double, std::milli>(Clk::now() - t).count();
}

class QuotaBenchLink : public scheduler::AgentLink {
 public:
  void Send(uint64_t, const v1::CoordinatorMessage& msg) override {
    if (msg.has_start()) starts.push_back(msg.start().attempt_id());
  }
  void Close(uint64_t) override {}
  std::deque<int64_t> starts;
};

struct Phases {
  std::vector<double> total, handler, dispatch, commit;
};

void QuotaBenchCheck(const Status& st) {
  if (!st.ok()) {
    std::fprintf(stderr, "quota_dispatch_bench: %s\n", ToStd(st.message()).c_str());
    std::exit(1);
  }
}

class QuotaBench {
 public:
  QuotaBench(const std::string& db, const scheduler::SchedulerOptions& options, int gpus) {
    auto s = store::SqliteStore::Open(db);
    QuotaBenchCheck(s.status());
    store_ = std::move(*s);
    scheduler_ = std::make_unique<scheduler::Scheduler>(store_.get(), &clock_, &link_, options);
    Batch([&] { QuotaBenchCheck(scheduler_->Recover()); });
    v1::Hello hello;
    hello.set_agent_id("n1");
    hello.set_hostname("n1.bench");
    hello.mutable_resources()->set_cpus(1024);
    hello.mutable_resources()->set_memory_bytes(int64_t{1} << 40);
    hello.mutable_resources()->set_gpus(gpus);
    hello.set_data_dir("/data/n1");
    hello.set_executor("local");
    Batch([&] { scheduler_->OnAgentConnected(kSession, hello); });
  }

  // Runs `fn` in one batch; adds its phases to `into` when given.
  void Batch(const std::function<void()>& fn, Phases* into = nullptr) {
    QuotaBenchCheck(store_->Begin());
    auto t0 = Clk::now();
    scheduler_->Tick();
    fn();
    double handler = MsSince(t0);
    auto t1 = Clk::now();
    scheduler_->Dispatch();
    double dispatch = MsSince(t1);
    auto t2 = Clk::now();
    QuotaBenchCheck(scheduler_->FlushToStore());
    QuotaBenchCheck(store_->Commit());
    scheduler_->AfterCommit();
    double commit = MsSince(t2);
    if (into != nullptr) {
      into->total.push_back(MsSince(t0));
      into->handler.push_back(handler);
      into->dispatch.push_back(dispatch);
      into->commit.push_back(commit);
    }
  }

  void Submit(const std::string& user, const std::string& team, const std::string& yaml) {
    auto wf = workflow::ParseWorkflow(yaml, "bench.yaml");
    QuotaBenchCheck(wf.status());
    scheduler::SubmitInput in;
    in.workflow = std::move(*wf);
    in.text = yaml;
    in.path = "bench.yaml";
    in.hash = Sha256Hex(yaml);
    in.no_cache = true;
    in.user = user;
    in.team = team;
    Batch([&] { QuotaBenchCheck(scheduler_->Submit(std::move(in)).status()); });
  }

  // Answers every start so far with AttemptStarted; the started attempts join `running_`.
  void AnswerStarts() {
    std::vector<int64_t> now(link_.starts.begin(), link_.starts.end());
    link_.starts.clear();
    if (now.empty()) return;
    Batch([&] {
      for (int64_t id : now) {
        v1::AgentMessage m;
        m.mutable_started()->set_attempt_id(id);
        m.mutable_started()->set_pid(static_cast<int32_t>(id));
        m.mutable_started()->set_started_at_ms(clock_.NowMs());
        scheduler_->OnAgentMessage(kSession, m);
        running_.push_back(id);
      }
    });
  }

  // The oldest running attempt exits (timed), then its successor starts (not timed).
  void EndOne(Phases* into) {
    if (running_.empty()) {
      std::fprintf(stderr, "quota_dispatch_bench: nothing runs\n");
      std::exit(1);
    }
    int64_t id = running_.front();
    running_.pop_front();
    Batch(
        [&] {
          v1::AgentMessage x;
          x.mutable_exited()->set_attempt_id(id);
          x.mutable_exited()->set_exit_code(0);
          x.mutable_exited()->set_ended_at_ms(clock_.NowMs());
          scheduler_->OnAgentMessage(kSession, x);
        },
        into);
    if (link_.starts.size() != 1) {
      std::fprintf(stderr, "quota_dispatch_bench: %zu starts after an end, not 1\n",
                   link_.starts.size());
      std::exit(1);
    }
    AnswerStarts();
  }

 private:
  static constexpr uint64_t kSession = 1;
  SystemClock clock_;
  QuotaBenchLink link_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::deque<int64_t> running_;
};

std::string QuotaBenchRun(int run, int stages) {
  std::string text = StrCat("name: sweep-", run, "\nstages:\n");
  for (int i = 0; i < stages; ++i) {
    text += StrCat("  s", i, ": {run: [/bin/true], resources: {cpus: 1, gpus: 1}}\n");
  }
  return text;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

int Main(int argc, char** argv) {
  int ready = 10000, teams = 4, runs_per_team = 5, gpus = 8, samples = 200;
  std::string dir = "/var/tmp";
  CLI::App app{"an attempt's end and the dispatch after it, with quotas and fair share on and off"};
  app.add_option("--ready", ready, "GPU stages submitted in all (most of them wait)");
  app.add_option("--teams", teams, "teams submitting them, in turn");
  app.add_option("--runs-per-team", runs_per_team, "runs each team submits");
  app.add_option("--gpus", gpus, "GPUs of the one agent");
  app.add_option("--samples", samples, "attempt ends timed in each mode");
  app.add_option("--dir", dir, "where the SQLite files go");
  CLI11_PARSE(app, argc, argv);
  SetupLogging("warn");
  std::printf(
      "quota_dispatch_bench: %d GPU stages of %d teams x %d runs, one agent of %d GPUs, "
      "%d ends timed\n",
      ready, teams, runs_per_team, gpus, samples);
  std::printf("%-7s %18s %18s %18s %18s\n", "mode", "batch p50 / p90", "handler", "dispatch",
              "flush+commit");
  for (bool quotas : {false, true}) {
    std::string tmp = StrCat(dir, "/quota-dispatch-bench-", getpid(), quotas ? "-q" : "-n");
    std::filesystem::create_directories(tmp);
    {
      scheduler::SchedulerOptions options;
      if (quotas) {
        std::vector<std::string> rules;
        for (int t = 0; t < teams; ++t) {
          rules.push_back(
              StrCat("team:t", t, "=gpus:", std::max(1, gpus / teams), ",borrow:", gpus));
        }
        auto q = scheduler::Quotas::Parse(rules);
        QuotaBenchCheck(q.status());
        options.quotas = *q;
        options.fair_share_half_life_ms = 3'600'000;
      }
      QuotaBench bench(tmp + "/longhaul.db", options, gpus);
      int runs = teams * runs_per_team;
      for (int r = 0; r < runs; ++r) {
        int stages = ready / runs + (r < ready % runs ? 1 : 0);
        bench.Submit(StrCat("u", r % teams), StrCat("t", r % teams), QuotaBenchRun(r, stages));
      }
      bench.AnswerStarts();
      Phases p;
      for (int i = 0; i < samples; ++i) bench.EndOne(&p);
      auto cell = [](const std::vector<double>& v) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f / %.2f ms", Quantile(v, 0.5), Quantile(v, 0.9));
        return std::string(buf);
      };
      std::printf("%-7s %18s %18s %18s %18s\n", quotas ? "quotas" : "none", cell(p.total).c_str(),
                  cell(p.handler).c_str(), cell(p.dispatch).c_str(), cell(p.commit).c_str());
      std::fflush(stdout);
    }
    std::filesystem::remove_all(tmp);
  }
  return 0;
}

}  // namespace
}  // namespace longhaul::bench

int main(int argc, char** argv) { return longhaul::bench::Main(argc, argv); }
