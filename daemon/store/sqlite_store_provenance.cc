// Provenance: what a run's workflow file came from (run_sources) and what each attempt ran on
// (attempt_environments). docs/cli.md ("show", "compare") and docs/caching.md ("key_on").
#include "core/strings.h"
#include "daemon/store/reader.h"
#include "daemon/store/sqlite_store.h"

namespace longhaul::store {

Status SqliteStore::PutRunSourceState(int64_t run_id, const v1::SourceState& source) {
  ASSIGN_OR_RETURN(Stmt * st, writer_->Prepare("INSERT INTO run_sources(run_id, source) "
                                               "VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE SET "
                                               "source = excluded.source"));
  st->Bind(1, run_id).BindBlob(2, source.SerializeAsString());
  return st->Run();
}

Status SqliteStore::PutAttemptEnvironment(int64_t attempt_id, const v1::AttemptEnvironment& env) {
  ASSIGN_OR_RETURN(
      Stmt * st,
      writer_->Prepare("INSERT INTO attempt_environments(attempt_id, executable, "
                       "executable_sha256, engine_profile, engine_version, environment) VALUES "
                       "(?,?,?,?,?,?) ON CONFLICT(attempt_id) DO UPDATE SET "
                       "executable = excluded.executable, "
                       "executable_sha256 = excluded.executable_sha256, "
                       "engine_profile = excluded.engine_profile, "
                       "engine_version = excluded.engine_version, "
                       "environment = excluded.environment"));
  st->Bind(1, attempt_id)
      .Bind(2, env.executable())
      .Bind(3, env.executable_sha256())
      .Bind(4, env.engine_profile())
      .Bind(5, env.engine_version())
      .BindBlob(6, env.SerializeAsString());
  return st->Run();
}

Status SqliteStore::PutAgentEngineVersion(const std::string& agent_id, const std::string& profile,
                                          const std::string& version, int64_t checked_at_ms) {
  ASSIGN_OR_RETURN(
      Stmt * st, writer_->Prepare("INSERT INTO agent_engine_versions(agent_id, profile, "
                                  "version, checked_at_ms) VALUES (?,?,?,?) ON CONFLICT(agent_id, "
                                  "profile) DO UPDATE SET version = excluded.version, "
                                  "checked_at_ms = excluded.checked_at_ms"));
  st->Bind(1, agent_id).Bind(2, profile).Bind(3, version).Bind(4, checked_at_ms);
  return st->Run();
}

namespace {

// The first column of the newest row `sql` selects with `key` bound, or "".
Result<std::string> ProvenanceLatestText(Db* db, const char* sql, const std::string& key) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare(sql));
  st->Bind(1, key);
  ASSIGN_OR_RETURN(bool found, st->Step());
  std::string out = found ? st->Text(0) : std::string();
  st->Reset();
  return out;
}

}  // namespace

Result<std::string> SqliteStore::LatestEngineVersion(const std::string& profile) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return ProvenanceLatestText(
      db.get(),
      "SELECT v FROM (SELECT e.engine_version AS v, coalesce(a.started_at_ms, a.created_at_ms) "
      "AS t, 1 AS o FROM attempt_environments e JOIN attempts a ON a.id = e.attempt_id WHERE "
      "e.engine_profile = ?1 AND e.engine_version != '' UNION ALL SELECT version, "
      "checked_at_ms, 0 FROM agent_engine_versions WHERE profile = ?1 AND version != '') "
      "ORDER BY t DESC, o DESC LIMIT 1",
      profile);
}

Result<std::string> SqliteStore::LatestExecutableSha256(const std::string& executable) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  return ProvenanceLatestText(db.get(),
                              "SELECT executable_sha256 FROM attempt_environments WHERE "
                              "executable = ? AND executable_sha256 != '' ORDER BY attempt_id "
                              "DESC LIMIT 1",
                              executable);
}

Result<v1::AttemptEnvironment> SqliteStore::StageEnvironment(int64_t stage_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  ASSIGN_OR_RETURN(Stmt * st,
                   db->Prepare("SELECT a.id FROM attempts a JOIN attempt_environments e ON "
                               "e.attempt_id = a.id WHERE a.stage_id = ? ORDER BY a.number DESC "
                               "LIMIT 1"));
  st->Bind(1, stage_id);
  ASSIGN_OR_RETURN(bool found, st->Step());
  int64_t attempt_id = found ? st->Int(0) : 0;
  st->Reset();
  v1::Attempt attempt;
  if (attempt_id > 0) {
    RETURN_IF_ERROR(internal::FillAttemptEnvironment(db.get(), attempt_id, &attempt));
  }
  return attempt.environment();
}

Result<v1::SourceState> SqliteStore::GetRunSourceState(int64_t run_id) {
  Reader db(this);
  RETURN_IF_ERROR(db.Acquire());
  v1::Run run;
  RETURN_IF_ERROR(internal::FillRunSourceState(db.get(), run_id, &run));
  return run.source();
}

namespace internal {

Status FillRunSourceState(Db* db, int64_t run_id, v1::Run* run) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare("SELECT source FROM run_sources WHERE run_id = ?"));
  st->Bind(1, run_id);
  ASSIGN_OR_RETURN(bool found, st->Step());
  Status out = OkStatus();
  if (found && !run->mutable_source()->ParseFromString(st->Blob(0))) {
    out = absl::DataLossError(StrCat("run ", run_id, ": its recorded source state is unreadable"));
  }
  st->Reset();
  return out;
}

Status FillAttemptEnvironment(Db* db, int64_t attempt_id, v1::Attempt* attempt) {
  ASSIGN_OR_RETURN(Stmt * st, db->Prepare("SELECT environment FROM attempt_environments WHERE "
                                          "attempt_id = ?"));
  st->Bind(1, attempt_id);
  ASSIGN_OR_RETURN(bool found, st->Step());
  Status out = OkStatus();
  if (found && !attempt->mutable_environment()->ParseFromString(st->Blob(0))) {
    out = absl::DataLossError(
        StrCat("attempt ", attempt_id, ": its recorded environment is unreadable"));
  }
  st->Reset();
  return out;
}

}  // namespace internal
}  // namespace longhaul::store
