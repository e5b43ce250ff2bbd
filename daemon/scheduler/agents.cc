// Agent sessions: hello and reconciliation, heartbeats, silence and loss, log and artifact
// requests. docs/architecture.md "Reconciliation after (re)connect" states the rules.
#include "core/duration.h"
#include "core/logging.h"
#include "core/path_prefix.h"
#include "core/strings.h"
#include "daemon/scheduler/resources.h"
#include "daemon/scheduler/scheduler.h"
#include "proto/agent_protocol.h"
#include "proto/state_names.h"

namespace longhaul::scheduler {

void Scheduler::NoteAgentDisk(AgentState* agent, bool full, int64_t free_bytes) {
  agent->state_free_bytes = free_bytes;
  if (full == agent->disk_full) return;
  agent->disk_full = full;
  // One line when an episode starts and one when it ends; the agent logs its own side.
  if (full) {
    GetLogger("scheduler")
        ->warn("agent {}: its state dir is full ({} bytes free)", agent->row.id, free_bytes);
  } else {
    GetLogger("scheduler")
        ->info("agent {}: its state dir has room again ({} bytes free)", agent->row.id, free_bytes);
  }
}

void Scheduler::OnAgentConnected(uint64_t session, const v1::Hello& hello) {
  auto log = GetLogger("scheduler");
  if (hello.agent_id().empty()) {
    log->warn("session {}: hello without an agent id; closing", session);
    link_->Close(session);
    return;
  }
  int64_t now = clock_->NowMs();
  AgentState* agent = agents_.FindOrAdd(hello.agent_id(), now);
  if (uint64_t replaced = agents_.Attach(agent, session)) link_->Close(replaced);
  agent->row.hostname = hello.hostname();
  agent->gpu_info.assign(hello.gpus().begin(), hello.gpus().end());
  agent->row.resources = hello.resources();
  agent->row.labels.clear();
  for (const auto& [k, v] : hello.labels()) agent->row.labels[k] = v;
  agent->row.version = hello.version();
  for (const auto& v : hello.engine_versions())
    batch_.engine_versions.emplace_back(agent->row.id, v);
  agent->row.executor = hello.executor().empty() ? "local" : hello.executor();
  agent->row.data_dir = hello.data_dir();
  // Absolute prefixes without a trailing slash ("/lustre/" is "/lustre"), as the agent's flag
  // check leaves them; a relative one could mean anything and is dropped.
  agent->row.shared_paths.clear();
  for (const std::string& p : hello.shared_paths()) {
    if (!p.empty() && p[0] == '/') agent->row.shared_paths.push_back(TrimTrailingSlashes(p));
  }
  NoteAgentDisk(agent, hello.disk_full(), hello.state_free_bytes());
  agent->row.state = v1::AGENT_CONNECTED;
  agent->row.connected_at_ms = now;
  agent->row.last_seen_ms = now;
  agent->reachable = true;
  // Free = total - what live attempts here hold.
  agent->free = agent->row.resources;
  agent->gpu_busy.assign(static_cast<size_t>(std::max(0, agent->row.resources.gpus())), false);
  for (int64_t id : agent->attempts) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a == nullptr || !a->holds_resources) continue;
    SubtractResources(&agent->free, a->held);
    for (int g : a->gpus) {
      if (g >= 0 && g < static_cast<int>(agent->gpu_busy.size())) agent->gpu_busy[g] = true;
    }
  }
  // GPUs out of service (quarantined, drained) are not offered (docs/gpus.md).
  for (int g = 0; g < static_cast<int>(agent->gpu_busy.size()); ++g) {
    if (GpuOut(*agent, g)) GpuLeftService(agent, g);
  }
  gpus_.ForgetChecks(agent->row.id);  // asked of its previous session: ask again
  Touch(agent);
  log->info("agent {} connected ({} cpus, {} GPUs, {} attempt(s) reported)", agent->row.id,
            agent->row.resources.cpus(), agent->row.resources.gpus(), hello.attempts_size());

  v1::CoordinatorMessage welcome;
  welcome.mutable_welcome()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  welcome.mutable_welcome()->set_coordinator_started_at_ms(started_at_ms_);
  welcome.mutable_welcome()->set_protocol_version(kAgentProtocolVersion);
  welcome.mutable_welcome()->set_cluster_id(store_->identity().cluster_id);
  welcome.mutable_welcome()->set_incarnation(store_->identity().incarnation);
  welcome.mutable_welcome()->set_new_cluster(options_.new_cluster);
  // New attempt ids start above every id this agent has used (docs/architecture.md,
  // "Identifiers"); an agent older than highest_attempt_id names at least those it owns.
  int64_t highest = hello.highest_attempt_id();
  for (const v1::OwnedAttempt& owned : hello.attempts()) {
    highest = std::max(highest, owned.attempt_id());
  }
  store_->RaiseAttemptIds(highest);
  batch_.outbox.emplace_back(session, welcome);

  Reconcile(agent, hello);
  ArmAgentTimers(agent);
  dispatch_needed_ = true;
}

void Scheduler::Reconcile(AgentState* agent, const v1::Hello& hello) {
  agent->lost_attempts.clear();  // the report below fences whatever still runs
  std::set<int64_t> reported;
  for (const v1::OwnedAttempt& owned : hello.attempts()) {
    reported.insert(owned.attempt_id());
    AttemptState* a = runs_.FindAttempt(owned.attempt_id());
    if (a != nullptr && a->row.agent_id == agent->row.id) {
      if (a->row.state == v1::ATTEMPT_STARTING || a->row.state == v1::ATTEMPT_UNKNOWN) {
        a->row.state = v1::ATTEMPT_RUNNING;
        if (owned.pid() > 0) a->row.pid = owned.pid();
        if (owned.started_at_ms() > 0 && !a->row.started_at_ms) {
          a->row.started_at_ms = owned.started_at_ms();
        }
        Touch(a);
        if (a->stage) MarkChanged(a->stage);
      }
      // An exit the agent holds arrives as AttemptExited right after, behind its last events.
      a->exit_reported = owned.exited();
      if (!a->kill_reason.empty() && owned.running()) StopAttempt(a, a->kill_reason);
      continue;
    }
    // Not a live attempt of this agent: its stage moved on (lost and replaced, cancelled,
    // or the run ended). Fence it: only the current attempt's result may count.
    if (owned.running()) {
      v1::CoordinatorMessage msg;
      msg.mutable_cancel()->set_attempt_id(owned.attempt_id());
      msg.mutable_cancel()->set_reason("stale");
      msg.mutable_cancel()->set_grace_ms(10'000);
      batch_.outbox.emplace_back(agent->session, msg);
      GetLogger("scheduler")
          ->warn("agent {}: stopping stale attempt {}", agent->row.id, owned.attempt_id());
    }
  }
  std::vector<int64_t> placed(agent->attempts.begin(), agent->attempts.end());
  for (int64_t id : placed) {
    if (reported.count(id)) continue;
    AttemptState* a = runs_.FindAttempt(id);
    if (a == nullptr) continue;
    if (a->row.state == v1::ATTEMPT_STARTING) {
      // The agent never got it (the coordinator stopped between commit and send).
      v1::CoordinatorMessage msg;
      if (msg.mutable_start()->ParseFromString(a->row.start_blob)) {
        batch_.outbox.emplace_back(agent->session, msg);
        continue;
      }
    }
    AttemptEnded(a, v1::ATTEMPT_LOST, "lost",
                 StrCat("lost: agent ", agent->row.id, " came back without it"));
  }
}

void Scheduler::OnAgentMessage(uint64_t session, const v1::AgentMessage& msg) {
  AgentState* agent = agents_.BySession(session);
  if (agent == nullptr) return;  // a replaced or closed session
  AgentHeard(agent);
  switch (msg.msg_case()) {
    case v1::AgentMessage::kHello:
      OnAgentConnected(session, msg.hello());
      break;
    case v1::AgentMessage::kHeartbeat:
      NoteAgentDisk(agent, msg.heartbeat().disk_full(), msg.heartbeat().state_free_bytes());
      break;
    case v1::AgentMessage::kStarted: {
      AttemptState* a = runs_.FindAttempt(msg.started().attempt_id());
      if (a != nullptr && a->row.agent_id == agent->row.id) HandleStarted(a, msg.started());
      break;
    }
    case v1::AgentMessage::kQueued: {
      // A queued attempt of a polled executor: its state and reason become the starting
      // attempt's reason ("PENDING (Resources)") until it runs.
      AttemptState* a = runs_.FindAttempt(msg.queued().attempt_id());
      if (a != nullptr && a->row.agent_id == agent->row.id &&
          a->row.state == v1::ATTEMPT_STARTING) {
        const auto& q = msg.queued();
        a->row.reason = q.reason().empty() ? q.state() : StrCat(q.state(), " (", q.reason(), ")");
        Touch(a);
        if (a->stage != nullptr && a->stage->current == a) {
          a->stage->row.reason = a->row.reason;  // `longhaul show` without --attempts too
          MarkChanged(a->stage);
        }
      }
      break;
    }
    case v1::AgentMessage::kEvents:
      HandleEvents(agent, msg.events());
      break;
    case v1::AgentMessage::kExited:
      HandleExited(agent, msg.exited());
      break;
    case v1::AgentMessage::kLog:
      HandleLogData(msg.log());
      break;
    case v1::AgentMessage::kArtifacts:
      HandleArtifactCheck(msg.artifacts());
      break;
    case v1::AgentMessage::kGpus:
      HandleGpuReport(agent, msg.gpus());
      break;
    case v1::AgentMessage::kGpuChecked:
      HandleGpuChecked(agent, msg.gpu_checked());
      break;
    case v1::AgentMessage::kRemoved:
      HandleAttemptsRemoved(msg.removed());
      break;
    case v1::AgentMessage::MSG_NOT_SET:
      break;
  }
}

void Scheduler::OnAgentDisconnected(uint64_t session) {
  AgentState* agent = agents_.Detach(session);
  if (agent == nullptr) return;
  GetLogger("scheduler")->warn("agent {} disconnected", agent->row.id);
  agent->row.state = v1::AGENT_DISCONNECTED;
  AgentSilent(agent);
  agent->row.state = v1::AGENT_DISCONNECTED;
  Status gone = absl::UnavailableError(StrCat("agent ", agent->row.id, " disconnected"));
  agents_.FailRequests(agent->row.id, gone);
}

void Scheduler::AgentHeard(AgentState* agent) {
  agent->row.last_seen_ms = clock_->NowMs();
  if (agent->reachable) return;
  agent->reachable = true;
  agent->row.state = v1::AGENT_CONNECTED;
  Touch(agent);
  GetLogger("scheduler")->info("agent {} is reachable again", agent->row.id);
  ArmAgentTimers(agent);
  // Attempts declared lost while it was away may still run there; their stages have moved on.
  for (int64_t id : agent->lost_attempts) {
    v1::CoordinatorMessage msg;
    msg.mutable_cancel()->set_attempt_id(id);
    msg.mutable_cancel()->set_reason("stale");
    msg.mutable_cancel()->set_grace_ms(10'000);
    if (agent->session != 0) batch_.outbox.emplace_back(agent->session, msg);
  }
  agent->lost_attempts.clear();
  for (int64_t id : agent->attempts) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a != nullptr && a->row.state == v1::ATTEMPT_UNKNOWN) {
      a->row.state = a->row.started_at_ms ? v1::ATTEMPT_RUNNING : v1::ATTEMPT_STARTING;
      Touch(a);
      if (a->stage) MarkChanged(a->stage);
    }
  }
  dispatch_needed_ = true;
}

void Scheduler::AgentSilent(AgentState* agent) {
  if (agent->reachable) {
    GetLogger("scheduler")
        ->warn("agent {} unreachable (silent for {})", agent->row.id,
               FormatDurationMs(clock_->NowMs() - agent->row.last_seen_ms));
  }
  agent->reachable = false;
  if (agent->row.state == v1::AGENT_CONNECTED) agent->row.state = v1::AGENT_UNREACHABLE;
  Touch(agent);
  dispatch_needed_ = true;  // the waiting stages' reasons may change (none connected)
  for (int64_t id : agent->attempts) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a != nullptr && !IsTerminal(a->row.state) && a->row.state != v1::ATTEMPT_UNKNOWN) {
      a->row.state = v1::ATTEMPT_UNKNOWN;
      Touch(a);
      if (a->stage) MarkChanged(a->stage);
    }
  }
}

void Scheduler::AgentLost(AgentState* agent) {
  int64_t silent = clock_->NowMs() - agent->row.last_seen_ms;
  GetLogger("scheduler")
      ->warn("agent {} lost (silent for {}); its {} attempt(s) are lost", agent->row.id,
             FormatDurationMs(silent), agent->attempts.size());
  agent->row.state = v1::AGENT_LOST;
  agent->reachable = false;
  Touch(agent);
  Notice("agent_lost", nullptr, nullptr, 0,
         StrCat("silent for ", FormatDurationMs(silent), "; ", agent->attempts.size(),
                " attempt(s) lost"),
         agent->row.id);
  std::vector<int64_t> ids(agent->attempts.begin(), agent->attempts.end());
  for (int64_t id : ids) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a == nullptr) continue;
    agent->lost_attempts.insert(id);
    AttemptEnded(a, v1::ATTEMPT_LOST, "lost",
                 StrCat("lost: agent ", agent->row.id, " silent for ", FormatDurationMs(silent)));
  }
}

void Scheduler::ArmAgentTimers(AgentState* agent) {
  agent->timer_gen++;
  timers_.Push({agent->row.last_seen_ms + options_.agent_timeout_ms, TimerKind::kAgentSilent, 0,
                agent->row.id, agent->timer_gen});
  timers_.Push({agent->row.last_seen_ms + options_.lost_after_ms, TimerKind::kAgentLost, 0,
                agent->row.id, agent->timer_gen});
}

void Scheduler::ReadLog(const store::AttemptRow& attempt, const v1::ReadLogRequest& request,
                        LogCallback done) {
  AgentState* agent = agents_.Find(attempt.agent_id);
  if (agent == nullptr || agent->session == 0 || !agent->reachable) {
    done(absl::UnavailableError(
        StrCat("agent ", attempt.agent_id, " is not connected; the log stays on its node")));
    return;
  }
  int64_t id = agents_.logs().Add(attempt.agent_id, std::move(done));
  v1::CoordinatorMessage msg;
  v1::ReadLog* r = msg.mutable_read_log();
  r->set_request_id(id);
  r->set_attempt_id(attempt.id);
  r->set_stream(request.stream().empty() ? "stdout" : request.stream());
  r->set_offset(request.offset());
  r->set_max_bytes(request.max_bytes() > 0 ? request.max_bytes() : 64 * 1024);
  batch_.outbox.emplace_back(agent->session, msg);
}

void Scheduler::HandleLogData(const v1::LogData& msg) {
  std::optional<LogCallback> done = agents_.logs().Take(msg.request_id());
  if (!done) return;
  if (!msg.error().empty()) {
    (*done)(absl::NotFoundError(msg.error()));
  } else {
    (*done)(msg);
  }
}

void Scheduler::CheckArtifacts(const std::string& agent_id, const std::vector<std::string>& paths,
                               std::function<void(Result<std::vector<std::string>>)> done) {
  AgentState* agent = agents_.Find(agent_id);
  if (agent == nullptr || agent->session == 0 || !agent->reachable) {
    done(absl::UnavailableError(StrCat("agent ", agent_id, " is not connected")));
    return;
  }
  int64_t id = agents_.checks().Add(agent_id, std::move(done));
  v1::CoordinatorMessage msg;
  msg.mutable_check_artifacts()->set_request_id(id);
  for (const auto& p : paths) msg.mutable_check_artifacts()->add_paths(p);
  batch_.outbox.emplace_back(agent->session, msg);
}

void Scheduler::HandleArtifactCheck(const v1::ArtifactCheck& msg) {
  auto done = agents_.checks().Take(msg.request_id());
  if (!done) return;
  if (!msg.error().empty()) {
    (*done)(absl::InternalError(msg.error()));
    return;
  }
  (*done)(std::vector<std::string>(msg.missing().begin(), msg.missing().end()));
}

void Scheduler::RemoveAttempts(const std::string& agent_id, v1::RemoveAttempts request,
                               std::function<void(Result<v1::AttemptsRemoved>)> done) {
  AgentState* agent = agents_.Find(agent_id);
  if (agent == nullptr || agent->session == 0 || !agent->reachable) {
    done(absl::UnavailableError(StrCat("agent ", agent_id, " is not connected")));
    return;
  }
  int64_t id = agents_.removals().Add(agent_id, std::move(done));
  request.set_request_id(id);
  v1::CoordinatorMessage msg;
  *msg.mutable_remove_attempts() = std::move(request);
  batch_.outbox.emplace_back(agent->session, msg);
}

void Scheduler::HandleAttemptsRemoved(const v1::AttemptsRemoved& msg) {
  auto done = agents_.removals().Take(msg.request_id());
  if (done) (*done)(msg);
}

}  // namespace longhaul::scheduler
