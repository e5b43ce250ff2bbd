// Sweeps: the stored values of the metric a sweep's early stopping judges, and the workflow
// text `longhaul show RUN --sweep` reads the sweep's items from (docs/sweeps.md).
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

namespace {

// Every stored value of metric `name` of these stages, in the order they were stored.
Result<std::vector<MetricRow>> SweepMetricRowsOn(Db* db, const std::vector<int64_t>& stage_ids,
                                                 const std::string& name) {
  std::vector<std::string> ids;
  ids.reserve(stage_ids.size());
  for (int64_t id : stage_ids) ids.push_back(StrCat(id));
  std::vector<MetricRow> out;
  RETURN_IF_ERROR(QueryEach(
      db,
      "SELECT stage_id, attempt_id, attempt, name, value, step, ts_ms FROM metrics "
      "WHERE stage_id IN (SELECT value FROM json_each(?1)) AND name = ?2 ORDER BY id",
      [&](const Stmt& st) {
        MetricRow m;
        m.stage_id = st.Int(0);
        m.attempt_id = st.Int(1);
        m.attempt = static_cast<int>(st.Int(2));
        m.name = st.Text(3);
        m.value = st.Double(4);
        m.step = st.OptInt(5);
        m.ts_ms = st.Int(6);
        out.push_back(std::move(m));
      },
      StrCat("[", StrJoin(ids, ","), "]"), name));
  return out;
}

}  // namespace

Result<std::vector<MetricRow>> SqliteStore::LoadMetricOfStages(
    const std::vector<int64_t>& stage_ids, const std::string& name) {
  return SweepMetricRowsOn(writer_.get(), stage_ids, name);
}

Result<std::vector<MetricRow>> SqliteStore::ReadMetricOfStages(
    const std::vector<int64_t>& stage_ids, const std::string& name) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return SweepMetricRowsOn(db.get(), stage_ids, name);
}

}  // namespace longhaul::store
