// Model-based test of services and their consumers: thousands of random small workflows
// (services and tasks, random CPUs, memory and GPUs, fan-in and fan-out, one service per item
// as `foreach` expands it) on random agents, with the fake clock. Each workflow either is
// refused at submission, exactly when some stage with the services it needs cannot be placed
// together on the agents, or finishes, whatever order the agents answer in.
#include <stdlib.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "core/logging.h"
#include "proto/state_names.h"
#include "tests/daemon/scheduler/scheduler_fixture.h"

namespace longhaul::scheduler {
namespace {

struct GenStage {
  std::string name;
  bool service = false;
  double cpus = 1;
  int64_t memory_gib = 0;
  int gpus = 0;
  std::vector<int> needs;
};

struct GenAgent {
  double cpus = 1;
  int gpus = 0;
};

struct GenCase {
  std::vector<GenAgent> agents;
  std::vector<GenStage> stages;

  std::string Yaml() const {
    std::ostringstream out;
    out << "name: random\nstages:\n";
    for (const GenStage& s : stages) {
      out << "  " << s.name << ": {run: [prog], " << (s.service ? "kind: service, " : "")
          << "resources: {cpus: " << s.cpus << ", gpus: " << s.gpus;
      if (s.memory_gib > 0) out << ", memory: " << s.memory_gib << "G";
      out << "}";
      if (!s.needs.empty()) {
        out << ", needs: [";
        for (size_t i = 0; i < s.needs.size(); ++i) {
          out << (i ? ", " : "") << stages[static_cast<size_t>(s.needs[i])].name;
        }
        out << "]";
      }
      out << "}\n";
    }
    return out.str();
  }
  std::string Describe() const {
    std::ostringstream out;
    out << "agents:";
    for (const GenAgent& a : agents)
      out << " (" << a.cpus << " cpus, 16 GiB, " << a.gpus << " GPUs)";
    return out.str() + "\n" + Yaml();
  }
};

GenCase Generate(std::mt19937_64& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  GenCase c;
  int agents = 1 + pick(3);
  for (int i = 0; i < agents; ++i) {
    c.agents.push_back({static_cast<double>(1 + pick(4)), pick(4) == 0 ? 0 : pick(3)});
  }
  const double kCpus[] = {0.5, 1, 1.5, 2};
  const int64_t kMemory[] = {0, 0, 4, 12};
  auto resources = [&](GenStage* s) {
    s->cpus = kCpus[pick(4)];
    s->memory_gib = kMemory[pick(4)];
    s->gpus = pick(4) == 0 ? 1 + pick(2) : 0;
  };
  int n = 2 + pick(6);
  for (int i = 0; i < n; ++i) {
    GenStage s;
    s.name = "s" + std::to_string(i);
    s.service = pick(3) == 0;
    resources(&s);
    for (int j = 0; j < i; ++j) {
      const GenStage& up = c.stages[static_cast<size_t>(j)];
      // A service needs tasks only; a task needs tasks and services.
      if (s.service && up.service) continue;
      if (pick(5) < 2) s.needs.push_back(j);
    }
    c.stages.push_back(std::move(s));
  }
  // Validation wants every service needed: a service no later task needs gets a consumer.
  for (size_t i = 0; i < c.stages.size(); ++i) {
    if (!c.stages[i].service) continue;
    bool needed = false;
    for (const GenStage& s : c.stages) {
      for (int d : s.needs) needed = needed || d == static_cast<int>(i);
    }
    if (needed) continue;
    GenStage consumer;
    consumer.name = "c" + std::to_string(i);
    resources(&consumer);
    consumer.needs = {static_cast<int>(i)};
    c.stages.push_back(std::move(consumer));
  }
  // A sweep, as `foreach` expands one: items of a service each with its own consumer.
  if (pick(2) == 0) {
    int items = 2 + pick(3);
    GenStage server, bench;
    resources(&server);
    resources(&bench);
    int base = static_cast<int>(c.stages.size());
    for (int k = 0; k < items; ++k) {
      GenStage sv = server;
      sv.name = "server-" + std::to_string(k);
      sv.service = true;
      sv.needs = {0};
      if (c.stages[0].service) sv.needs.clear();
      c.stages.push_back(sv);
    }
    for (int k = 0; k < items; ++k) {
      GenStage b = bench;
      b.name = "bench-" + std::to_string(k);
      b.needs = {base + k};
      c.stages.push_back(b);
    }
  }
  return c;
}

// The oracle: can `members` be placed together on `free` (each agent's capacity left)?
bool Packs(const std::vector<const GenStage*>& members, size_t i, std::vector<GenAgent>& free,
           std::vector<int64_t>& memory) {
  if (i == members.size()) return true;
  const GenStage& m = *members[i];
  for (size_t a = 0; a < free.size(); ++a) {
    if (free[a].cpus + 1e-9 < m.cpus || free[a].gpus < m.gpus || memory[a] < m.memory_gib) {
      continue;
    }
    free[a].cpus -= m.cpus;
    free[a].gpus -= m.gpus;
    memory[a] -= m.memory_gib;
    bool ok = Packs(members, i + 1, free, memory);
    free[a].cpus += m.cpus;
    free[a].gpus += m.gpus;
    memory[a] += m.memory_gib;
    if (ok) return true;
  }
  return false;
}

// Whether every stage that runs fits beside the services it needs. A service nothing needs
// never runs.
bool EveryStageFits(const GenCase& c) {
  std::vector<bool> consumed(c.stages.size(), false);
  for (const GenStage& s : c.stages) {
    for (int d : s.needs) consumed[static_cast<size_t>(d)] = true;
  }
  for (size_t i = 0; i < c.stages.size(); ++i) {
    const GenStage& s = c.stages[i];
    if (s.service && !consumed[i]) continue;
    std::vector<const GenStage*> group{&s};
    for (int d : s.needs) {
      if (c.stages[static_cast<size_t>(d)].service)
        group.push_back(&c.stages[static_cast<size_t>(d)]);
    }
    std::vector<GenAgent> free = c.agents;
    std::vector<int64_t> memory(c.agents.size(), 16);
    if (!Packs(group, 0, free, memory)) return false;
  }
  return true;
}

std::string StatesOf(const v1::Run& r) {
  std::string states;
  if (r.stages_size() == 0) return states;
  for (const v1::Stage& st : r.stages()) {
    states += "\n  " + st.name() + "=" + std::string(StageStatusName(st.status())) + " (" +
              st.reason() + ")";
  }
  return states;
}

TEST_F(SchedulerTest, RandomWorkflowsWithServicesFinishOrAreRefusedAtSubmit) {
  uint64_t seed = std::random_device{}();
  if (const char* fixed = std::getenv("LONGHAUL_PROPERTY_SEED")) seed = std::stoull(fixed);
  constexpr int kCases = 2000;
  SetupLogging("error");  // thousands of runs: their info lines would cost more than they do
  std::mt19937_64 rng(seed);
  // The stores live in memory when it can (tmpfs): a commit per batch on a disk that syncs
  // costs more than the whole scheduling.
  char shm[] = "/dev/shm/longhaul-property-XXXXXX";
  std::string dir = mkdtemp(shm) != nullptr ? std::string(shm) : dir_.path();
  int refused = 0, finished = 0, max_steps = 0;
  for (int n = 0; n < kCases; ++n) {
    GenCase c = Generate(rng);
    if (const char* v = std::getenv("LONGHAUL_PROPERTY_VERBOSE_CASE"); v && std::stoi(v) == n) {
      SetupLogging("debug");
    }
    std::string where = "seed " + std::to_string(seed) + " (LONGHAUL_PROPERTY_SEED), case " +
                        std::to_string(n) + ":\n" + c.Describe();
    // A fresh store and scheduler: no agent of another case is registered.
    scheduler_.reset();
    std::string db = dir + "/case.db";
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db + suffix);
    auto s = store::SqliteStore::Open(db);
    ASSERT_TRUE(s.ok()) << s.status();
    store_ = std::move(*s);
    NewScheduler();
    link_.sent.clear();
    std::map<std::string, uint64_t> session_of;
    for (size_t a = 0; a < c.agents.size(); ++a) {
      std::string id = "n" + std::to_string(a);
      session_of[id] = Connect(id, c.agents[a].cpus, c.agents[a].gpus);
    }
    link_.sent.clear();
    auto wf = workflow::ParseWorkflow(c.Yaml(), "random.yaml");
    ASSERT_TRUE(wf.ok()) << wf.status() << "\n" << where;
    SubmitInput in;
    in.workflow = std::move(*wf);
    in.path = "random.yaml";
    Result<SubmitOutput> out = absl::InternalError("not submitted");
    Batch([&] { out = scheduler_->Submit(std::move(in)); });
    bool fits = EveryStageFits(c);
    if (!out.ok()) {
      ASSERT_FALSE(fits) << "refused, but every stage fits: " << out.status() << "\n" << where;
      ASSERT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << where;
      ++refused;
      continue;
    }
    ASSERT_TRUE(fits) << "accepted, but a stage can never fit\n" << where;
    int64_t run = out->run.id();
    // What the agents have to answer: a service to report ready, a task or a stopped
    // attempt to exit. One at a time, in a random order.
    struct Pending {
      uint64_t session;
      int64_t attempt;
      bool ready;  // else exit
      int signal;
    };
    std::vector<Pending> pending;
    int steps = 0;
    for (;; ++steps) {
      for (auto& [session, msg] : link_.sent) {
        if (msg.has_start()) {
          bool service = msg.start().stage().rfind("server-", 0) == 0;
          for (const GenStage& g : c.stages) {
            if (g.name == msg.start().stage()) service = g.service;
          }
          pending.push_back({session, msg.start().attempt_id(), service, 0});
        } else if (msg.has_cancel()) {
          ASSERT_NE(msg.cancel().reason(), "cancelled") << where;
          pending.push_back({session, msg.cancel().attempt_id(), false, 15});
        }
      }
      link_.sent.clear();
      if (pending.empty()) break;
      if (steps >= 4990) {
        std::string agents;
        for (const v1::AgentInfo& a : scheduler_->ListAgents()) {
          agents += " " + a.id() + " free " + std::to_string(a.free().cpus()) + " cpus " +
                    std::to_string(a.free().gpus()) + " GPUs;";
        }
        ADD_FAILURE() << "step " << steps << agents << StatesOf(GetRun(run));
      }
      ASSERT_LT(steps, 5000) << "no end in sight:" << StatesOf(GetRun(run)) << "\n" << where;
      size_t k = static_cast<size_t>(rng() % pending.size());
      Pending p = pending[k];
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
      if (p.ready) {
        Events(p.session, p.attempt, {R"({"ready": {}})"});
      } else {
        Exit(p.session, p.attempt, 0, p.signal);
      }
    }
    max_steps = std::max(max_steps, steps);
    v1::Run r = GetRun(run);
    ASSERT_EQ(r.status(), v1::RUN_SUCCEEDED) << "hung or failed:" << StatesOf(r) << "\n" << where;
    for (const v1::AgentInfo& a : scheduler_->ListAgents()) {
      ASSERT_EQ(a.free().cpus(), a.total().cpus()) << where;
      ASSERT_EQ(a.free().gpus(), a.total().gpus()) << where;
    }
    ++finished;
  }
  scheduler_.reset();
  store_.reset();
  if (dir != dir_.path()) std::filesystem::remove_all(dir);
  std::printf("seed %llu: %d finished, %d refused, at most %d steps\n",
              static_cast<unsigned long long>(seed), finished, refused, max_steps);
  EXPECT_GT(finished, kCases / 4);
  EXPECT_GT(refused, kCases / 20);
}

}  // namespace
}  // namespace longhaul::scheduler
