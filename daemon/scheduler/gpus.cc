// GPUs (docs/gpus.md): the agents' reports, quarantine and return to service, drains by hand,
// and each attempt's telemetry. GpuFleet and GpuTelemetry own the state; this file is where
// the scheduler acts on them (stopping the attempt on a faulty GPU, not offering a GPU that is
// out, asking for pre-flights).
#include <algorithm>

#include "core/duration.h"
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

AttemptState* Scheduler::AttemptOnGpu(const AgentState& agent, int index) {
  for (int64_t id : agent.attempts) {
    AttemptState* a = runs_.FindAttempt(id);
    if (a == nullptr || !a->holds_resources) continue;
    for (int g : a->gpus) {
      if (g == index) return a;
    }
  }
  return nullptr;
}

bool Scheduler::GpuOut(const AgentState& agent, int index) const {
  return !gpus_.Offered(agent.row.id, index);
}

void Scheduler::GpuLeftService(AgentState* agent, int index) {
  if (index >= 0 && index < static_cast<int>(agent->gpu_busy.size()) && !agent->gpu_busy[index]) {
    agent->free.set_gpus(agent->free.gpus() - 1);
  }
}

void Scheduler::GpuReturned(AgentState* agent, int index) {
  if (index >= 0 && index < static_cast<int>(agent->gpu_busy.size()) && !agent->gpu_busy[index]) {
    agent->free.set_gpus(agent->free.gpus() + 1);
  }
  dispatch_needed_ = true;
}

void Scheduler::HandleGpuReport(AgentState* agent, const v1::GpuReport& msg) {
  auto log = GetLogger("scheduler");
  int64_t now = clock_->NowMs();
  std::vector<v1::GpuReading> readings(msg.gpus().begin(), msg.gpus().end());
  // Telemetry first: the reading that carries a fault belongs to the attempt it ends.
  std::vector<AttemptState*> fed;
  for (const v1::GpuReading& r : readings) {
    AttemptState* a = AttemptOnGpu(*agent, r.index());
    if (a == nullptr) continue;
    gpu_telemetry_.Add(a->row.id, r);
    if (std::find(fed.begin(), fed.end(), a) == fed.end()) fed.push_back(a);
  }
  for (AttemptState* a : fed) WatchGpuUse(a, now);
  GpuFleet::ReportOutcome out = gpus_.OnReport(agent->row.id, readings, now);
  for (const GpuFleet::AppXid& x : out.app_xids) {
    AttemptState* a = AttemptOnGpu(*agent, x.index);
    log->warn("agent {} GPU {}: XID {} ({}), an application error{}", agent->row.id, x.index, x.xid,
              x.description,
              a == nullptr
                  ? "; no attempt holds the GPU"
                  : StrCat(", charged to run ", a->row.run_id, " stage ",
                           a->stage ? a->stage->row.name : "?", " attempt ", a->row.number));
  }
  for (const GpuFleet::Fault& f : out.quarantined) ActOnGpuFault(agent, f);
}

void Scheduler::ActOnGpuFault(AgentState* agent, const GpuFleet::Fault& f) {
  auto log = GetLogger("scheduler");
  GpuLeftService(agent, f.index);
  std::string gpu = StrCat("GPU ", f.index, f.uuid.empty() ? "" : StrCat(" (", f.uuid, ")"));
  AttemptState* a = AttemptOnGpu(*agent, f.index);
  log->warn("agent {} {}: quarantined: {}{}", agent->row.id, gpu, f.reason,
            a == nullptr ? "" : StrCat("; stopping attempt ", a->row.id));
  std::string reason = StrCat(gpu, " of agent ", agent->row.id, ": ", f.reason);
  int limit = gpus_.options().node_fault_limit;
  int faulty = gpus_.QuarantinedOn(agent->row.id);
  if (a != nullptr && a->stage != nullptr && limit > 0 && faulty >= limit) {
    // Past the threshold the node is suspect (its PCIe switch, power, NVLink fabric): the
    // retry goes elsewhere when it can.
    log->warn(
        "agent {}: {} GPUs quarantined (--gpu-node-fault-limit {}): run {} stage {} avoids "
        "it from now on",
        agent->row.id, faulty, limit, a->row.run_id, a->stage->row.name);
    AvoidFailedNode(a->stage, *agent, "");
  }
  if (a != nullptr && a->kill_reason.empty()) {
    StopAttempt(a, "gpu_fault", reason);
    Notice("gpu_fault", a->stage ? a->stage->run : nullptr, a->stage, a->row.number, reason,
           agent->row.id);
  } else {
    Notice("gpu_fault", nullptr, nullptr, 0, reason, agent->row.id);
  }
}

void Scheduler::OnStageGpuFault(AttemptState* a, const StageEvent& ev) {
  auto log = GetLogger("scheduler");
  AgentState* agent = agents_.Find(a->row.agent_id);
  if (agent == nullptr) return;
  // The GPU the stage names, among the ones it holds only: by UUID when the agent reported
  // UUIDs, else by its ordinal in CUDA_VISIBLE_DEVICES (the attempt's GPUs, in order).
  int index = -1;
  if (!ev.uuid.empty()) {
    for (int g : a->gpus) {
      for (const v1::GpuInfo& known : agent->gpu_info) {
        if (known.index() == g && known.uuid() == ev.uuid) index = g;
      }
    }
  }
  if (index < 0 && ev.gpu && *ev.gpu >= 0 && *ev.gpu < static_cast<int64_t>(a->gpus.size())) {
    index = a->gpus[static_cast<size_t>(*ev.gpu)];
  }
  std::string where = StrCat("run ", a->row.run_id, " stage ", a->stage ? a->stage->row.name : "?",
                             " attempt ", a->row.number);
  if (index < 0) {
    log->warn("{}: gpu_fault for a GPU it does not hold (gpu {}, uuid '{}'), ignored: {}", where,
              ev.gpu ? StrCat(*ev.gpu) : "-", ev.uuid, ev.text);
    return;
  }
  std::string uuid = ev.uuid;
  for (const v1::GpuInfo& known : agent->gpu_info) {
    if (known.index() == index && !known.uuid().empty()) uuid = known.uuid();
  }
  std::string reason = StrCat(ev.text, " (reported by ", where, ")");
  if (!gpus_.Quarantine(agent->row.id, index, uuid, reason, clock_->NowMs())) {
    // Already out (drained while it ran): the attempt still failed on it.
    if (a->kill_reason.empty()) {
      StopAttempt(a, "gpu_fault",
                  StrCat("GPU ", index, " of agent ", agent->row.id, ": ", ev.text));
    }
    return;
  }
  ActOnGpuFault(agent, {index, uuid, reason, 0});
}

// The stage's gpu_idle window: as set, else 15 minutes for a task and off for a service.
static int64_t GpuIdleWindowMs(const StageState& s) {
  if (s.spec->gpu_idle_ms) return *s.spec->gpu_idle_ms;
  return s.spec->kind == workflow::StageKind::kService ? 0 : 15 * 60 * 1000;
}

void Scheduler::WatchGpuUse(AttemptState* a, int64_t now) {
  StageState* s = a->stage;
  if (s == nullptr || s->current != a || !a->kill_reason.empty()) return;
  auto log = GetLogger("scheduler");
  std::string where = StrCat("run ", s->run->row.id, " stage ", s->row.name, " attempt ",
                             a->row.number, " on ", a->row.agent_id);
  if (auto m = gpu_telemetry_.TakeMemoryWarning(a->row.id)) {
    std::string text =
        StrCat("GPU ", m->index, " memory at ", m->used * 100 / m->total, "% (", m->used >> 20,
               " of ", m->total >> 20, " MiB): near the limit, a CUDA OOM may follow");
    log->warn("{}: {}", where, text);
    // Where a user looks (watch, show, the UI): the stage's last message, until the stage
    // says something else.
    s->row.last_message = std::move(text);
    s->row.last_message_level = "warn";
    MarkChanged(s);
  }
  int64_t window = GpuIdleWindowMs(*s);
  // A service's GPUs idle between requests are as they should be; idle while a consumer runs
  // (and so sends it requests) for --gpu-service-hang is a server that stopped serving.
  int64_t counted_from = 0;
  std::string consumer;
  if (window == 0 && s->spec->kind == workflow::StageKind::kService && !s->spec->gpu_idle_ms &&
      options_.gpu_service_hang_ms > 0) {
    for (int d : s->dependents) {
      const StageState* dep = s->run->stages[d].get();
      const AttemptState* c = dep->current;
      if (c == nullptr || c->row.state != v1::ATTEMPT_RUNNING) continue;
      int64_t since = c->row.started_at_ms.value_or(now);
      if (consumer.empty() || since < counted_from) {
        counted_from = since;
        consumer = dep->row.name;
      }
    }
    if (!consumer.empty()) window = options_.gpu_service_hang_ms;
  }
  if (a->row.state != v1::ATTEMPT_RUNNING ||
      !gpu_telemetry_.TakeIdleNotice(a->row.id, now, window, counted_from)) {
    return;
  }
  std::string reason =
      StrCat("gpu idle for ", FormatDurationMs(window),
             consumer.empty() ? "" : StrCat(" while its consumer ", consumer, " runs: hung"));
  log->warn("{}: its {} GPU(s) under 5% utilisation for {}{}{}", where, a->gpus.size(),
            FormatDurationMs(window), consumer.empty() ? "" : StrCat(" while ", consumer, " runs"),
            s->spec->gpu_idle_fail ? "; failing it (on_gpu_idle: fail)" : "");
  Notice("stage_gpu_idle", s->run, s, a->row.number, reason, a->row.agent_id);
  if (s->spec->gpu_idle_fail) StopAttempt(a, "gpu_idle", reason);
}

void Scheduler::HandleGpuChecked(AgentState* agent, const v1::GpuChecked& msg) {
  int64_t now = clock_->NowMs();
  const store::GpuRow* row = gpus_.Find(agent->row.id, msg.index());
  int passes_before = row == nullptr ? 0 : row->passes;
  bool back = gpus_.OnChecked(agent->row.id, msg.index(), msg.passed(), msg.detail(), now);
  auto log = GetLogger("scheduler");
  log->info("agent {} GPU {}: pre-flight {}{}: {}", agent->row.id, msg.index(),
            msg.passed() ? "passed" : "failed",
            msg.passed() ? StrCat(" (", passes_before + 1, " in a row)") : "", msg.detail());
  if (!back) return;
  GpuReturned(agent, msg.index());
  log->info("agent {} GPU {}: back in service after its pre-flights", agent->row.id, msg.index());
  v1::AuditEntry e;
  e.set_ts_ms(now);
  e.set_principal("longhauld");
  e.set_role("admin");
  e.set_action("ReturnGpu");
  e.set_target(StrCat("agent ", agent->row.id, " GPU ", msg.index()));
  e.set_detail(StrCat("pre-flight passed: ", msg.detail().substr(0, 500)));
  e.set_result("OK");
  gpu_audit_.push_back(std::move(e));
}

void Scheduler::AskGpuChecks(int64_t now) {
  for (auto& [id, agent] : agents_) {
    if (agent->session == 0) continue;
    for (int index : gpus_.ChecksDue(id, now)) {
      v1::CoordinatorMessage m;
      m.mutable_check_gpu()->set_request_id(next_request_id_++);
      m.mutable_check_gpu()->set_index(index);
      SendToAgent(id, m);
      GetLogger("scheduler")->info("agent {} GPU {}: asking for a pre-flight", id, index);
    }
  }
}

Result<std::vector<v1::GpuInfo>> Scheduler::SetGpuService(const std::string& agent_id, int index,
                                                          bool drain, const std::string& reason,
                                                          const std::string& by) {
  AgentState* agent = agents_.Find(agent_id);
  if (agent == nullptr) return absl::NotFoundError(StrCat("no agent '", agent_id, "'"));
  int count = agent->row.resources.gpus();
  if (count == 0) return absl::FailedPreconditionError(StrCat("agent ", agent_id, " has no GPUs"));
  if (index >= count) {
    return absl::InvalidArgumentError(
        StrCat("agent ", agent_id, " has GPUs 0 to ", count - 1, "; there is no GPU ", index));
  }
  int64_t now = clock_->NowMs();
  std::vector<v1::GpuInfo> out;
  for (int g = index < 0 ? 0 : index; g < (index < 0 ? count : index + 1); ++g) {
    bool was_out = GpuOut(*agent, g);
    std::string uuid;
    for (const v1::GpuInfo& known : agent->gpu_info) {
      if (known.index() == g) uuid = known.uuid();
    }
    if (drain) {
      gpus_.Drain(agent_id, g, uuid, StrCat("drained by ", by, reason.empty() ? "" : ": ", reason),
                  by, now);
      if (!was_out) GpuLeftService(agent, g);
    } else {
      gpus_.Undrain(agent_id, g, by, now);
      if (was_out) GpuReturned(agent, g);
    }
    GetLogger("scheduler")
        ->info("agent {} GPU {}: {} by {}{}", agent_id, g, drain ? "drained" : "back in service",
               by, reason.empty() ? "" : StrCat(": ", reason));
    v1::GpuInfo& info = out.emplace_back();
    info.set_index(g);
    info.set_uuid(uuid);
    gpus_.Fill(agent_id, &info);
  }
  return out;
}

Status Scheduler::FlushGpus() {
  for (const store::GpuRow& row : gpus_.TakeDirty()) RETURN_IF_ERROR(store_->UpsertGpu(row));
  for (store::GpuSeriesRow& row : gpu_telemetry_.TakeDue(clock_->NowMs())) {
    gpu_rows_.push_back(std::move(row));
  }
  for (const store::GpuSeriesRow& row : gpu_rows_) RETURN_IF_ERROR(store_->UpsertGpuSeries(row));
  gpu_rows_.clear();
  for (const v1::AuditEntry& e : gpu_audit_) RETURN_IF_ERROR(store_->InsertAudit(e));
  gpu_audit_.clear();
  return OkStatus();
}

}  // namespace longhaul::scheduler
