#include "agent/lib/agent.h"

#include <dirent.h>

#include <chrono>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "agent/lib/local_runner.h"
#include "agent/lib/retention.h"
#include "agent/lib/utf8_repair.h"
#include "core/fs.h"
#include "core/logging.h"
#include "core/strings.h"
#include "proto/agent_protocol.h"

namespace longhaul::agent {

Agent::Agent(boost::asio::io_context& io, AgentConfig config, ProcessLauncher* launcher,
             CoordinatorLink* link, Clock* clock)
    : Agent(io, std::move(config), std::make_unique<LocalRunner>(launcher), nullptr, link, clock) {}

Agent::Agent(boost::asio::io_context& io, AgentConfig config, AttemptRunner* runner,
             CoordinatorLink* link, Clock* clock)
    : Agent(io, std::move(config), nullptr, runner, link, clock) {}

Agent::Agent(boost::asio::io_context& io, AgentConfig config,
             std::unique_ptr<AttemptRunner> own_runner, AttemptRunner* runner,
             CoordinatorLink* link, Clock* clock)
    : io_(io),
      config_(std::move(config)),
      own_runner_(std::move(own_runner)),
      runner_(own_runner_ ? own_runner_.get() : runner),
      executor_(MakeExecutorPart()),
      link_(link),
      clock_(clock),
      started_at_ms_(clock->NowMs()),
      log_(GetLogger("agent")),
      heartbeat_ms_(config_.heartbeat_ms),
      inotify_(io, [this](int64_t key, const std::string& name) { OnFileEvent(key, name); }),
      disk_(config_.state_dir, config_.disk_min_free_bytes),
      heartbeat_timer_(io),
      rate_timer_(io),
      disk_timer_(io),
      cluster_(config_.state_dir) {}

Agent::~Agent() { Shutdown(); }

Status Agent::Start() {
  std::string attempts_dir = config_.state_dir + "/attempts";
  RETURN_IF_ERROR(MakeDirs(attempts_dir));
  RETURN_IF_ERROR(MakeDirs(config_.data_dir));
  RETURN_IF_ERROR(inotify_.Init());
  RETURN_IF_ERROR(cluster_.Load());
  DIR* d = ::opendir(attempts_dir.c_str());
  if (d == nullptr) return ErrnoStatus("opendir", attempts_dir, errno);
  std::vector<int64_t> ids;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long long id = std::strtoll(e->d_name, &end, 10);
    if (e->d_name[0] != '\0' && *end == '\0' && id > 0) ids.push_back(id);
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  if (!ids.empty()) highest_attempt_id_ = ids.back();
  OnDiskChange(disk_.Check());
  env_probe_.set_clock([clock = clock_] { return clock->NowMs(); });
  env_probe_.set_known_file(config_.state_dir + "/engine_versions.json");
  if (Status s = env_probe_.AskKnownEngines(); !s.ok()) log_->warn("{}", ToStd(s.message()));
  for (int64_t id : ids) Adopt(id, AttemptDir(config_.state_dir, id));
  PublishGauges();
  ArmHeartbeat();
  if (config_.disk_usage_interval_ms > 0) ArmDiskUsage(0);
  return OkStatus();
}

void Agent::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  *alive_ = false;
  worker_.join();  // a Slurm command in flight ends by its deadline
  query_worker_.join();
  disk_worker_.join();  // a removal in flight finishes; its answer is dropped
  heartbeat_timer_.cancel();
  rate_timer_.cancel();
  disk_timer_.cancel();
  metrics_.connected.store(0);
  for (auto& [id, a] : attempts_) {
    SaveHint(*a);
    a->kill_timer.cancel();
    a->watched.reset();
  }
}

void Agent::Send(v1::AgentMessage msg) {
  if (gen_ == 0) return;
  // Event lines are repaired, and counted, as they are read (Pump); any other text from
  // outside is repaired here, so that no message can jam the stream.
  if (!msg.has_events()) {
    if (int n = RepairUtf8(&msg); n > 0) {
      log_->warn("{} text field(s) of a message to the coordinator were not valid UTF-8; bad "
                 "bytes replaced with U+FFFD",
                 n);
    }
  }
  link_->Send(gen_, std::move(msg));
}

void Agent::OnStreamOpen(uint64_t gen) {
  gen_ = gen;
  metrics_.connected.store(1);
  RewindAll();
  Send(MakeHello());
  PumpAll();
}

void Agent::OnStreamClosed(uint64_t gen) {
  if (gen != gen_) return;
  gen_ = 0;
  metrics_.connected.store(0);
}

v1::AgentMessage Agent::MakeHello() const {
  v1::AgentMessage m;
  v1::Hello* h = m.mutable_hello();
  h->set_agent_id(config_.agent_id);
  h->set_hostname(config_.hostname);
  *h->mutable_resources() = config_.resources;
  for (const auto& [k, v] : config_.labels) (*h->mutable_labels())[k] = v;
  for (const auto& p : config_.shared_paths) h->add_shared_paths(p);
  h->set_version(config_.version);
  h->set_protocol_version(kAgentProtocolVersion);
  h->set_data_dir(config_.data_dir);
  h->set_executor(runner_->executor());
  h->set_agent_started_at_ms(started_at_ms_);
  for (const auto& g : config_.gpus) *h->add_gpus() = g;
  h->set_disk_full(disk_.full());
  h->set_state_free_bytes(std::max<int64_t>(0, disk_.free_bytes()));
  h->set_cluster_id(cluster_.cluster_id());
  h->set_highest_attempt_id(highest_attempt_id_);
  for (const auto& v : env_probe_.KnownVersions()) *h->add_engine_versions() = v;
  for (const auto& [id, a] : attempts_) {
    v1::OwnedAttempt* o = h->add_attempts();
    o->set_attempt_id(id);
    o->set_running(a->running());
    if (a->pid) {
      o->set_pid(a->pid->stage_pid);
      o->set_started_at_ms(a->pid->started_at_ms);
    }
    if (a->exit) {
      o->set_exited(true);
      o->set_exit_code(a->exit->exit_code);
      o->set_signal(a->exit->signal);
      o->set_reason(a->exit->reason);
      o->set_ended_at_ms(a->exit->ended_at_ms);
    }
    o->set_acked_seq(a->acked_seq);
  }
  return m;
}

void Agent::ArmHeartbeat() {
  if (shut_down_) return;
  heartbeat_timer_.expires_after(std::chrono::milliseconds(heartbeat_ms_));
  heartbeat_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    OnHeartbeat();
    ArmHeartbeat();
  });
}

void Agent::OnHeartbeat() {
  PublishGauges();
  int running = 0;
  std::vector<int64_t> ids;
  for (const auto& [id, a] : attempts_) {
    if (a->running()) ++running;
    ids.push_back(id);
  }
  OnDiskChange(disk_.Check());
  if (gen_ != 0) {
    v1::AgentMessage m;
    m.mutable_heartbeat()->set_ts_ms(clock_->NowMs());
    m.mutable_heartbeat()->set_running(running);
    m.mutable_heartbeat()->set_disk_full(disk_.full());
    m.mutable_heartbeat()->set_state_free_bytes(std::max<int64_t>(0, disk_.free_bytes()));
    Send(std::move(m));
  }
  executor_->OnHeartbeat(ids);
}

void Agent::PublishGauges() {
  int64_t running = 0;
  int64_t oldest = 0;
  for (const auto& [id, a] : attempts_) {
    if (a->running()) ++running;
    if (!a->in_flight.empty() && (oldest == 0 || a->in_flight.front().read_ms < oldest)) {
      oldest = a->in_flight.front().read_ms;
    }
  }
  metrics_.attempts_running.store(running, std::memory_order_relaxed);
  metrics_.events_in_flight.store(in_flight_, std::memory_order_relaxed);
  metrics_.oldest_unacked_read_ms.store(oldest, std::memory_order_relaxed);
}

void Agent::ArmDiskUsage(int64_t delay_ms) {
  if (shut_down_) return;
  disk_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  disk_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    // On disk_worker_, after any removal queued before it; the next one is armed only when
    // this one is done, so a slow walk never piles up.
    using Measured = std::pair<int64_t, double>;  // bytes, seconds the walk took
    OnPool<Measured>(
        disk_worker_,
        [dir = config_.state_dir + "/attempts"] {
          auto start = std::chrono::steady_clock::now();
          int64_t bytes = DiskUsage(dir);
          std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
          return Measured{bytes, took.count()};
        },
        [this](Measured m) {
          log_->debug("STATE/attempts: {} bytes, measured in {:.3f} s", m.first, m.second);
          metrics_.attempt_dir_bytes.store(m.first, std::memory_order_relaxed);
          ArmDiskUsage(config_.disk_usage_interval_ms);
        });
  });
}

void Agent::OnDiskChange(DiskWatch::Change change) {
  metrics_.disk_full.store(disk_.full() ? 1 : 0, std::memory_order_relaxed);
  if (change == DiskWatch::Change::kBecameFull) {
    log_->warn("disk full: state dir {} has {} bytes free (--disk-min-free {}); attempt files "
               "may not be written until space returns",
               disk_.dir(), std::max<int64_t>(0, disk_.free_bytes()), disk_.min_free_bytes());
  } else if (change == DiskWatch::Change::kCleared) {
    log_->info("disk space back: state dir {} has {} bytes free", disk_.dir(),
               disk_.free_bytes());
  }
}

bool Agent::NoteWriteFailure(const Status& s) {
  if (!absl::IsResourceExhausted(s)) return false;
  OnDiskChange(disk_.NoteWriteError(ENOSPC));
  return true;
}

void Agent::OnMessage(uint64_t gen, const v1::CoordinatorMessage& msg) {
  if (gen != gen_ || shut_down_ || refused_) return;
  switch (msg.msg_case()) {
    case v1::CoordinatorMessage::kWelcome:
      if (Status s = cluster_.Check(msg.welcome(), config_.coordinator); !s.ok()) {
        Refuse(ToStd(s.message()));
        return;
      }
      if (msg.welcome().heartbeat_interval_ms() > 0 &&
          msg.welcome().heartbeat_interval_ms() != heartbeat_ms_) {
        heartbeat_ms_ = msg.welcome().heartbeat_interval_ms();
        log_->info("heartbeat every {} ms, as the coordinator asks", heartbeat_ms_);
      }
      break;
    case v1::CoordinatorMessage::kStart:
      HandleStart(msg.start());
      break;
    case v1::CoordinatorMessage::kCancel:
      HandleCancel(msg.cancel());
      break;
    case v1::CoordinatorMessage::kAckEvents:
      HandleAckEvents(msg.ack_events());
      break;
    case v1::CoordinatorMessage::kAckExit:
      HandleAckExit(msg.ack_exit());
      break;
    case v1::CoordinatorMessage::kReadLog:
      HandleReadLog(msg.read_log());
      break;
    case v1::CoordinatorMessage::kCheckArtifacts:
      HandleCheckArtifacts(msg.check_artifacts());
      break;
    case v1::CoordinatorMessage::kRemoveAttempts:
      HandleRemoveAttempts(msg.remove_attempts());
      break;
    case v1::CoordinatorMessage::kCheckGpu:
      HandleCheckGpu(msg.check_gpu());
      break;
    case v1::CoordinatorMessage::kPreemptNotice:
      HandlePreemptNotice(msg.preempt_notice());
      break;
    case v1::CoordinatorMessage::MSG_NOT_SET:
      log_->warn("empty message from the coordinator");
      break;
  }
}

void Agent::SendGpuReport(v1::GpuReport report) {
  if (gen_ == 0 || shut_down_ || refused_) return;
  v1::AgentMessage m;
  *m.mutable_gpus() = std::move(report);
  Send(std::move(m));
}

void Agent::HandleCheckGpu(const v1::CheckGpu& req) {
  auto answer = [this, req, gen = gen_](bool passed, std::string detail) {
    // Back on the agent's thread; a stream that closed meanwhile drops it (the coordinator
    // asks again after its next cool-down).
    boost::asio::post(io_, [this, req, gen, passed, detail = std::move(detail)] {
      if (gen != gen_ || shut_down_) return;
      log_->info("pre-flight of GPU {}: {}: {}", req.index(), passed ? "passed" : "failed",
                 detail);
      v1::AgentMessage m;
      v1::GpuChecked* c = m.mutable_gpu_checked();
      c->set_request_id(req.request_id());
      c->set_index(req.index());
      c->set_passed(passed);
      c->set_detail(detail);
      Send(std::move(m));
    });
  };
  if (!gpu_check_) {
    answer(false, "this agent runs no GPU check (no GPU sampler: --gpu-sample 0 or no GPUs)");
    return;
  }
  log_->info("pre-flight of GPU {} asked by the coordinator", req.index());
  gpu_check_(req.index(), std::move(answer));
}

void Agent::Refuse(const std::string& why) {
  if (refused_) return;
  refused_ = true;
  log_->error("{}", why);
  if (on_refused_) on_refused_(why);
}

Attempt* Agent::Find(int64_t id) {
  auto it = attempts_.find(id);
  return it == attempts_.end() ? nullptr : it->second.get();
}

}  // namespace longhaul::agent
