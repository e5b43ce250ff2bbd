// The fixture of the tests against the real local Slurm (deploy/slurm-local.sh): skips, saying
// why, when no slurmctld answers; fails at once when the node is not idle; starts a cluster
// whose agent runs `--executor slurm`; cancels the test's jobs at its end.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "core/strings.h"
#include "proto/state_names.h"
#include "tests/integration/cluster.h"
#include "tests/integration/journal.h"

namespace longhaul::testing {

inline std::string SlurmConf() {
  if (const char* c = std::getenv("SLURM_CONF"); c != nullptr && *c != '\0') return c;
  const char* d = std::getenv("LONGHAUL_SLURM_DIR");
  return StrCat(d != nullptr && *d != '\0' ? d : "/var/tmp/longhaul-slurm", "/etc/slurm.conf");
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class SlurmTest : public ClusterTest {
 protected:
  void SetUp() override {
    ::setenv("SLURM_CONF", SlurmConf().c_str(), 1);
    CommandResult ping = RunCommand({"/usr/bin/env", "scontrol", "ping"}, {}, 10'000);
    if (ping.exit_code != 0 || ping.out.find("is UP") == std::string::npos) {
      GTEST_SKIP() << "no local Slurm answers (SLURM_CONF=" << SlurmConf()
                   << "): run deploy/slurm-local.sh start. scontrol ping: " << ping.out << ping.err;
    }
    // The tests need the node to themselves: a job another user left queued runs before theirs
    // and makes every wait below time out. Jobs an earlier test cancelled may take a moment
    // to leave the queue; anything still there after 20 s is reported at once.
    CommandResult queue;
    for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);;) {
      queue = RunCommand({"/usr/bin/env", "squeue", "-h", "-o", "%i %j %T %R"}, {}, 10'000);
      ASSERT_EQ(queue.exit_code, 0) << "squeue failed: " << queue.err;
      if (queue.out.empty() || std::chrono::steady_clock::now() > deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_TRUE(queue.out.empty())
        << "the local Slurm (SLURM_CONF=" << SlurmConf()
        << ") already has jobs queued or running; these tests need it idle. scancel them, or "
           "restart it with deploy/slurm-local.sh stop && deploy/slurm-local.sh start (which "
           "clears its queue). squeue:\n"
        << queue.out.substr(0, 2000);
  }

  void TearDown() override {
    // Jobs of this test's attempts that still run (a failed test) are cancelled.
    if (cluster_ != nullptr) {
      for (const auto& job : JobIds()) RunCommand({"/usr/bin/env", "scancel", job}, {}, 10'000);
    }
    for (const auto& job : other_jobs_) RunCommand({"/usr/bin/env", "scancel", job}, {}, 10'000);
    ClusterTest::TearDown();
  }

  // `cpus`, `gpus`: what the agent offers; by default more CPUs than the node has, so that the
  // coordinator sends everything and Slurm queues what does not fit.
  void StartSlurmCluster(std::vector<std::string> extra_agent_flags = {}, double cpus = 32,
                         int gpus = 0) {
    ClusterOptions o;
    o.cpus = cpus;
    o.gpus = gpus;
    o.heartbeat = "500ms";
    o.agent_flags = {"--executor", "slurm"};
    // Status queries 1 s after a submit or a change, backing off to 5 s (the defaults, 15 s and
    // 2 min, would make every test wait minutes for what Slurm alone knows).
    bool poll_given = false;
    for (const auto& f : extra_agent_flags)
      poll_given = poll_given || StartsWith(f, "--slurm-poll");
    if (!poll_given)
      o.agent_flags.insert(o.agent_flags.end(), {"--slurm-poll", "1s", "--slurm-poll-max", "5s"});
    o.agent_flags.insert(o.agent_flags.end(), extra_agent_flags.begin(), extra_agent_flags.end());
    ASSERT_NO_FATAL_FAILURE(StartCluster(o));
  }

  std::vector<std::string> JobIds() {
    std::vector<std::string> ids;
    CommandResult ls =
        RunCommand({"/bin/sh", "-c",
                    StrCat("cat ", cluster().AgentStateDir(0), "/attempts/*/job_id 2>/dev/null")});
    for (const auto& l : StrSplit(ls.out, '\n')) {
      if (!l.empty()) ids.push_back(l);
    }
    return ids;
  }

  std::string JobIdOf(int64_t attempt_id) {
    std::string t =
        ReadText(StrCat(cluster().AgentStateDir(0), "/attempts/", attempt_id, "/job_id"));
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
  }

  // Submits a run of one stage `long` that sleeps, and waits until its Slurm job runs.
  // `extra`: more lines of the stage ("retry: {...}"); `top`: top-level lines of the workflow
  // ("priority: low\n").
  void StartLongStage(int64_t* run_id, std::string* job, std::vector<std::string> extra = {},
                      const std::string& top = "") {
    Result<int64_t> id = cluster().Submit(
        "name: long\n" + top + "stages:\n" +
        StageYaml("long", YamlList({BinPath("lh-testjob"), "--sleep", "300"}), {}, extra));
    ASSERT_TRUE(id.ok()) << id.status().message();
    Result<v1::Run> run = cluster().WaitForRun(
        *id,
        [](const v1::Run& r) {
          const v1::Attempt* a = Current(r, "long");
          return a != nullptr && a->state() == v1::ATTEMPT_RUNNING;
        },
        60'000);
    ASSERT_TRUE(run.ok()) << run.status().message();
    *run_id = *id;
    *job = JobIdOf(Current(*run, "long")->id());
    ASSERT_FALSE(job->empty());
  }

  std::vector<std::string> other_jobs_;  // jobs a test submitted itself; cancelled at its end

  static const v1::Attempt* Current(const v1::Run& run, const std::string& stage) {
    const v1::Stage* s = FindStage(run, stage);
    return s == nullptr || s->attempts_size() == 0 ? nullptr : &s->attempts(s->attempts_size() - 1);
  }
};

}  // namespace longhaul::testing
