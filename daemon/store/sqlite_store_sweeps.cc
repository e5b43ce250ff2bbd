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

namespace {

// Every stored value of metric `name` of these stages, in stored order, read on `db`.
Result<std::vector<MetricRow>> QuerySweepMetric(Db* db, const std::vector<int64_t>& stage_ids,
                                                const std::string& name) {
  std::vector<std::string> ids;
  ids.reserve(stage_ids.size());
  for (int64_t id : stage_ids) ids.push_back(StrCat(id));
  return QueryAll(
      db,
      "SELECT stage_id, attempt_id, attempt, name, value, step, ts_ms FROM metrics "
      "WHERE stage_id IN (SELECT value FROM json_each(?1)) AND name = ?2 ORDER BY id",
      [](const Stmt& st) {
        MetricRow m;
        m.stage_id = st.Int(0);
        m.attempt_id = st.Int(1);
        m.attempt = static_cast<int>(st.Int(2));
        m.name = st.Text(3);
        m.value = st.Double(4);
        m.step = st.OptInt(5);
        m.ts_ms = st.Int(6);
        return m;
      },
      StrCat("[", StrJoin(ids, ","), "]"), name);
}

}  // namespace

Result<std::vector<MetricRow>> SqliteStore::LoadMetricOfStages(
    const std::vector<int64_t>& stage_ids, const std::string& name) {
  return QuerySweepMetric(writer_.get(), stage_ids, name);
}

Result<std::vector<MetricRow>> SqliteStore::ReadMetricOfStages(
    const std::vector<int64_t>& stage_ids, const std::string& name) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QuerySweepMetric(db.get(), stage_ids, name);
}

Status SqliteStore::PutJudgedFrom(int64_t stage_id, int64_t from_stage_id) {
  ASSIGN_OR_RETURN(Stmt * st,
                   writer_->Prepare("INSERT OR REPLACE INTO stage_judged_from (stage_id, "
                                    "from_stage_id) VALUES (?, ?)"));
  st->Bind(1, stage_id).Bind(2, from_stage_id);
  return st->Run();
}

Result<std::map<int64_t, int64_t>> SqliteStore::LoadJudgedFrom(
    const std::vector<int64_t>& stage_ids) {
  std::vector<std::string> ids;
  ids.reserve(stage_ids.size());
  for (int64_t id : stage_ids) ids.push_back(StrCat(id));
  using JudgedPair = std::pair<int64_t, int64_t>;
  ASSIGN_OR_RETURN(std::vector<JudgedPair> rows,
                   QueryAll(
                       writer_.get(),
                       "SELECT stage_id, from_stage_id FROM stage_judged_from WHERE "
                       "stage_id IN (SELECT value FROM json_each(?1))",
                       [](const Stmt& st) { return JudgedPair(st.Int(0), st.Int(1)); },
                       StrCat("[", StrJoin(ids, ","), "]")));
  return std::map<int64_t, int64_t>(rows.begin(), rows.end());
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
