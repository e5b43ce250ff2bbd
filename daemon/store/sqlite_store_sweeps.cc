// Sweeps: the stored values of the metric a sweep's early stopping judges, and the workflow
// text `longhaul show RUN --sweep` reads the sweep's items from (docs/sweeps.md).
#include <nlohmann/json.hpp>

#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Result<std::string> internal::ReadWorkflowTextOfRun(Db* db, int64_t run_id) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare("SELECT w.text FROM runs r JOIN workflows w ON "
                                          "w.id = r.workflow_id WHERE r.id = ?"));
  st->Bind(1, run_id);
  ASSIGN_OR_RETURN(bool found, st->Step());
  std::string text = found ? st->Text(0) : "";
  st->Reset();
  if (!found) return absl::NotFoundError(StrCat("no run ", run_id));
  return text;
}

Result<std::vector<MetricRow>> SqliteStore::LoadMetricOfStages(
    const std::vector<int64_t>& stage_ids, const std::string& name) {
  std::vector<std::string> ids;
  ids.reserve(stage_ids.size());
  for (int64_t id : stage_ids) ids.push_back(StrCat(id));
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare(
          "SELECT stage_id, attempt_id, attempt, name, value, step, ts_ms FROM metrics "
          "WHERE stage_id IN (SELECT value FROM json_each(?)) AND name = ? ORDER BY id"));
  st->Bind(1, StrCat("[", StrJoin(ids, ","), "]")).Bind(2, name);
  std::vector<MetricRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st->Step());
    if (!row) break;
    MetricRow m;
    m.stage_id = st->Int(0);
    m.attempt_id = st->Int(1);
    m.attempt = static_cast<int>(st->Int(2));
    m.name = st->Text(3);
    m.value = st->Double(4);
    m.step = st->OptInt(5);
    m.ts_ms = st->Int(6);
    out.push_back(std::move(m));
  }
  st->Reset();
  return out;
}

Result<std::vector<SqliteStore::SweepValue>> SqliteStore::ReadSweepValues(
    int64_t run_id, const std::vector<std::string>& stages, const std::string& metric) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  nlohmann::json names = stages;
  return QueryAll(
      db.get(),
      "SELECT s.name, m.value, m.step FROM stages s JOIN metrics m ON "
      "m.stage_id = coalesce(s.cached_from_stage_id, s.id) WHERE s.run_id = ?1 AND s.name IN "
      "(SELECT value FROM json_each(?2)) AND m.name = ?3 ORDER BY m.id",
      [](const Stmt& st) {
        return SweepValue{st.Text(0), st.Double(1), st.OptInt(2)};
      },
      run_id, names.dump(), metric);
}

}  // namespace longhaul::store
