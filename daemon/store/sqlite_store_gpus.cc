// GPUs: each agent's GPUs as the coordinator keeps them, and attempts' GPU telemetry
// (docs/gpus.md).
#include "core/strings.h"
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
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("SELECT agent_id, gpu_index, uuid, health, reason, "
                                               "since_ms, by_whom, passes FROM gpus "
                                               "ORDER BY agent_id, gpu_index"));
  std::vector<GpuRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    GpuRow& g = out.emplace_back();
    g.agent_id = st->Text(0);
    g.gpu_index = static_cast<int>(st->Int(1));
    g.uuid = st->Text(2);
    g.health = st->Text(3);
    g.reason = st->Text(4);
    g.since_ms = st->Int(5);
    g.by = st->Text(6);
    g.passes = static_cast<int>(st->Int(7));
  }
  st->Reset();
  return out;
}

Status SqliteStore::UpsertGpuSeries(const GpuSeriesRow& r) {
  ASSIGN_OR_RETURN(Stmt * st,
                   writer_->Prepare("INSERT INTO gpu_series(attempt_id, gpu_index, uuid, "
                                    "series_json) VALUES (?,?,?,?) ON CONFLICT(attempt_id, "
                                    "gpu_index) DO UPDATE SET uuid = excluded.uuid, "
                                    "series_json = excluded.series_json"));
  st->Bind(1, r.attempt_id)
      .Bind(2, static_cast<int64_t>(r.gpu_index))
      .Bind(3, r.uuid)
      .Bind(4, r.series_json);
  return st->Run();
}

Result<std::vector<GpuSeriesRow>> SqliteStore::ListGpuSeries(int64_t run_id,
                                                             const std::string& stage) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ASSIGN_OR_RETURN(
      Stmt * st,
      db->Prepare("SELECT g.attempt_id, g.gpu_index, g.uuid, g.series_json FROM gpu_series g "
                  "JOIN attempts a ON a.id = g.attempt_id JOIN stages s ON s.id = a.stage_id "
                  "WHERE a.run_id = ?1 AND (?2 = '' OR s.name = ?2) "
                  "ORDER BY g.attempt_id, g.gpu_index"));
  st->Bind(1, run_id).Bind(2, stage);
  std::vector<GpuSeriesRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    GpuSeriesRow& r = out.emplace_back();
    r.attempt_id = st->Int(0);
    r.gpu_index = static_cast<int>(st->Int(1));
    r.uuid = st->Text(2);
    r.series_json = st->Text(3);
  }
  st->Reset();
  return out;
}

}  // namespace longhaul::store
