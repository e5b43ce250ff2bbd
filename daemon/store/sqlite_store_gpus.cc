// GPUs: each agent's GPUs as the coordinator keeps them, and attempts' GPU telemetry
// (docs/gpus.md).
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Status SqliteStore::UpsertGpu(const GpuRow& g) {
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare("INSERT INTO gpus(agent_id, gpu_index, uuid, health, reason, since_ms, "
                       "by_whom, passes) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(agent_id, gpu_index) "
                       "DO UPDATE SET uuid = excluded.uuid, health = excluded.health, "
                       "reason = excluded.reason, since_ms = excluded.since_ms, "
                       "by_whom = excluded.by_whom, passes = excluded.passes"));
  st->Bind(1, g.agent_id)
      .Bind(2, static_cast<int64_t>(g.gpu_index))
      .Bind(3, g.uuid)
      .Bind(4, g.health)
      .Bind(5, g.reason)
      .Bind(6, g.since_ms)
      .Bind(7, g.by)
      .Bind(8, static_cast<int64_t>(g.passes));
  return st->Run();
}

Result<std::vector<GpuRow>> SqliteStore::LoadGpus() {
  return QueryAll(writer_.get(),
                  "SELECT agent_id, gpu_index, uuid, health, reason, since_ms, by_whom, passes "
                  "FROM gpus ORDER BY agent_id, gpu_index",
                  [](const Stmt& st) {
                    GpuRow g;
                    g.agent_id = st.Text(0);
                    g.gpu_index = static_cast<int>(st.Int(1));
                    g.uuid = st.Text(2);
                    g.health = st.Text(3);
                    g.reason = st.Text(4);
                    g.since_ms = st.Int(5);
                    g.by = st.Text(6);
                    g.passes = static_cast<int>(st.Int(7));
                    return g;
                  });
}

Status SqliteStore::UpsertGpuSeries(const GpuSeriesRow& r) {
  ASSIGN_OR_RETURN(Stmt * st,
                   writer_->Prepare("INSERT INTO gpu_series(attempt_id, gpu_index, uuid, "
                                    "series_json, sampled_ms, util_ms, util_known_ms, peak_mem, "
                                    "mem_total, energy_wh, idle_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                                    "ON CONFLICT(attempt_id, gpu_index) DO UPDATE SET "
                                    "uuid = excluded.uuid, series_json = excluded.series_json, "
                                    "sampled_ms = excluded.sampled_ms, util_ms = excluded.util_ms, "
                                    "util_known_ms = excluded.util_known_ms, "
                                    "peak_mem = excluded.peak_mem, mem_total = excluded.mem_total, "
                                    "energy_wh = excluded.energy_wh, idle_ms = excluded.idle_ms"));
  st->Bind(1, r.attempt_id)
      .Bind(2, static_cast<int64_t>(r.gpu_index))
      .Bind(3, r.uuid)
      .Bind(4, r.series_json)
      .Bind(5, r.sampled_ms)
      .Bind(6, r.util_ms)
      .Bind(7, r.util_known_ms)
      .Bind(8, r.peak_mem)
      .Bind(9, r.mem_total)
      .Bind(10, r.energy_wh)
      .Bind(11, r.idle_ms);
  return st->Run();
}

Result<std::vector<GpuSeriesRow>> SqliteStore::ListGpuSeries(int64_t run_id,
                                                             const std::string& stage) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryAll(
      db.get(),
      "SELECT g.attempt_id, g.gpu_index, g.uuid, g.series_json FROM gpu_series g "
      "JOIN attempts a ON a.id = g.attempt_id JOIN stages s ON s.id = a.stage_id "
      "WHERE a.run_id = ?1 AND (?2 = '' OR s.name = ?2) ORDER BY g.attempt_id, g.gpu_index",
      [](const Stmt& st) {
        GpuSeriesRow r;
        r.attempt_id = st.Int(0);
        r.gpu_index = static_cast<int>(st.Int(1));
        r.uuid = st.Text(2);
        r.series_json = st.Text(3);
        return r;
      },
      run_id, stage);
}

namespace internal {
namespace {

// The summary of the gpu_series rows of the attempts `where` picks (`id` bound to ?1), into
// `out`; nothing when none was sampled.
Status ReadGpuUsage(Db* db, const char* where, int64_t id, v1::GpuUsage* out, bool* found) {
  *found = false;
  return QueryEach(
      db,
      StrCat("SELECT sum(g.sampled_ms), sum(g.util_ms), sum(g.util_known_ms), "
             "max(g.peak_mem), max(g.mem_total), sum(g.energy_wh), sum(g.idle_ms) "
             "FROM gpu_series g JOIN attempts a ON a.id = g.attempt_id WHERE ",
             where),
      [&](const Stmt& st) {
        *found = !st.IsNull(0) && st.Int(0) > 0;
        if (!*found) return;
        out->set_sampled_gpu_hours(static_cast<double>(st.Int(0)) / 3.6e6);
        int64_t known = st.Int(2);
        out->set_mean_sm_util_pct(known > 0 ? st.Double(1) / static_cast<double>(known) : -1);
        out->set_peak_mem_used_bytes(st.Int(3));
        out->set_mem_total_bytes(st.Int(4));
        out->set_energy_kwh(st.Double(5) / 1000.0);
        out->set_idle_gpu_hours(static_cast<double>(st.Int(6)) / 3.6e6);
      },
      id);
}

}  // namespace

Status FillStageGpuUsage(Db* db, int64_t stage_id, v1::Stage* out) {
  v1::GpuUsage usage;
  bool found = false;
  RETURN_IF_ERROR(ReadGpuUsage(db, "a.stage_id = ?1", stage_id, &usage, &found));
  if (found) *out->mutable_gpu_usage() = usage;
  return OkStatus();
}

Status FillRunGpuUsage(Db* db, int64_t run_id, v1::Run* out) {
  v1::GpuUsage usage;
  bool found = false;
  RETURN_IF_ERROR(ReadGpuUsage(db, "a.run_id = ?1", run_id, &usage, &found));
  if (found) *out->mutable_gpu_usage() = usage;
  return OkStatus();
}

}  // namespace internal

}  // namespace longhaul::store
