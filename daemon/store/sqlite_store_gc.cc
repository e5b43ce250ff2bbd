// Retention's reads and writes: the ended runs a policy may choose from, what collecting one
// removes and keeps, and the collection itself (its event rows go, its summary stays).
#include "core/strings.h"
#include "daemon/store/query.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"
#include "proto/state_names.h"

namespace longhaul::store {

namespace internal {

Result<std::map<int64_t, std::pair<std::string, std::string>>> KeptResults(
    Db* db, int64_t run_id, std::optional<int64_t> as_of_ms) {
  // A stage keeps its result while the cache would reuse it (the newest stage with its key
  // that made its result itself), while a run that reused it has not been collected, or (now,
  // not as of a time) while a tag names it. As of a time: the newest among the stages that had
  // made it by then, and a run that reused it that existed then and was not collected yet.
  ASSIGN_OR_RETURN(
      Stmt * stages,
      db->Prepare("SELECT s.id, s.name, "
                  "  s.cache_key != '' AND s.status IN ('succeeded', 'stopped') AND s.id = "
                  "    (SELECT max(n.id) FROM stages n WHERE n.cache_key = s.cache_key "
                  "     AND n.status IN ('succeeded', 'stopped') "
                  "     AND (?2 IS NULL OR coalesce(n.ended_at_ms, 0) <= ?2)), "
                  "  (SELECT min(c.run_id) FROM stages c JOIN runs r ON r.id = c.run_id "
                  "   WHERE c.cached_from_stage_id = s.id AND (CASE WHEN ?2 IS NULL "
                  "     THEN r.collected_at_ms IS NULL "
                  "     ELSE r.created_at_ms <= ?2 AND (r.collected_at_ms IS NULL OR "
                  "r.collected_at_ms > ?2) "
                  "     END)), "
                  "  (SELECT min(t.name) FROM tags t WHERE t.stage_id = s.id AND ?2 IS NULL) "
                  "FROM stages s WHERE s.run_id = ?1 ORDER BY s.position"));
  stages->Bind(1, run_id);
  if (as_of_ms) {
    stages->Bind(2, *as_of_ms);
  } else {
    stages->BindNull(2);  // a cached statement keeps its last bindings
  }
  std::map<int64_t, std::pair<std::string, std::string>> kept;
  RETURN_IF_ERROR(EachRow(stages, [&](const Stmt& st) {
    bool newest = st.Int(2) != 0;
    std::optional<int64_t> reused_by = st.OptInt(3);
    std::string tag = st.IsNull(4) ? "" : st.Text(4);
    if (!newest && !reused_by && tag.empty()) return;
    kept[st.Int(0)] = {st.Text(1), newest      ? "the cache reuses its result"
                                   : reused_by ? StrCat("run ", *reused_by, " reused its result")
                                               : StrCat("tag ", tag, " names its result")};
  }));
  return kept;
}

Status MarkCollectedResults(Db* db, int64_t run_id,
                            google::protobuf::RepeatedPtrField<v1::Stage>* stages) {
  ASSIGN_OR_RETURN(
      std::optional<std::optional<int64_t>> row,
      QueryFirst(db, "SELECT collected_at_ms FROM runs WHERE id = ?1", FirstColumnOptInt, run_id));
  std::optional<int64_t> collected = row.value_or(std::nullopt);
  if (!collected) return OkStatus();
  ASSIGN_OR_RETURN(auto kept, KeptResults(db, run_id, *collected));
  std::map<std::string, std::string> why_by_name;
  for (const auto& [id, name_why] : kept) why_by_name[name_why.first] = name_why.second;
  for (v1::Stage& s : *stages) {
    if (s.attempt_count() == 0) continue;  // it never ran here: nothing of its own to remove
    auto it = why_by_name.find(s.name());
    if (it != why_by_name.end()) {
      s.set_result_kept(it->second);
    } else {
      s.set_result_removed(true);
    }
  }
  return OkStatus();
}

}  // namespace internal

Result<std::vector<SqliteStore::EndedRun>> SqliteStore::ListEndedRuns(const std::string& workflow) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryAll(
      db.get(),
      "SELECT id, workflow_name, status, ended_at_ms FROM runs "
      "WHERE status IN ('succeeded', 'failed', 'cancelled') AND collected_at_ms IS NULL "
      "AND ended_at_ms IS NOT NULL AND (?1 = '' OR workflow_name = ?1) "
      "ORDER BY workflow_name, ended_at_ms DESC, id DESC",
      [](const Stmt& st) {
        EndedRun r;
        r.id = st.Int(0);
        r.workflow_name = st.Text(1);
        r.status = ParseRunStatus(st.Text(2)).value_or(v1::RUN_STATUS_UNSPECIFIED);
        r.ended_at_ms = st.Int(3);
        return r;
      },
      workflow);
}

Result<std::map<std::string, int64_t>> SqliteStore::NewestWorkflowIds(const std::string& workflow) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  // SQLite takes the bare column workflow_id from the row that holds max(id).
  std::map<std::string, int64_t> out;
  RETURN_IF_ERROR(QueryEach(
      db.get(),
      "SELECT workflow_name, workflow_id, max(id) FROM runs "
      "WHERE (?1 = '' OR workflow_name = ?1) GROUP BY workflow_name",
      [&](const Stmt& st) { out[st.Text(0)] = st.Int(1); }, workflow));
  return out;
}

Result<std::string> SqliteStore::LoadWorkflowText(int64_t workflow_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return QueryOne(db.get(), "SELECT text FROM workflows WHERE id = ?1",
                  StrCat("no workflow file ", workflow_id), FirstColumnText, workflow_id);
}

Result<SqliteStore::GcPlan> SqliteStore::PlanRunGc(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ReadSnapshot snap(db.get());
  RETURN_IF_ERROR(snap.Begin());
  std::map<int64_t, bool> keep_stage;
  GcPlan plan;
  ASSIGN_OR_RETURN(auto kept, internal::KeptResults(db.get(), run_id, std::nullopt));
  for (const auto& [id, name_why] : kept) {
    keep_stage[id] = true;
    plan.kept.push_back(StrCat(name_why.first, ": ", name_why.second));
  }
  // The attempt that made a kept stage's result is its last one.
  ASSIGN_OR_RETURN(
      plan.attempts,
      QueryAll(
          db.get(),
          "SELECT a.id, s.name, a.agent_id, a.output_dir, a.stage_id, "
          "  a.number = (SELECT max(b.number) FROM attempts b WHERE b.stage_id = a.stage_id) "
          "FROM attempts a JOIN stages s ON s.id = a.stage_id WHERE a.run_id = ?1 ORDER BY a.id",
          [&](const Stmt& st) {
            GcAttempt a;
            a.id = st.Int(0);
            a.stage = st.Text(1);
            a.agent_id = st.Text(2);
            a.output_dir = st.Text(3);
            a.keep = keep_stage.count(st.Int(4)) != 0 && st.Int(5) != 0;
            return a;
          },
          run_id));
  ASSIGN_OR_RETURN(std::optional<int64_t> events,
                   QueryFirst(db.get(),
                              "SELECT count(*) FROM events WHERE attempt_id IN "
                              "(SELECT id FROM attempts WHERE run_id = ?1)",
                              FirstColumnInt, run_id));
  plan.events = events.value_or(0);
  return plan;
}

Result<int64_t> SqliteStore::CollectRun(int64_t run_id, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      Stmt * del,
      writer_->Prepare(
          "DELETE FROM events WHERE attempt_id IN (SELECT id FROM attempts WHERE run_id = ?1)"));
  del->Bind(1, run_id);
  RETURN_IF_ERROR(del->Run());
  int64_t deleted = writer_->Changes();
  ASSIGN_OR_RETURN(Stmt * series,
                   writer_->Prepare("DELETE FROM gpu_series WHERE attempt_id IN "
                                    "(SELECT id FROM attempts WHERE run_id = ?1)"));
  series->Bind(1, run_id);
  RETURN_IF_ERROR(series->Run());
  ASSIGN_OR_RETURN(
      Stmt * mark,
      writer_->Prepare(
          "UPDATE runs SET collected_at_ms = coalesce(collected_at_ms, ?2) WHERE id = ?1"));
  mark->Bind(1, run_id).Bind(2, now_ms);
  RETURN_IF_ERROR(mark->Run());
  return deleted;
}

}  // namespace longhaul::store
