// A real longhaul cluster on loopback for integration tests and benchmarks: one longhauld and
// N longhaul-agents, each a separate process with its own state dir under one TempDir, plus a
// gRPC client for assertions and the real `longhaul` CLI.
//
// Every daemon logs to DIR/logs/NAME.log (appended across restarts); Logs() returns their
// tails. Restarts keep the state dir, the id and (for longhauld) the port, so agents
// reconnect by themselves. The destructor kills the daemons and every shim and stage the
// agents started (stages outlive agents by design, so a group kill would miss them).
//
// Nothing here sleeps to pass: every wait polls a condition up to a deadline and says what it
// saw when the deadline passes. Not thread-safe: one test thread drives a Cluster.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "longhaul/v1/client.grpc.pb.h"
#include "tests/testing/test_util.h"

namespace longhaul::testing {

struct ClusterOptions {
  int agents = 1;
  double cpus = 4;  // offered by each agent (--cpus)
  int gpus = 0;     // offered by each agent (--gpus)
  // Small timeouts keep fault tests fast; longhauld's --agent-timeout, --lost-after and
  // --heartbeat (also given to the agents).
  std::string agent_timeout = "2s";
  std::string lost_after = "4s";
  std::string heartbeat = "200ms";
  std::string log_level = "debug";
  std::vector<std::string> coordinator_flags;  // appended to longhauld's
  std::vector<std::string> agent_flags;        // appended to every agent's
  int64_t start_timeout_ms = 20'000;           // for each daemon to come up
  // Security (docs/security.md). The token the harness's own client and Cli() send, and the
  // CA with which they connect over TLS (empty: plaintext).
  std::string client_token;
  std::string client_tls_ca_file;
  // When set, agents dial the address longhauld writes to this file of its state dir (its
  // --agent-addr-file) instead of the client address.
  std::string agent_addr_file;
  std::vector<std::vector<std::string>> per_agent_flags;  // [i]: appended to agent i's
  std::vector<int> per_agent_gpus;  // [i]: agent i's --gpus instead of `gpus`
  // Where longhauld and longhaul-agent are started from (empty: BinDir()); an agent finds the
  // shim and the stage binaries beside itself. Cluster::set_bin_dir changes it for later
  // (re)starts: a binary upgrade.
  std::string bin_dir;
  // The command lines that start longhauld and each agent, in place of `BINARY --config
  // /dev/null` (e.g. a systemd unit's ExecStart with its config file: tests/deploy/units.h);
  // the harness's flags follow them and win over the config file.
  std::vector<std::string> coordinator_command;
  std::vector<std::string> agent_command;
};

class Cluster {
 public:
  explicit Cluster(ClusterOptions options = {});
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // Starts longhauld, then every agent, and waits until ListAgents shows each connected.
  Status Start();

  // --- longhauld ---
  // Sends `sig`; for SIGKILL, SIGTERM and SIGINT also waits (up to 20 s) for it to exit.
  void KillCoordinator(int sig = SIGKILL);
  // Starts longhauld again on the same state dir and port (stopping the old one with SIGTERM
  // if it still runs), then waits until every agent that runs and is not suspended has
  // reconnected.
  Status RestartCoordinator();
  // Stops longhauld (SIGTERM), replaces its database (and WAL files) with a copy of `backup`,
  // and starts it again as RestartCoordinator does: a restore as docs/operations.md gives it.
  Status RestoreCoordinatorFrom(const std::string& backup);
  void SuspendCoordinator();  // SIGSTOP
  void ResumeCoordinator();   // SIGCONT
  bool CoordinatorRunning();
  pid_t coordinator_pid() const;
  const std::string& address() const { return address_; }  // "127.0.0.1:PORT"
  // longhauld's HTTP listener ("127.0.0.1:PORT", from STATE/http.addr); it listens on port 0
  // unless coordinator_flags name --http.
  const std::string& http_address() const { return http_address_; }
  std::string db_path() const { return state_dir_ + "/longhaul.db"; }
  const std::string& coordinator_state_dir() const { return state_dir_; }

  // --- agents (index 0..agents-1, ids "n0", "n1", ...) ---
  int agent_count() const { return static_cast<int>(agents_.size()); }
  std::string AgentId(int i) const;
  std::string AgentStateDir(int i) const;
  void KillAgent(int i, int sig = SIGKILL);  // as KillCoordinator
  // Starts the agent again with the same state dir and id; waits until it is connected anew
  // unless `wait_connected` is false (the coordinator is down: the agent keeps dialing).
  Status RestartAgent(int i, bool wait_connected = true);
  void SuspendAgent(int i);  // SIGSTOP
  void ResumeAgent(int i);   // SIGCONT
  bool AgentRunning(int i);
  pid_t agent_pid(int i) const;
  // Waits up to `timeout_ms` for agent i to end by itself; its wait status (none: still runs).
  std::optional<int> WaitAgentExit(int i, int64_t timeout_ms);
  // Agent i's whole log.
  std::string AgentLog(int i) const;
  // Waits until ListAgents shows agent i connected with connected_at_ms > `after_ms`.
  Status WaitAgentConnected(int i, int64_t after_ms = 0, int64_t timeout_ms = 20'000);

  // --- client API (deadline 10 s per call) ---
  v1::LonghaulService::Stub& stub() { return *stub_; }
  Result<int64_t> Submit(const std::string& workflow_text,
                         const std::map<std::string, std::string>& params = {});
  Result<v1::Run> GetRun(int64_t id, bool attempts = true);
  Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& req = {});
  Result<std::vector<v1::AgentInfo>> ListAgents();
  Result<std::vector<v1::ListEventsResponse::Item>> ListEvents(int64_t run_id,
                                                               const std::string& stage,
                                                               int attempt = 0);
  // Polls GetRun (with attempts) until `pred` holds. On timeout: DeadlineExceeded with the
  // run as last seen (DescribeRun).
  Result<v1::Run> WaitForRun(int64_t id, const std::function<bool(const v1::Run&)>& pred,
                             int64_t timeout_ms = 30'000);
  // Waits until the run is succeeded, failed or cancelled.
  Result<v1::Run> WaitForRunEnd(int64_t id, int64_t timeout_ms = 30'000);

  // Runs the real `longhaul` binary with LONGHAUL_COORDINATOR set to this cluster.
  CommandResult Cli(const std::vector<std::string>& args, int64_t timeout_ms = 30'000);
  // Starts `longhaul ARGS...` in the background (for `watch`, `logs -f`).
  std::unique_ptr<Subprocess> StartCli(const std::vector<std::string>& args,
                                       const std::string& log_name);
  std::map<std::string, std::string> CliEnv() const;
  const ClusterOptions& options() const { return options_; }
  // Daemons (re)started from now on run the binaries in `dir` (ClusterOptions::bin_dir).
  void set_bin_dir(const std::string& dir) { options_.bin_dir = dir; }
  // longhauld's extra flags for later (re)starts.
  void set_coordinator_flags(std::vector<std::string> flags) {
    options_.coordinator_flags = std::move(flags);
  }

  // Writes a file under the cluster's temp dir; returns its path.
  std::string WriteFile(const std::string& name, const std::string& text);
  TempDir& dir() { return tmp_; }

  // `PRAGMA integrity_check` on the database, opened read-only: "ok" when it is sound.
  Result<std::string> IntegrityCheck() const;
  // Runs `sql` on the database, opened read-only; the rows' first columns, one per line.
  Result<std::string> Query(const std::string& sql) const;
  // The tail (`max_bytes` each) of every daemon's log, with a header naming the file.
  std::string Logs(size_t max_bytes = 24 * 1024) const;

 private:
  struct Agent {
    std::string id;
    std::string state_dir;
    std::string log;
    std::unique_ptr<Subprocess> process;
    bool suspended = false;
  };
  std::string Binary(const std::string& name) const;  // in options_.bin_dir or BinDir()
  Status StartCoordinator(const std::string& listen);
  Status StartAgent(int i);
  void Connect();
  void KillStages();

  ClusterOptions options_;
  TempDir tmp_;
  std::string state_dir_;
  std::string coordinator_log_;
  std::string address_;
  std::string http_address_;
  std::unique_ptr<Subprocess> coordinator_;
  std::vector<Agent> agents_;
  std::unique_ptr<v1::LonghaulService::Stub> stub_;
  std::string agent_address_;  // where agents dial; address_ unless options_.agent_addr_file
};

// The stage named `name`, or nullptr.
const v1::Stage* FindStage(const v1::Run& run, const std::string& name);
// One line per stage: status, attempts with state and reason. For failure messages.
std::string DescribeRun(const v1::Run& run);

// A fixture for tests on a Cluster: after each test it checks the database's integrity and,
// when the test failed, prints every daemon's log.
class ClusterTest : public ::testing::Test {
 protected:
  // Starts a cluster; fails the test (fatally, when used with ASSERT_NO_FATAL_FAILURE) if it
  // does not come up.
  void StartCluster(ClusterOptions options = {});
  void TearDown() override;
  Cluster& cluster() { return *cluster_; }
  // Runs `longhaul ARGS` (a submit or a pivot), waits for the run's end and expects `expected`;
  // the run's id, 0 when the command failed.
  int64_t CliRunToEnd(const std::vector<std::string>& args,
                      v1::RunStatus expected = v1::RUN_SUCCEEDED);

  std::unique_ptr<Cluster> cluster_;
};

}  // namespace longhaul::testing
