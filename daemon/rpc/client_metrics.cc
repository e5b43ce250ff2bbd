// ClientApi::MetricsText and Ready: what GET /metrics and /readyz answer (docs/operations.md).
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string_view>

#include "core/memory.h"
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "proto/state_names.h"

namespace longhaul::rpc {
namespace {

// One sample per value of the proto enum E but its 0 (unspecified), named by `name_of`, with
// 0 where `counts` has none, so that a rate or an alert on one never sees the series vanish.
template <typename E>
void CountsByName(metrics::TextWriter& w, const std::string& family, const std::string& label,
                  std::string_view (*name_of)(E), const std::map<std::string, int64_t>& counts) {
  const google::protobuf::EnumDescriptor* d = google::protobuf::GetEnumDescriptor<E>();
  for (int i = 0; i < d->value_count(); ++i) {
    int number = d->value(i)->number();
    if (number == 0) continue;
    std::string name(name_of(static_cast<E>(number)));
    auto it = counts.find(name);
    w.Sample(family, {{label, name}}, static_cast<double>(it == counts.end() ? 0 : it->second));
  }
}

}  // namespace

Status ClientApi::Ready(int64_t timeout_ms) {
  if (loop_->store_full()) {
    loop_->Post([] {});  // a batch to commit: how an idle coordinator notices space is back
    return absl::UnavailableError(StrCat("the store's disk is full: ", loop_->store_error(),
                                         "; retrying until space returns"));
  }
  auto promise = std::make_shared<std::promise<Status>>();
  std::future<Status> answer = promise->get_future();
  loop_->PostThen([] {}, [promise](const Status& commit) { promise->set_value(commit); });
  if (answer.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready) {
    return absl::UnavailableError(
        StrCat("the scheduler loop has not committed a batch within ", timeout_ms, " ms"));
  }
  Status commit = answer.get();
  if (absl::IsResourceExhausted(commit)) {  // this very commit began a full-disk episode
    return absl::UnavailableError(StrCat("the store's disk is full: ", commit.message(),
                                         "; retrying until space returns"));
  }
  if (!commit.ok()) {
    return absl::UnavailableError(StrCat("the store does not commit: ", commit.message()));
  }
  return OkStatus();
}

Result<std::string> ClientApi::MetricsText() {
  ASSIGN_OR_RETURN(scheduler::SchedulerGauges g,
                   loop_->Read<scheduler::SchedulerGauges>(
                       [this]() -> Result<scheduler::SchedulerGauges> {
                         return scheduler_->Gauges();
                       }));
  ASSIGN_OR_RETURN(auto runs, store_->CountRunsByStatus());

  metrics::TextWriter w;
  w.Family("longhaul_runs", "gauge", "Runs in the store, by status.");
  CountsByName<v1::RunStatus>(w, "longhaul_runs", "status", RunStatusName, runs);
  w.Family("longhaul_stages", "gauge", "Stages of the runs that have not ended, by status.");
  CountsByName<v1::StageStatus>(w, "longhaul_stages", "status", StageStatusName, g.stages);
  w.Family("longhaul_agents", "gauge", "Agents the coordinator knows, by state.");
  CountsByName<v1::AgentState>(w, "longhaul_agents", "state", AgentStateName, g.agents);
  w.Family("longhaul_agent_disk_full", "gauge",
           "1 when a connected agent reports its state dir full, else 0.");
  for (const auto& d : g.agent_disks) {
    w.Sample("longhaul_agent_disk_full", {{"agent", d.agent}}, d.full ? 1 : 0);
  }
  w.Family("longhaul_agent_state_free_bytes", "gauge",
           "Bytes free in each connected agent's state dir, as it last reported.");
  for (const auto& d : g.agent_disks) {
    w.Sample("longhaul_agent_state_free_bytes", {{"agent", d.agent}},
             static_cast<double>(d.free_bytes));
  }
  w.Family("longhaul_store_disk_full", "gauge",
           "1 while the store's commits fail because its disk is full, else 0.");
  w.Sample("longhaul_store_disk_full", {}, loop_->store_full() ? 1 : 0);
  w.Family("longhaul_gpus", "gauge",
           "GPUs of connected agents: busy (held by attempts), free, or out of service "
           "(quarantined or drained, docs/gpus.md).");
  w.Sample("longhaul_gpus", {{"state", "busy"}}, static_cast<double>(g.gpus_busy));
  w.Sample("longhaul_gpus", {{"state", "free"}},
           static_cast<double>(g.gpus_total - g.gpus_busy - g.gpus_out));
  w.Sample("longhaul_gpus", {{"state", "out"}}, static_cast<double>(g.gpus_out));
  // Each GPU of the connected agents: its service state and the agent's last reading.
  auto labels = [](const scheduler::SchedulerGauges::Gpu& gpu) {
    return std::vector<std::pair<std::string, std::string>>{
        {"agent", gpu.agent}, {"gpu", StrCat(gpu.info.index())}, {"uuid", gpu.info.uuid()}};
  };
  w.Family("longhaul_gpu_in_service", "gauge",
           "1 while the GPU is offered to attempts, 0 while quarantined or drained.");
  for (const auto& gpu : g.gpus) {
    w.Sample("longhaul_gpu_in_service", labels(gpu), gpu.info.health() == "ok" ? 1 : 0);
  }
  w.Family("longhaul_gpu_utilization_percent", "gauge",
           "SM utilisation of each GPU in its agent's last report.");
  for (const auto& gpu : g.gpus) {
    if (gpu.info.reading().has_sm_util_pct()) {
      w.Sample("longhaul_gpu_utilization_percent", labels(gpu), gpu.info.reading().sm_util_pct());
    }
  }
  w.Family("longhaul_gpu_memory_used_bytes", "gauge",
           "Memory used on each GPU in its agent's last report.");
  for (const auto& gpu : g.gpus) {
    if (gpu.info.reading().has_mem_used_bytes()) {
      w.Sample("longhaul_gpu_memory_used_bytes", labels(gpu),
               static_cast<double>(gpu.info.reading().mem_used_bytes()));
    }
  }
  w.Family("longhaul_gpu_power_watts", "gauge", "Power draw of each GPU in its agent's last report.");
  for (const auto& gpu : g.gpus) {
    if (gpu.info.reading().has_power_watts()) {
      w.Sample("longhaul_gpu_power_watts", labels(gpu), gpu.info.reading().power_watts());
    }
  }

  // Per team (docs/scheduling.md, "Quotas" and "Fair share").
  w.Family("longhaul_team_gpus_in_use", "gauge", "GPUs held by each team's running attempts.");
  for (const auto& t : g.teams) {
    w.Sample("longhaul_team_gpus_in_use", {{"team", t.team}}, static_cast<double>(t.gpus_in_use));
  }
  w.Family("longhaul_team_gpus_borrowed", "gauge",
           "GPUs held by each team's attempts beyond its guaranteed GPUs (--quota).");
  for (const auto& t : g.teams) {
    w.Sample("longhaul_team_gpus_borrowed", {{"team", t.team}},
             static_cast<double>(t.gpus_borrowed));
  }
  w.Family("longhaul_team_fair_share_gpu_hours", "gauge",
           "Each team's GPU-hours decayed with the fair-share half-life, running attempts "
           "included: what orders its runs in the queue.");
  for (const auto& t : g.teams) {
    if (t.decayed_gpu_hours < 0) continue;
    w.Sample("longhaul_team_fair_share_gpu_hours", {{"team", t.team}}, t.decayed_gpu_hours);
  }

  w.Family("longhaul_stage_progress_ratio", "gauge",
           "done / total of each running stage that reports a total.");
  for (const auto& r : g.running) {
    if (r.progress_ratio < 0) continue;
    w.Sample("longhaul_stage_progress_ratio",
             {{"run", StrCat(r.run_id)}, {"stage", r.stage}, {"agent", r.agent}},
             r.progress_ratio);
  }
  w.Family("longhaul_stage_eta_seconds", "gauge",
           "Estimated seconds until each running stage is done, where there is an estimate.");
  for (const auto& r : g.running) {
    if (r.eta_seconds < 0) continue;
    w.Sample("longhaul_stage_eta_seconds",
             {{"run", StrCat(r.run_id)}, {"stage", r.stage}, {"agent", r.agent}}, r.eta_seconds);
  }

  ResidentMemory rss = ReadResidentMemory();
  w.Family("process_resident_memory_bytes", "gauge", "Resident memory of longhauld.");
  w.Sample("process_resident_memory_bytes", {}, static_cast<double>(rss.resident));
  w.Family("longhaul_anonymous_memory_bytes", "gauge",
           "The anonymous part of longhauld's resident memory: heap and stacks, without the "
           "pages of its binary and libraries.");
  w.Sample("longhaul_anonymous_memory_bytes", {}, static_cast<double>(rss.anonymous));
  HeapStats heap = ReadHeapStats();
  w.Family("longhaul_malloc_bytes", "gauge",
           "What malloc holds: in use, free in its arenas (resident or handed back), and in "
           "blocks mapped on their own (part of in_use).");
  w.Sample("longhaul_malloc_bytes", {{"state", "in_use"}}, static_cast<double>(heap.in_use));
  w.Sample("longhaul_malloc_bytes", {{"state", "free"}}, static_cast<double>(heap.free));
  w.Sample("longhaul_malloc_bytes", {{"state", "mapped"}}, static_cast<double>(heap.mapped));

  if (metrics_ != nullptr) {
    w.Family("longhaul_attempts_started_total", "counter", "Attempts that started on an agent.");
    w.Sample("longhaul_attempts_started_total", {},
             static_cast<double>(metrics_->attempts_started.load()));
    w.Family("longhaul_attempt_failures_total", "counter",
             "Attempts that ended other than in success, by the kind of end.");
    for (const auto& [reason, n] : metrics_->attempt_failures.Read()) {
      w.Sample("longhaul_attempt_failures_total", {{"reason", reason}}, static_cast<double>(n));
    }
    w.Family("longhaul_notifications_total", "counter",
             "Notifications by event kind and state: pending when decided, retry per failed "
             "try, delivered, failed after the last try.");
    for (const auto& [key, n] : metrics_->notifications.Read()) {
      w.Sample("longhaul_notifications_total", {{"kind", key.first}, {"state", key.second}},
               static_cast<double>(n));
    }
    w.Family("longhaul_preemptions_total", "counter",
             "Attempts stopped to make room for a stage of a higher class, by their run's "
             "class.");
    for (const auto& [klass, n] : metrics_->preemptions.Read()) {
      w.Sample("longhaul_preemptions_total", {{"class", klass}}, static_cast<double>(n));
    }
    w.Single("longhaul_preemption_lost_gpu_seconds_total", "counter",
             "GPU time of preempted attempts after their last checkpoint (or their start): "
             "the work their next attempts do again.",
             static_cast<double>(metrics_->preemption_lost_gpu_ms.load()) / 1000.0);
    w.Family("longhaul_events_ingested_total", "counter",
             "Stage event lines stored (each once; re-sends are not counted).");
    w.Sample("longhaul_events_ingested_total", {},
             static_cast<double>(metrics_->events_ingested.load()));
    w.Write("longhaul_handoff_seconds",
            "From a stage becoming ready to its agent reporting that it started.",
            metrics_->handoff_seconds);
    w.Write("longhaul_sqlite_commit_seconds",
            "Duration of each commit of the scheduler's store transaction.",
            metrics_->sqlite_commit_seconds);
  }
  return w.text();
}

}  // namespace longhaul::rpc
