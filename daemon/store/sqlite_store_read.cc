// Client reads: any thread, on pooled read-only connections.
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/strings.h"
#include "daemon/store/proto_convert.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/row_codec.h"
#include "daemon/store/sqlite_store.h"
#include "proto/state_names.h"

namespace longhaul::store {

using namespace internal;  // NOLINT

void SqliteStore::ReleaseMemory() {
  sqlite3_db_release_memory(writer_->raw());
  std::lock_guard lock(pool_mu_);
  for (auto& reader : pool_) sqlite3_db_release_memory(reader->raw());
}

size_t SqliteStore::IdleReaderCacheBytes() {
  std::lock_guard lock(pool_mu_);
  size_t bytes = 0;
  for (auto& reader : pool_) bytes += PageCacheBytes(reader.get());
  return bytes;
}

Result<std::unique_ptr<Db>> SqliteStore::OpenReader() {
  RETURN_IF_ERROR(FileCheck());  // a new connection would open (or fail to find) another file
  return Db::Open(path_, /*create=*/false, /*read_only=*/true);
}

namespace internal {

Status FillStageDetails(Db* db, int64_t stage_id, const StageRow& row, bool include_attempts,
                        v1::Stage* out) {
  RETURN_IF_ERROR(FillStageGpuUsage(db, stage_id, out));
  if (row.cached_from_stage_id) {
    RETURN_IF_ERROR(QueryEach(
        db, "SELECT run_id, name FROM stages WHERE id = ?",
        [&](const Stmt& st) {
          out->set_cached_from_run_id(st.Int(0));
          out->set_cached_from_stage(st.Text(1));
        },
        *row.cached_from_stage_id));
  }
  // A cached stage shows the metrics and artifacts of the stage it reuses.
  int64_t source = row.cached_from_stage_id.value_or(stage_id);
  RETURN_IF_ERROR(QueryEach(
      db,
      "SELECT name, value, step, attempt, ts_ms FROM metrics WHERE id IN "
      "(SELECT max(id) FROM metrics WHERE stage_id = ?1 GROUP BY name) ORDER BY name",
      [&](const Stmt& st) {
        v1::Metric* m = out->add_metrics();
        m->set_name(st.Text(0));
        m->set_value(st.Double(1));
        m->set_step(st.IsNull(2) ? -1 : st.Int(2));
        m->set_attempt(static_cast<int32_t>(st.Int(3)));
        m->set_ts_ms(st.Int(4));
      },
      source));
  RETURN_IF_ERROR(QueryEach(
      db,
      "SELECT name, path, bytes, agent_id, attempt FROM artifacts WHERE stage_id = ? ORDER BY id",
      [&](const Stmt& st) {
        v1::Artifact* a = out->add_artifacts();
        a->set_name(st.Text(0));
        a->set_path(st.Text(1));
        a->set_bytes(st.IsNull(2) ? -1 : st.Int(2));
        a->set_agent_id(st.Text(3));
        a->set_attempt(static_cast<int32_t>(st.Int(4)));
      },
      source));
  if (!include_attempts) return OkStatus();
  RETURN_IF_ERROR(QueryEach(
      db, StrCat("SELECT ", kAttemptColumns, " FROM attempts WHERE stage_id = ? ORDER BY number"),
      [&](const Stmt& st) { AttemptRowToProto(ReadAttempt(st), out->add_attempts()); }, stage_id));
  for (v1::Attempt& attempt : *out->mutable_attempts()) {
    RETURN_IF_ERROR(FillAttemptEnvironment(db, attempt.id(), &attempt));
  }
  return OkStatus();
}

Status ReadRunFields(Db* db, int64_t run_id, v1::Run* run, std::optional<RunTotals>* totals) {
  ASSIGN_OR_RETURN(auto row, QueryOne(
                                 db,
                                 StrCat("SELECT ", kShownRunColumns, ", ", kRunTotalsColumns,
                                        " FROM runs r WHERE r.id = ?"),
                                 StrCat("no run ", run_id),
                                 [](const Stmt& st) {
                                   return std::make_pair(ReadRun(st),
                                                         ReadRunTotals(st, kRunColumnCount));
                                 },
                                 run_id));
  if (totals != nullptr) *totals = std::move(row.second);
  RunRowToProto(row.first, run);
  run->set_workflow_hash("");
  return FillRunSourceState(db, run_id, run);
}

}  // namespace internal

Result<v1::Run> SqliteStore::GetRun(int64_t run_id, bool include_attempts) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  // One read transaction, so the run and its stages are one consistent snapshot.
  ReadSnapshot snapshot(db.get());
  RETURN_IF_ERROR(snapshot.Begin());
  v1::Run run;
  RETURN_IF_ERROR(ReadRunFields(db.get(), run_id, &run));
  ASSIGN_OR_RETURN(
      std::vector<StageRow> stages,
      QueryAll(db.get(),
               StrCat("SELECT ", kStageColumns, " FROM stages WHERE run_id = ? ORDER BY position"),
               ReadStage, run_id));
  ASSIGN_OR_RETURN(auto costs, ReadStageCosts(db.get(), run_id, SystemClock::Get()->NowMs()));
  for (const StageRow& s : stages) {
    v1::Stage* out = run.add_stages();
    StageRowToProto(s, out);
    RETURN_IF_ERROR(FillStageDetails(db.get(), s.id, s, include_attempts, out));
    auto cost = costs.find(s.id);
    if (cost != costs.end()) {
      out->set_wall_seconds(cost->second.wall_seconds);
      out->set_gpu_hours(cost->second.gpu_hours);
      run.set_gpu_hours(run.gpu_hours() + cost->second.gpu_hours);
    }
  }
  RETURN_IF_ERROR(MarkCollectedResults(db.get(), run_id, run.mutable_stages()));
  RETURN_IF_ERROR(FillRunGpuUsage(db.get(), run_id, &run));
  SetRunWallSeconds(SystemClock::Get()->NowMs(), &run);
  SetRunBudgetUse(&run);
  return run;
}

Result<v1::ListEventsResponse> SqliteStore::ListEvents(const v1::ListEventsRequest& req) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  int limit = req.limit() > 0 ? std::min(req.limit(), 10000) : 1000;
  std::string sql =
      "SELECT e.attempt_id, a.number, e.seq, e.ts_ms, e.line FROM events e "
      "JOIN attempts a ON a.id = e.attempt_id JOIN stages s ON s.id = a.stage_id "
      "WHERE s.run_id = ?1 AND s.name = ?2 AND e.seq > ?3";
  if (req.attempt() > 0) sql += " AND a.number = ?4";
  if (!req.type().empty()) sql += " AND e.type = ?5";
  sql += " ORDER BY a.number, e.seq LIMIT ?6";
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  st->Bind(1, req.run_id()).Bind(2, req.stage()).Bind(3, req.after_seq());
  if (req.attempt() > 0) st->Bind(4, req.attempt());
  if (!req.type().empty()) st->Bind(5, req.type());
  st->Bind(6, limit);
  v1::ListEventsResponse resp;
  RETURN_IF_ERROR(EachRow(st, [&](const Stmt& row) {
    auto* item = resp.add_events();
    item->set_attempt_id(row.Int(0));
    item->set_attempt(static_cast<int32_t>(row.Int(1)));
    item->mutable_event()->set_seq(row.Int(2));
    item->mutable_event()->set_ts_ms(row.Int(3));
    item->mutable_event()->set_line(row.Text(4));
  }));
  return resp;
}

Result<AttemptRow> SqliteStore::FindAttempt(int64_t run_id, const std::string& stage, int number) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  std::string sql = StrCat("SELECT ", kAttemptColumns,
                           " FROM attempts WHERE stage_id = "
                           "(SELECT id FROM stages WHERE run_id = ?1 AND name = ?2)");
  sql += number > 0 ? " AND number = ?3" : " ORDER BY number DESC LIMIT 1";
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  st->Bind(1, run_id).Bind(2, stage);
  if (number > 0) st->Bind(3, number);
  ASSIGN_OR_RETURN(std::optional<AttemptRow> found, FirstRow(st, ReadAttempt));
  if (found) return std::move(*found);
  // Say what is missing: the run, its stage, or the stage's attempt.
  using RunAndStage = std::pair<bool, bool>;  // whether each exists
  ASSIGN_OR_RETURN(
      std::optional<RunAndStage> which,
      QueryFirst(
          db.get(),
          "SELECT (SELECT count(*) FROM runs WHERE id = ?1), "
          "(SELECT count(*) FROM stages WHERE run_id = ?1 AND name = ?2)",
          [](const Stmt& r) { return RunAndStage(r.Int(0) > 0, r.Int(1) > 0); }, run_id, stage));
  if (!which || !which->first) return absl::NotFoundError(StrCat("no run ", run_id));
  if (!which->second) {
    return absl::NotFoundError(StrCat("run ", run_id, " has no stage '", stage, "'"));
  }
  if (number > 0) {
    return absl::NotFoundError(
        StrCat("run ", run_id, " stage '", stage, "' has no attempt ", number));
  }
  return absl::NotFoundError(StrCat("run ", run_id, " stage '", stage, "' has no attempt yet"));
}

Result<SqliteStore::RunSource> SqliteStore::GetRunSource(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryOne(
      db.get(),
      "SELECT w.text, r.workflow_path, r.workflow_name, r.overrides_json, r.priority FROM runs r "
      "JOIN workflows w ON w.id = r.workflow_id WHERE r.id = ?",
      StrCat("no run ", run_id),
      [](const Stmt& st) {
        return RunSource{st.Text(0), st.Text(1), st.Text(2), JsonToMap(st.Text(3)), st.Text(4)};
      },
      run_id);
}

Result<std::optional<int64_t>> SqliteStore::LatestRunOf(const std::string& name) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ASSIGN_OR_RETURN(std::optional<std::optional<int64_t>> latest,
                   QueryFirst(db.get(), "SELECT max(id) FROM runs WHERE workflow_name = ?",
                              FirstColumnOptInt, name));
  return latest.value_or(std::nullopt);
}

Result<std::vector<StageRow>> SqliteStore::ReadStages(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryAll(
      db.get(), StrCat("SELECT ", kStageColumns, " FROM stages WHERE run_id = ? ORDER BY position"),
      ReadStage, run_id);
}

Result<std::string> SqliteStore::IntegrityCheck() {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  std::string out;
  RETURN_IF_ERROR(QueryEach(db.get(), "PRAGMA integrity_check", [&](const Stmt& st) {
    if (!out.empty()) out += "\n";
    out += st.Text(0);
  }));
  return out;
}

Result<std::map<std::string, int64_t>> SqliteStore::CountRunsByStatus() {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  std::map<std::string, int64_t> out;
  RETURN_IF_ERROR(QueryEach(db.get(), "SELECT status, count(*) FROM runs GROUP BY status",
                            [&](const Stmt& st) { out[st.Text(0)] = st.Int(1); }));
  return out;
}

}  // namespace longhaul::store
