// ClientApi::ListGpuSeries: a stage's GPU telemetry as stored (table gpu_series), each series
// decoded and summarised, with the stage's summary over all of them (docs/gpus.md).
#include "core/strings.h"
#include "daemon/rpc/client_api.h"
#include "daemon/scheduler/gpu_series.h"

namespace longhaul::rpc {
namespace {

void FillGpuUsage(const scheduler::GpuSummary& s, v1::GpuUsage* out) {
  out->set_sampled_gpu_hours(static_cast<double>(s.sampled_ms) / 3.6e6);
  out->set_mean_sm_util_pct(s.mean_sm_util);
  out->set_peak_mem_used_bytes(s.peak_mem_used);
  out->set_mem_total_bytes(s.mem_total);
  out->set_energy_kwh(s.energy_wh / 1000.0);
  out->set_idle_gpu_hours(static_cast<double>(s.idle_ms) / 3.6e6);
}

}  // namespace

Result<v1::ListGpuSeriesResponse> ClientApi::ListGpuSeries(const v1::ListGpuSeriesRequest& req) {
  if (req.stage().empty()) return absl::InvalidArgumentError("no stage given");
  // The attempts name the stage (NotFound for an unknown run or stage) and give each stored
  // attempt id its number and agent.
  v1::ListAttemptsRequest which;
  which.set_run_id(req.run_id());
  which.set_stage(req.stage());
  ASSIGN_OR_RETURN(v1::ListAttemptsResponse attempts, ListAttempts(which));
  ASSIGN_OR_RETURN(std::vector<store::GpuSeriesRow> rows,
                   store_->ListGpuSeries(req.run_id(), req.stage()));
  v1::ListGpuSeriesResponse resp;
  std::vector<scheduler::GpuSummary> each;
  for (const store::GpuSeriesRow& row : rows) {
    const v1::Attempt* attempt = nullptr;
    for (const v1::Attempt& a : attempts.attempts()) {
      if (a.id() == row.attempt_id) attempt = &a;
    }
    if (attempt == nullptr) continue;  // began after the attempts were read: the next read has it
    Result<scheduler::GpuSeries> series = scheduler::GpuSeries::FromJson(row.series_json);
    if (!series.ok()) {
      return absl::DataLossError(StrCat("run ", req.run_id(), " stage '", req.stage(), "' attempt ",
                                        attempt->number(), " GPU ", row.gpu_index, ": ",
                                        series.status().message()));
    }
    v1::AttemptGpuSeries* out = resp.add_series();
    out->set_attempt(attempt->number());
    out->set_attempt_id(row.attempt_id);
    out->set_gpu_index(row.gpu_index);
    out->set_uuid(row.uuid);
    out->set_agent_id(attempt->agent_id());
    for (const scheduler::GpuPoint& p : series->Points()) {
      v1::GpuPoint* q = out->add_points();
      q->set_t_ms(p.t_ms);
      q->set_span_ms(p.span_ms);
      q->set_sm_util(p.sm_util);
      q->set_mem_util(p.mem_util);
      q->set_mem_used_max(p.mem_used_max);
      q->set_mem_total(p.mem_total);
      q->set_power_w(p.power_w);
      q->set_temp_max(p.temp_max);
      q->set_idle_ms(p.idle_ms);
    }
    each.push_back(series->Summarize());
    FillGpuUsage(each.back(), out->mutable_summary());
  }
  FillGpuUsage(scheduler::CombineSummaries(each), resp.mutable_summary());
  return resp;
}

}  // namespace longhaul::rpc
