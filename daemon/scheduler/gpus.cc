// GPUs (docs/gpus.md): the agents' reports, quarantine and return to service, drains by hand,
// and each attempt's telemetry. GpuFleet and GpuTelemetry own the state; this file is where
// the scheduler acts on them (stopping the attempt on a faulty GPU, not offering a GPU that is
// out, asking for pre-flights).
#include "core/logging.h"
#include "core/strings.h"
#include "daemon/scheduler/scheduler.h"

namespace longhaul::scheduler {

AttemptState* Scheduler::AttemptOnGpu(const AgentState& agent, int index) {
  for (int64_t id : agent.attempts) {
    AttemptState* a = FindAttempt(id);
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
  for (const v1::GpuReading& r : readings) {
    if (AttemptState* a = AttemptOnGpu(*agent, r.index())) gpu_telemetry_.Add(a->row.id, r);
  }
  GpuFleet::ReportOutcome out = gpus_.OnReport(agent->row.id, readings, now);
  for (const GpuFleet::AppXid& x : out.app_xids) {
    AttemptState* a = AttemptOnGpu(*agent, x.index);
    log->warn("agent {} GPU {}: XID {} ({}), an application error{}", agent->row.id, x.index,
              x.xid, x.description,
              a == nullptr ? "; no attempt holds the GPU"
                           : StrCat(", charged to run ", a->row.run_id, " stage ",
                                    a->stage ? a->stage->row.name : "?", " attempt ",
                                    a->row.number));
  }
  for (const GpuFleet::Fault& f : out.quarantined) {
    GpuLeftService(agent, f.index);
    std::string gpu = StrCat("GPU ", f.index, f.uuid.empty() ? "" : StrCat(" (", f.uuid, ")"));
    AttemptState* a = AttemptOnGpu(*agent, f.index);
    log->warn("agent {} {}: quarantined: {}{}", agent->row.id, gpu, f.reason,
              a == nullptr ? "" : StrCat("; stopping attempt ", a->row.id));
    std::string reason = StrCat(gpu, " of agent ", agent->row.id, ": ", f.reason);
    if (a != nullptr && a->kill_reason.empty()) {
      StopAttempt(a, "gpu_fault", reason);
      Notice("gpu_fault", a->stage ? a->stage->run : nullptr, a->stage, a->row.number, reason,
             agent->row.id);
    } else {
      Notice("gpu_fault", nullptr, nullptr, 0, reason, agent->row.id);
    }
  }
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
  auto it = agents_.find(agent_id);
  if (it == agents_.end()) return absl::NotFoundError(StrCat("no agent '", agent_id, "'"));
  AgentState* agent = it->second.get();
  int count = agent->row.resources.gpus();
  if (count == 0) return absl::FailedPreconditionError(StrCat("agent ", agent_id, " has no GPUs"));
  if (index >= count) {
    return absl::InvalidArgumentError(StrCat("agent ", agent_id, " has GPUs 0 to ", count - 1,
                                             "; there is no GPU ", index));
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
    GetLogger("scheduler")->info("agent {} GPU {}: {} by {}{}", agent_id, g,
                                 drain ? "drained" : "back in service", by,
                                 reason.empty() ? "" : StrCat(": ", reason));
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
