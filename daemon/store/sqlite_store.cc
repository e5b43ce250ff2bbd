#include "daemon/store/sqlite_store.h"

#include <sys/stat.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "core/logging.h"
#include "core/strings.h"
#include "daemon/store/migrations.h"
#include "daemon/store/query.h"
#include "daemon/store/row_codec.h"
#include "proto/state_names.h"

namespace longhaul::store {

using namespace internal;  // NOLINT: the codec is this file's vocabulary

Result<std::unique_ptr<SqliteStore>> SqliteStore::Open(const std::string& path) {
  struct stat before {};
  bool created = ::stat(path.c_str(), &before) != 0 && errno == ENOENT;
  ASSIGN_OR_RETURN(auto writer, Db::Open(path, /*create=*/true, /*read_only=*/false));
  RETURN_IF_ERROR(Migrate(writer.get()));
  auto store = std::unique_ptr<SqliteStore>(new SqliteStore(path, std::move(writer)));
  RETURN_IF_ERROR(store->LoadIdentity(created));
  struct stat opened {};
  if (::stat(path.c_str(), &opened) != 0) return ErrnoStatus("stat", path, errno);
  store->dev_ = opened.st_dev;
  store->ino_ = opened.st_ino;
  // Replaces the hook through which SQLite runs its automatic checkpoint (kCheckpointFrames).
  sqlite3_wal_hook(store->writer_->raw(), &SqliteStore::OnWalCommit, store.get());
  return store;
}

int SqliteStore::OnWalCommit(void* self, sqlite3*, const char*, int frames) {
  static_cast<SqliteStore*>(self)->wal_frames_ = frames;
  return SQLITE_OK;
}

void SqliteStore::CheckpointIfDue() {
  if (in_tx_ || wal_frames_ < kCheckpointFrames) return;
  wal_frames_ = 0;  // the next commit says how much is left (pages a reader still needed)
  ++checkpoints_;
  int rc = sqlite3_wal_checkpoint_v2(writer_->raw(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                     nullptr, nullptr);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
    // Not fatal: the log keeps every commit, and the next transaction tries again.
    GetLogger("store")->warn("checkpoint of {}: {}", path_, sqlite3_errmsg(writer_->raw()));
  }
}

SqliteStore::~SqliteStore() {
  if (in_tx_) Rollback();
}

Status SqliteStore::Begin() {
  RETURN_IF_ERROR(CheckFile());
  CheckpointIfDue();  // what the last commits logged, now that their callers have answers
  RETURN_IF_ERROR(writer_->Exec("BEGIN IMMEDIATE"));
  in_tx_ = true;
  return OkStatus();
}

Status SqliteStore::Commit() {
  Status st = writer_->Exec("COMMIT");
  if (st.ok()) in_tx_ = false;
  return st;
}

void SqliteStore::Rollback() {
  (void)writer_->Exec("ROLLBACK");
  in_tx_ = false;
}

Status SqliteStore::Savepoint(const std::string& name) {
  return writer_->Exec(StrCat("SAVEPOINT ", name));
}

Status SqliteStore::ReleaseSavepoint(const std::string& name) {
  return writer_->Exec(StrCat("RELEASE ", name));
}

void SqliteStore::RollbackToSavepoint(const std::string& name) {
  (void)writer_->Exec(StrCat("ROLLBACK TO ", name));
  (void)writer_->Exec(StrCat("RELEASE ", name));
}

Result<int64_t> SqliteStore::PutWorkflow(const std::string& name, const std::string& text,
                                         const std::string& hash, int64_t now_ms) {
  ASSIGN_OR_RETURN(
      std::optional<int64_t> found,
      QueryFirst(writer_.get(), "SELECT id FROM workflows WHERE hash = ?", FirstColumnInt, hash));
  if (found) return *found;
  ASSIGN_OR_RETURN(
      Stmt * ins,
      writer_->Prepare(
          "INSERT INTO workflows(name, hash, text, created_at_ms) VALUES (?, ?, ?, ?)"));
  ins->Bind(1, name).Bind(2, hash).Bind(3, text).Bind(4, now_ms);
  RETURN_IF_ERROR(ins->Run());
  return writer_->LastInsertId();
}

Status SqliteStore::InsertRun(RunRow* run) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "INSERT INTO runs(workflow_id, workflow_name, workflow_path, status, params_json, "
      "overrides_json, parent_run_id, from_stage, no_cache, reason, created_at_ms, "
      "started_at_ms, ended_at_ms, description, submitted_by, team, priority) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, run->workflow_id)
      .Bind(2, run->workflow_name)
      .Bind(3, run->workflow_path)
      .Bind(4, RunStatusName(run->status))
      .Bind(5, MapToJson(run->params))
      .Bind(6, MapToJson(run->overrides))
      .Bind(7, run->parent_run_id)
      .Bind(8, run->from_stage)
      .Bind(9, run->no_cache ? 1 : 0)
      .Bind(10, run->reason)
      .Bind(11, run->created_at_ms)
      .Bind(12, run->started_at_ms)
      .Bind(13, run->ended_at_ms)
      .Bind(14, run->description)
      .Bind(15, run->user)
      .Bind(16, run->team)
      .Bind(17, run->priority);
  RETURN_IF_ERROR(st->Run());
  run->id = writer_->LastInsertId();
  return UpdateRunBudget(*run);
}

Status SqliteStore::UpdateRun(const RunRow& run) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "UPDATE runs SET status = ?, reason = ?, started_at_ms = ?, ended_at_ms = ? WHERE id = ?"));
  st->Bind(1, RunStatusName(run.status))
      .Bind(2, run.reason)
      .Bind(3, run.started_at_ms)
      .Bind(4, run.ended_at_ms)
      .Bind(5, run.id);
  return st->Run();
}

Status SqliteStore::UpdateRunBudget(const RunRow& run) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "UPDATE runs SET budget_gpu_hours = ?, budget_hard = ?, budget_raised_by = ?, "
      "budget_noticed = ?, budget_hold = ? WHERE id = ?"));
  if (run.budget_gpu_hours) {
    st->Bind(1, *run.budget_gpu_hours);
  } else {
    st->BindNull(1);
  }
  st->Bind(2, run.budget_hard ? 1 : 0)
      .Bind(3, run.budget_raised_by)
      .Bind(4, run.budget_noticed)
      .Bind(5, run.budget_hold)
      .Bind(6, run.id);
  return st->Run();
}

Status SqliteStore::UpdateRunPriority(int64_t run_id, const std::string& priority) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("UPDATE runs SET priority = ? WHERE id = ?"));
  st->Bind(1, priority).Bind(2, run_id);
  return st->Run();
}

Status SqliteStore::UpdateRunTotals(int64_t run_id, const RunTotals& totals) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "UPDATE runs SET stage_counts_json = ?, gpu_ms_ended = ?, gpus_running = ?, "
      "gpu_start_ms_running = ? WHERE id = ?"));
  st->Bind(1, CountsToJson(totals.stage_counts))
      .Bind(2, totals.gpu_ms_ended)
      .Bind(3, totals.gpus_running)
      .Bind(4, totals.gpu_start_ms_running)
      .Bind(5, run_id);
  return st->Run();
}

namespace {

void BindStageFields(Stmt* st, const StageRow& s) {
  st->Bind(1, s.run_id)
      .Bind(2, s.name)
      .Bind(3, s.position)
      .Bind(4, s.kind.view())
      .Bind(5, StageStatusName(s.status))
      .Bind(6, s.reason)
      .Bind(7, s.attempt_count)
      .Bind(8, s.retries_used)
      .Bind(9, s.cache_key)
      .Bind(10, s.fingerprint_json)
      .Bind(11, s.cached_from_stage_id)
      .Bind(12, MapToJson(s.outputs));
  if (s.progress) {
    st->Bind(13, ProgressToJson(*s.progress));
  } else {
    st->BindNull(13);
  }
  st->Bind(14, s.last_message)
      .Bind(15, s.last_message_level)
      .Bind(16, s.next_retry_at_ms)
      .Bind(17, s.checkpoint)
      .Bind(18, s.checkpoint_step)
      .Bind(19, s.started_at_ms)
      .Bind(20, s.ended_at_ms)
      .Bind(21, s.agent_id)
      .Bind(22, s.malformed)
      .Bind(23, s.last_malformed)
      .Bind(24, StringsToJson(s.needs))
      .Bind(25, ResourcesToJson(s.resources))
      .Bind(26, s.plan_action.view())
      .Bind(27, s.plan_reason)
      .Bind(28, s.description)
      .Bind(29, s.infra_retries_used);
}

}  // namespace

Status SqliteStore::InsertStage(StageRow* stage) {
  // Built once: a 100,000-stage submission inserts 100,000 rows with this statement.
  static const std::string kInsert =
      StrCat("INSERT INTO stages(", std::string(kStageColumns).substr(4),
             ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(kInsert));
  BindStageFields(st, *stage);
  RETURN_IF_ERROR(st->Run());
  stage->id = writer_->LastInsertId();
  return OkStatus();
}

Status SqliteStore::UpdateStage(const StageRow& stage) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "UPDATE stages SET status = ?1, reason = ?2, attempt_count = ?3, retries_used = ?4, "
      "cached_from_stage_id = ?5, outputs_json = ?6, progress_json = ?7, last_message = ?8, "
      "last_message_level = ?9, next_retry_at_ms = ?10, checkpoint = ?11, checkpoint_step = ?12, "
      "started_at_ms = ?13, ended_at_ms = ?14, agent_id = ?15, malformed = ?16, "
      "last_malformed = ?17, infra_retries_used = ?19 WHERE id = ?18"));
  st->Bind(1, StageStatusName(stage.status))
      .Bind(2, stage.reason)
      .Bind(3, stage.attempt_count)
      .Bind(4, stage.retries_used)
      .Bind(5, stage.cached_from_stage_id)
      .Bind(6, MapToJson(stage.outputs));
  if (stage.progress) {
    st->Bind(7, ProgressToJson(*stage.progress));
  } else {
    st->BindNull(7);
  }
  st->Bind(8, stage.last_message)
      .Bind(9, stage.last_message_level)
      .Bind(10, stage.next_retry_at_ms)
      .Bind(11, stage.checkpoint)
      .Bind(12, stage.checkpoint_step)
      .Bind(13, stage.started_at_ms)
      .Bind(14, stage.ended_at_ms)
      .Bind(15, stage.agent_id)
      .Bind(16, stage.malformed)
      .Bind(17, stage.last_malformed)
      .Bind(18, stage.id)
      .Bind(19, stage.infra_retries_used);
  return st->Run();
}

namespace {

void BindAttemptFields(Stmt* st, const AttemptRow& a) {
  st->Bind(1, a.stage_id)
      .Bind(2, a.run_id)
      .Bind(3, a.number)
      .Bind(4, a.agent_id)
      .Bind(5, AttemptStateName(a.state))
      .Bind(6, a.reason)
      .Bind(7, a.exit_code)
      .Bind(8, a.signal)
      .Bind(9, a.pid)
      .Bind(10, a.output_dir)
      .BindBlob(11, a.start_blob)
      .Bind(12, a.created_at_ms)
      .Bind(13, a.started_at_ms)
      .Bind(14, a.ended_at_ms)
      .Bind(15, a.events)
      .Bind(16, a.malformed)
      .Bind(17, a.last_malformed)
      .Bind(18, a.ready_at_ms)
      .Bind(19, a.stop_kind)
      .Bind(20, a.stop_reason)
      .Bind(21, a.stop_at_ms)
      .Bind(22, a.stop_for_stage_id)
      .Bind(23, a.borrowed ? 1 : 0);
}

}  // namespace

Status SqliteStore::InsertAttempt(AttemptRow* attempt) {
  int64_t explicit_id = 0;
  if (attempt_id_floor_ > 0) {
    // An agent holds ids up to the floor (RaiseAttemptIds): start above it, unless the
    // table's own next id already is. Once one row is there, the next ids follow it.
    ASSIGN_OR_RETURN(
        std::optional<int64_t> max,
        QueryFirst(writer_.get(), "SELECT coalesce(max(id), 0) FROM attempts", FirstColumnInt));
    int64_t next = max.value_or(0) + 1;
    if (attempt_id_floor_ > next) explicit_id = attempt_id_floor_;
  }
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(StrCat(
      "INSERT INTO attempts(", std::string(kAttemptColumns).substr(4),
      explicit_id > 0 ? ", id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                      : ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)")));
  BindAttemptFields(st, *attempt);
  if (explicit_id > 0) st->Bind(24, explicit_id);
  RETURN_IF_ERROR(st->Run());
  attempt->id = writer_->LastInsertId();
  return OkStatus();
}

Status SqliteStore::UpdateAttempt(const AttemptRow& attempt) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "UPDATE attempts SET stage_id = ?1, run_id = ?2, number = ?3, agent_id = ?4, state = ?5, "
      "reason = ?6, exit_code = ?7, signal = ?8, pid = ?9, output_dir = ?10, start_blob = ?11, "
      "created_at_ms = ?12, started_at_ms = ?13, ended_at_ms = ?14, events = ?15, "
      "malformed = ?16, last_malformed = ?17, ready_at_ms = ?18, stop_kind = ?19, "
      "stop_reason = ?20, stop_at_ms = ?21, stop_for_stage_id = ?22, borrowed = ?23 "
      "WHERE id = ?24"));
  BindAttemptFields(st, attempt);
  st->Bind(24, attempt.id);
  return st->Run();
}

Result<bool> SqliteStore::InsertEvent(int64_t attempt_id, const EventRow& event) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "INSERT OR IGNORE INTO events(attempt_id, seq, ts_ms, type, line) VALUES (?,?,?,?,?)"));
  st->Bind(1, attempt_id).Bind(2, event.seq).Bind(3, event.ts_ms).Bind(4, event.type).Bind(
      5, event.line);
  RETURN_IF_ERROR(st->Run());
  return writer_->Changes() == 1;
}

Status SqliteStore::InsertMetric(const MetricRow& m) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "INSERT INTO metrics(stage_id, attempt_id, attempt, name, step, value, ts_ms) "
      "VALUES (?,?,?,?,?,?,?)"));
  st->Bind(1, m.stage_id)
      .Bind(2, m.attempt_id)
      .Bind(3, m.attempt)
      .Bind(4, m.name)
      .Bind(5, m.step)
      .Bind(6, m.value)
      .Bind(7, m.ts_ms);
  return st->Run();
}

Status SqliteStore::InsertArtifact(const ArtifactRow& a) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(
      "INSERT INTO artifacts(stage_id, attempt_id, attempt, name, path, bytes, agent_id, ts_ms) "
      "VALUES (?,?,?,?,?,?,?,?)"));
  st->Bind(1, a.stage_id)
      .Bind(2, a.attempt_id)
      .Bind(3, a.attempt)
      .Bind(4, a.name)
      .Bind(5, a.path)
      .Bind(6, a.bytes)
      .Bind(7, a.agent_id)
      .Bind(8, a.ts_ms);
  return st->Run();
}

Status SqliteStore::UpsertAgent(const AgentRow& a) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare(StrCat(
      "INSERT INTO agents(", kAgentColumns,
      ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO UPDATE SET hostname = excluded.hostname, "
      "resources_blob = excluded.resources_blob, labels_json = excluded.labels_json, "
      "version = excluded.version, executor = excluded.executor, data_dir = excluded.data_dir, "
      "state = excluded.state, last_seen_ms = excluded.last_seen_ms, "
      "connected_at_ms = excluded.connected_at_ms, shared_paths_json = excluded.shared_paths_json")));
  st->Bind(1, a.id)
      .Bind(2, a.hostname)
      .Bind(3, ResourcesToJson(a.resources))
      .Bind(4, MapToJson(a.labels))
      .Bind(5, a.version)
      .Bind(6, a.executor)
      .Bind(7, a.data_dir)
      .Bind(8, AgentStateName(a.state))
      .Bind(9, a.first_seen_ms)
      .Bind(10, a.last_seen_ms)
      .Bind(11, a.connected_at_ms)
      .Bind(12, StringsToJson(a.shared_paths));
  return st->Run();
}

Result<std::vector<RunRow>> SqliteStore::LoadActiveRuns() {
  return QueryAll(writer_.get(),
                  StrCat("SELECT ", kRunColumns,
                         " FROM runs r JOIN workflows w ON w.id = r.workflow_id "
                         "WHERE r.status IN ('pending', 'running') ORDER BY r.id"),
                  ReadRun);
}

Result<RunRow> SqliteStore::LoadRun(int64_t run_id) {
  return QueryOne(writer_.get(),
                  StrCat("SELECT ", kRunColumns,
                         " FROM runs r JOIN workflows w ON w.id = r.workflow_id WHERE r.id = ?"),
                  StrCat("no run ", run_id), ReadRun, run_id);
}

Result<std::vector<StageRow>> SqliteStore::LoadStages(int64_t run_id) {
  return QueryAll(
      writer_.get(),
      StrCat("SELECT ", kStageColumns, " FROM stages WHERE run_id = ? ORDER BY position"),
      ReadStage, run_id);
}

Result<StageRow> SqliteStore::LoadStageById(int64_t stage_id) {
  return QueryOne(writer_.get(), StrCat("SELECT ", kStageColumns, " FROM stages WHERE id = ?"),
                  StrCat("no stage with id ", stage_id), ReadStage, stage_id);
}

Result<AttemptRow> SqliteStore::LoadAttemptById(int64_t attempt_id) {
  return QueryOne(writer_.get(), StrCat("SELECT ", kAttemptColumns, " FROM attempts WHERE id = ?"),
                  StrCat("no attempt with id ", attempt_id), ReadAttempt, attempt_id);
}

Result<std::vector<AttemptRow>> SqliteStore::LoadAttempts(int64_t run_id) {
  return QueryAll(writer_.get(),
                  StrCat("SELECT ", kAttemptColumns, " FROM attempts WHERE run_id = ? ORDER BY id"),
                  ReadAttempt, run_id);
}

Result<std::vector<AgentRow>> SqliteStore::LoadAgents() {
  return QueryAll(writer_.get(), StrCat("SELECT ", kAgentColumns, " FROM agents ORDER BY id"),
                  ReadAgent);
}

Result<std::vector<ArtifactRow>> SqliteStore::LoadArtifacts(int64_t stage_id) {
  return ReadArtifactsOfStage(writer_.get(), stage_id);
}

}  // namespace longhaul::store
