// The node agent: owns the attempts on this node and speaks for them to the coordinator
// (docs/architecture.md, "Agent <-> coordinator" and its table of directories; docs/agent.md).
//
// Its core is the same whatever runs the attempts: the session with the coordinator, attempt
// bookkeeping (dirs, re-adoption's start, exits), events, logs, metrics. What differs by
// executor is one ExecutorPart (agent_executors.h), chosen once from the runner: local
// processes that the agent watches itself (pidfd), or a polled executor (Slurm). The core calls
// it at the points where they differ and never asks which executor it is.
//
// Everything runs on one io_context thread: the link's callbacks must be posted there, and
// every method below must be called there. The agent never blocks that thread on the network;
// it does block on small local file reads and writes.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/lib/agent_metrics.h"
#include "agent/lib/attempt.h"
#include "agent/lib/attempt_environment.h"
#include "agent/lib/attempt_runner.h"
#include "agent/lib/cluster_membership.h"
#include "agent/lib/coordinator_link.h"
#include "agent/lib/disk_watch.h"
#include "agent/lib/inotify_watcher.h"
#include "agent/lib/process_launcher.h"
#include "core/clock.h"
#include "core/logging.h"
#include "core/status.h"
#include "longhaul/v1/agent.pb.h"

namespace longhaul::agent {

struct AgentConfig {
  std::string agent_id;
  std::string hostname;
  std::string version;
  std::string state_dir;
  std::string data_dir;
  std::string shim_path;
  std::string bin_dir;  // first on the stages' PATH
  // The GPU check (--gpu-check's words) a stage with `preflight: true` runs first, as
  // `CHECK... -- ARGV...` (docs/gpus.md, "Pre-flight before a stage"). Empty: such a stage
  // fails to start.
  std::vector<std::string> preflight_argv;
  v1::Resources resources;
  std::map<std::string, std::string> labels;
  // Stages get it as LONGHAUL_ADVERTISE_HOST when set (--advertise-host).
  std::string advertise_host;
  // Path prefixes shared with other agents (--shared-path), for the coordinator's placement.
  std::vector<std::string> shared_paths;
  std::vector<v1::GpuInfo> gpus;  // detected GPUs (index, name, memory) for Hello
  int64_t heartbeat_ms = 1000;
  int64_t event_window = 20'000;  // unacknowledged events in flight, over all attempts
  // Events one attempt may send per second (0: no limit). A stage that writes faster waits in
  // its file: it is slowed down, never cut, so one chatty stage cannot flood the coordinator.
  int64_t max_event_rate = 5'000;
  size_t batch_lines = 1000;
  size_t batch_bytes = 256 * 1024;
  int64_t default_grace_ms = 10'000;
  // How often STATE/attempts is measured for AgentMetrics::attempt_dir_bytes (off the loop,
  // on the disk worker); 0: never.
  int64_t disk_usage_interval_ms = 0;
  // Below this many free bytes the state dir counts as full (disk_watch.h).
  int64_t disk_min_free_bytes = 16 << 20;
  // A polled executor's status query (squeue): this long after a submit or a change of state,
  // then twice as long each time nothing changed, up to the max. The attempt files are read at
  // every heartbeat regardless, and an exit.json brings the next query forward.
  int64_t native_poll_ms = 15'000;
  int64_t native_poll_max_ms = 120'000;
  std::string coordinator;  // HOST:PORT, for messages
  // Where attempts' cgroups are made (cgroup.h); empty: none, leftovers found through /proc.
  std::string cgroup_parent;
};

class Agent {
 public:
  // Runs attempts as local processes through `launcher` (LocalRunner).
  Agent(boost::asio::io_context& io, AgentConfig config, ProcessLauncher* launcher,
        CoordinatorLink* link, Clock* clock);
  // Runs attempts through `runner` (attempt_runner.h), e.g. a SlurmRunner. A runner that does
  // not watch processes is polled once per heartbeat, from a worker thread.
  Agent(boost::asio::io_context& io, AgentConfig config, AttemptRunner* runner,
        CoordinatorLink* link, Clock* clock);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Re-adopts every attempt the state dir holds (docs/agent.md, "Re-adoption") and starts the
  // heartbeat. Errors only when the state dir itself is unusable.
  Status Start();
  // Stops timers and watches and saves the acknowledgement hints. Stages keep running.
  void Shutdown();

  // From the link, in order: a stream opened (send Hello and everything unacknowledged), a
  // message on it, the stream ended. Messages of a stream other than the open one are ignored.
  void OnStreamOpen(uint64_t gen);
  void OnStreamClosed(uint64_t gen);
  void OnMessage(uint64_t gen, const v1::CoordinatorMessage& msg);

  // What /metrics serves; its atomics may be read from any thread.
  // Called once, on the agent's thread, when this agent must stop serving the coordinator it
  // reached: a coordinator of another cluster (ClusterMembership). After it the agent ignores
  // every message of the coordinator; main() shuts it down and exits non-zero.
  void set_on_refused(std::function<void(const std::string& why)> fn) {
    on_refused_ = std::move(fn);
  }
  // Another cluster's coordinator, or one that refused this agent (CoordinatorSession).
  void Refuse(const std::string& why);

  // GPUs (docs/gpus.md): sends the sampler's report while connected (dropped otherwise: the
  // next one brings the sticky health again). On the agent's thread.
  void SendGpuReport(v1::GpuReport report);
  // How a CheckGpu is run: `check(index, done)` runs the pre-flight off the agent's thread and
  // calls `done(passed, detail)` on any thread. Unset: every CheckGpu fails ("no GPU check").
  using GpuCheckDone = std::function<void(bool passed, std::string detail)>;
  void set_gpu_check(std::function<void(int index, GpuCheckDone done)> check) {
    gpu_check_ = std::move(check);
  }

  const AgentMetrics& metrics() const { return metrics_; }
  // Whether the state dir is full, and its free bytes; readable from any thread.
  const DiskWatch& disk() const { return disk_; }

 private:
  Agent(boost::asio::io_context& io, AgentConfig config, std::unique_ptr<AttemptRunner> own_runner,
        AttemptRunner* runner, CoordinatorLink* link, Clock* clock);

  // agent.cc: the stream, Hello, heartbeats.
  void Send(v1::AgentMessage msg);
  v1::AgentMessage MakeHello() const;
  void ArmHeartbeat();
  void OnHeartbeat();
  // The gauges of metrics_ from the attempts; the periodic measurement of STATE/attempts.
  void PublishGauges();
  void ArmDiskUsage(int64_t delay_ms);
  // Logs the start or the end of a full-disk episode: one line each.
  void OnDiskChange(DiskWatch::Change change);
  // A write under the state dir failed with `s`. True when it was the disk being full
  // (ResourceExhausted), which is noted once per episode; the caller then need not log it.
  bool NoteWriteFailure(const Status& s);

  // What differs by executor (agent_executor.cc): the core calls these, on the agent's thread.
  class ExecutorPart {
   public:
    virtual ~ExecutorPart() = default;
    // Whether the shim gets an attempt cgroup of the agent's (--cgroup): not under Slurm,
    // whose jobs keep Slurm's cgroups.
    virtual bool agent_cgroups() const = 0;
    // Launch's last step, with the request made from `spec`: starts the attempt. `write_spec`
    // records spec.json once it is on its way; `fail` records a start that failed.
    virtual void Start(Attempt& a, const v1::StartAttempt& spec, RunRequest req,
                       const std::function<void()>& write_spec,
                       const std::function<void(const Status&)>& fail) = 0;
    // An attempt dir found at start-up, or named again by a StartAttempt (`even_if_done`).
    virtual void Adopt(int64_t id, const AttemptDir& dir, bool even_if_done) = 0;
    // At every heartbeat, once sent: the checks between notifications. `ids`: the attempts.
    virtual void OnHeartbeat(const std::vector<int64_t>& ids) = 0;
    // A cancel was recorded (cancel.json written): makes the attempt stop, or notes that it
    // must once it can be reached.
    virtual void Cancel(Attempt& a) = 0;
    // A notice before a stop was appended to the control file: tells the stage (SIGUSR1 to its
    // process group) where the executor can.
    virtual void Notice(Attempt& a) = 0;
    // pid.json was read for the first time (and AttemptStarted sent).
    virtual void OnStarted(Attempt& a) = 0;
    // exit.json appeared in the attempt's dir.
    virtual void OnExitFile(Attempt& a) = 0;
    // Before an end is recorded: kills what of the attempt outlived it; how many processes.
    virtual int Sweep(Attempt& a) = 0;
  };
  class WatchedProcesses;  // local processes, watched through pidfds
  class PolledExecutor;    // a polled executor's jobs (Slurm)
  // The part for `runner_` (agent_executor.cc): the one place that tells executors apart.
  std::unique_ptr<ExecutorPart> MakeExecutorPart();

  // agent_start.cc, agent_watch.cc, agent_cancel.cc: starting, watching, cancelling, ending.
  void HandleStart(const v1::StartAttempt& spec);
  void HandleCheckGpu(const v1::CheckGpu& req);
  // "run R stage S attempt K" when `dir` holds another attempt than `spec` (by its spec.json),
  // else "" (no dir, the same attempt, or nothing to compare).
  static std::string OtherAttempt(const AttemptDir& dir, const v1::StartAttempt& spec);
  void Launch(Attempt& a, const v1::StartAttempt& spec);
  std::vector<std::string> StageEnv(const v1::StartAttempt& spec, const std::string& out_dir,
                                    const AttemptDir& dir);
  void Adopt(int64_t id, const AttemptDir& dir, bool even_if_done = false);
  // Local processes (WatchedProcesses): the shim started, watched through its pidfd.
  void StartWatched(Attempt& a, const v1::StartAttempt& spec, const RunRequest& req,
                    const std::function<void()>& write_spec,
                    const std::function<void(const Status&)>& fail);
  void AdoptWatched(int64_t id, const AttemptDir& dir, bool even_if_done);
  void CancelWatched(Attempt& a);
  // After pid.json: a shim re-adopted while it was starting is watched now; a cancel that came
  // meanwhile is signalled.
  void OnWatchedStarted(Attempt& a);
  Attempt& AddAdopted(int64_t id, const AttemptDir& dir);
  static bool ValidHint(const AttemptDir& dir, const AckHint& hint);
  Status WatchPid(Attempt& a, pid_t pid, bool is_shim);
  void OnWatchedExit(Attempt& a);
  void OnShimGone(Attempt& a, std::optional<int> wait_status);
  void OnStageGone(Attempt& a);
  void CheckPidFile(Attempt& a);
  void CheckProgress(Attempt& a);
  void ReportStarted(Attempt& a);
  void RecordExit(Attempt& a, ExitInfo exit, bool write_file);
  // An ended attempt's cgroup, when it still exists (its shim died, or could not remove it):
  // everything in it is killed and it is removed; returns how many processes were killed.
  int SweepCgroup(Attempt& a);
  void HandleCancel(const v1::CancelAttempt& cancel);
  // agent_notice.cc: a notice before a stop (docs/agent.md, "Preemption notice"): a line in
  // the attempt's control file, then SIGUSR1 to its stage's group (local processes only).
  void HandlePreemptNotice(const v1::PreemptNotice& notice);
  void SignalNotice(Attempt& a);
  void SignalShim(Attempt& a);
  void SignalStageGroup(Attempt& a, int sig);
  void HandleAckExit(const v1::AckExit& ack);
  void WatchFiles(Attempt& a);
  void OnFileEvent(int64_t key, const std::string& name);
  void Forget(int64_t id);
  Attempt* Find(int64_t id);

  // agent_events.cc: reading, sending and acknowledging events; the exit report.
  void Pump(Attempt& a);
  void PumpAll();
  // How many more events `a` may send in its current one-second window (the rate limit);
  // when none, arms the timer that pumps again once the window has passed.
  size_t RateRoom(Attempt& a, int64_t now_ms);
  void HandleAckEvents(const v1::AckEvents& ack);
  void RewindAll();
  void SaveHint(Attempt& a);

  // Runs `work` on the worker thread, then `done` with its result on the event loop, unless
  // the agent has shut down meanwhile.
  template <typename T>
  void OnWorker(std::function<T()> work, std::function<void(T)> done) {
    OnPool<T>(worker_, std::move(work), std::move(done));
  }
  // The same on `pool` (disk_worker_: removals that may take minutes).
  template <typename T>
  void OnPool(boost::asio::thread_pool& pool, std::function<T()> work,
              std::function<void(T)> done) {
    boost::asio::post(pool, [this, alive = alive_, work = std::move(work),
                             done = std::move(done)]() mutable {
      T result = work();
      boost::asio::post(io_, [alive, done = std::move(done), result = std::move(result)]() mutable {
        if (*alive) done(std::move(result));
      });
    });
  }

  // agent_requests.cc: questions from the coordinator.
  void HandleReadLog(const v1::ReadLog& req);
  void HandleCheckArtifacts(const v1::CheckArtifacts& req);
  // Retention: removes (or measures) ended attempts' directories and output dirs on
  // disk_worker_, then answers AttemptsRemoved.
  void HandleRemoveAttempts(const v1::RemoveAttempts& req);

  boost::asio::io_context& io_;
  const AgentConfig config_;
  std::unique_ptr<AttemptRunner> own_runner_;  // the LocalRunner, when given a launcher
  AttemptRunner* const runner_;
  const std::unique_ptr<ExecutorPart> executor_;  // what differs by runner_'s executor
  CoordinatorLink* const link_;
  Clock* const clock_;
  const int64_t started_at_ms_;
  std::shared_ptr<spdlog::logger> log_;

  uint64_t gen_ = 0;  // the open stream, 0 while disconnected
  int64_t heartbeat_ms_;
  int64_t in_flight_ = 0;  // unacknowledged events sent, over all attempts
  std::map<int64_t, std::unique_ptr<Attempt>> attempts_;
  std::map<int64_t, int64_t> start_received_ms_;  // for the start latency log
  EnvironmentProbe env_probe_{config_.version};   // what each attempt runs on (Launch)
  InotifyWatcher inotify_;
  DiskWatch disk_;
  boost::asio::steady_timer heartbeat_timer_;
  boost::asio::steady_timer rate_timer_;  // wakes attempts held back by max_event_rate
  bool rate_timer_armed_ = false;
  boost::asio::steady_timer disk_timer_;  // the next measurement of STATE/attempts
  AgentMetrics metrics_;
  bool shut_down_ = false;
  ClusterMembership cluster_;
  bool refused_ = false;
  std::function<void(const std::string&)> on_refused_;
  int64_t highest_attempt_id_ = 0;  // of every attempt dir this agent has had (Hello)
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for the worker's callbacks
  boost::asio::thread_pool worker_{1};       // Slurm commands, one at a time, off the event loop
  // Status queries (squeue, sacct), one at a time, apart from worker_: a query does not wait
  // behind a long run of submissions, so pending reasons and ends show while they go on.
  boost::asio::thread_pool query_worker_{1};
  boost::asio::thread_pool disk_worker_{1};  // retention's removals, off the event loop
  std::function<void(int, GpuCheckDone)> gpu_check_;
};

}  // namespace longhaul::agent
