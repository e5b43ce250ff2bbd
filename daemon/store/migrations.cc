#include "daemon/store/migrations.h"

#include <vector>

#include "core/strings.h"
#include "daemon/store/query.h"

namespace longhaul::store {
namespace {

// Append only: a released migration never changes.
const std::vector<const char*>& Migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: the first schema.
      R"sql(
CREATE TABLE workflows (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  text TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  workflow_id INTEGER NOT NULL REFERENCES workflows(id),
  workflow_name TEXT NOT NULL,
  workflow_path TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}',
  overrides_json TEXT NOT NULL DEFAULT '{}',
  parent_run_id INTEGER REFERENCES runs(id),
  from_stage TEXT NOT NULL DEFAULT '',
  no_cache INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  created_at_ms INTEGER NOT NULL,
  started_at_ms INTEGER,
  ended_at_ms INTEGER
);
CREATE INDEX runs_by_status ON runs(status, id);
CREATE INDEX runs_by_workflow ON runs(workflow_name, id);
CREATE TABLE stages (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  attempt_count INTEGER NOT NULL DEFAULT 0,
  retries_used INTEGER NOT NULL DEFAULT 0,
  cache_key TEXT NOT NULL DEFAULT '',
  fingerprint_json TEXT NOT NULL DEFAULT '{}',
  cached_from_stage_id INTEGER REFERENCES stages(id),
  outputs_json TEXT NOT NULL DEFAULT '{}',
  progress_json TEXT,
  last_message TEXT NOT NULL DEFAULT '',
  last_message_level TEXT NOT NULL DEFAULT '',
  next_retry_at_ms INTEGER,
  checkpoint TEXT NOT NULL DEFAULT '',
  checkpoint_step INTEGER,
  started_at_ms INTEGER,
  ended_at_ms INTEGER,
  agent_id TEXT NOT NULL DEFAULT '',
  malformed INTEGER NOT NULL DEFAULT 0,
  last_malformed TEXT NOT NULL DEFAULT '',
  needs_json TEXT NOT NULL DEFAULT '[]',
  resources_json TEXT NOT NULL DEFAULT '{}',
  plan_action TEXT NOT NULL DEFAULT '',
  plan_reason TEXT NOT NULL DEFAULT '',
  UNIQUE(run_id, name)
);
CREATE INDEX stages_by_cache_key ON stages(cache_key, status);
CREATE TABLE attempts (
  id INTEGER PRIMARY KEY,
  stage_id INTEGER NOT NULL REFERENCES stages(id),
  run_id INTEGER NOT NULL REFERENCES runs(id),
  number INTEGER NOT NULL,
  agent_id TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  exit_code INTEGER,
  signal INTEGER,
  pid INTEGER,
  output_dir TEXT NOT NULL DEFAULT '',
  start_blob BLOB,
  created_at_ms INTEGER NOT NULL,
  started_at_ms INTEGER,
  ended_at_ms INTEGER,
  events INTEGER NOT NULL DEFAULT 0,
  malformed INTEGER NOT NULL DEFAULT 0,
  last_malformed TEXT NOT NULL DEFAULT '',
  UNIQUE(stage_id, number)
);
CREATE INDEX attempts_by_run ON attempts(run_id);
CREATE TABLE events (
  attempt_id INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  ts_ms INTEGER NOT NULL,
  type TEXT NOT NULL,
  line TEXT NOT NULL,
  PRIMARY KEY (attempt_id, seq)
) WITHOUT ROWID;
CREATE TABLE metrics (
  id INTEGER PRIMARY KEY,
  stage_id INTEGER NOT NULL REFERENCES stages(id),
  attempt_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  name TEXT NOT NULL,
  step INTEGER,
  value REAL NOT NULL,
  ts_ms INTEGER NOT NULL
);
CREATE INDEX metrics_by_stage ON metrics(stage_id, name, id);
CREATE TABLE artifacts (
  id INTEGER PRIMARY KEY,
  stage_id INTEGER NOT NULL REFERENCES stages(id),
  attempt_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  bytes INTEGER,
  agent_id TEXT NOT NULL,
  ts_ms INTEGER NOT NULL
);
CREATE INDEX artifacts_by_stage ON artifacts(stage_id);
CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  hostname TEXT NOT NULL DEFAULT '',
  resources_blob BLOB,
  labels_json TEXT NOT NULL DEFAULT '{}',
  version TEXT NOT NULL DEFAULT '',
  executor TEXT NOT NULL DEFAULT '',
  data_dir TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  connected_at_ms INTEGER NOT NULL DEFAULT 0
);
)sql",
      // 2: the workflow's and each stage's description, shown by `longhaul show`.
      R"sql(
ALTER TABLE runs ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE stages ADD COLUMN description TEXT NOT NULL DEFAULT '';
)sql",
      // 3: the audit trail of the client API's mutations (who, what, when, from where).
      R"sql(
CREATE TABLE audit (
  id INTEGER PRIMARY KEY,
  ts_ms INTEGER NOT NULL,
  principal TEXT NOT NULL,
  role TEXT NOT NULL,
  peer TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT '',
  result TEXT NOT NULL
);
)sql",
      // 4: what the status UI lists and pages by: stage counts per run from the index alone,
      // metric points in stored order per stage, a run's pivots.
      R"sql(
CREATE INDEX stages_by_run_status ON stages(run_id, status);
CREATE INDEX metrics_by_stage_id ON metrics(stage_id, id);
CREATE INDEX runs_by_parent ON runs(parent_run_id, id);
)sql",
      // 5: a store of many runs: a page of runs filtered by workflow and status together from
      // one index.
      R"sql(
CREATE INDEX runs_by_workflow_status ON runs(workflow_name, status, id);
  )sql",
      // 6: a run's stages a page at a time, in topological order (GetRun, ListStages).
      R"sql(
CREATE INDEX stages_by_run_position ON stages(run_id, position);
)sql",
      // 7: retries after infrastructure failures, counted apart from the stage's own.
      R"sql(
ALTER TABLE stages ADD COLUMN infra_retries_used INTEGER NOT NULL DEFAULT 0;
)sql",
      // 8: retention: when a run's logs, outputs and events were removed (its summary stays),
      // and the stages that reused each stage's result, found without a scan.
      R"sql(
ALTER TABLE runs ADD COLUMN collected_at_ms INTEGER;
CREATE INDEX stages_by_cached_from ON stages(cached_from_stage_id)
  WHERE cached_from_stage_id IS NOT NULL;
)sql",
      // 9: notifications (docs/operations.md, "Notifications"): one row per event and sink,
      // with its delivery state; pending ones are found by their next try at start.
      R"sql(
CREATE TABLE notifications (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  run_id INTEGER,
  stage TEXT NOT NULL DEFAULT '',
  sink TEXT NOT NULL,
  payload TEXT NOT NULL,
  state TEXT NOT NULL,
  tries INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  next_try_at INTEGER,
  created_at INTEGER NOT NULL,
  delivered_at INTEGER
);
CREATE INDEX notifications_by_state ON notifications(state, id);
CREATE INDEX notifications_by_run ON notifications(run_id, id);
)sql",
      // 10: the path prefixes each agent shares with others (--shared-path), for placement
      // by locality after a restart, before the agent says them again.
      R"sql(
ALTER TABLE agents ADD COLUMN shared_paths_json TEXT NOT NULL DEFAULT '[]';
)sql",
      // 11: the cache index holds only the stages a cache hit can be (their result made,
      // newest first by id), so a submission's rows and each status change of a waiting,
      // ready or running stage do not write it; a lookup is one seek and no sort.
      R"sql(
DROP INDEX stages_by_cache_key;
CREATE INDEX stages_by_cache_hit ON stages(cache_key, id)
  WHERE status IN ('succeeded', 'stopped');
)sql",
      // 12: each run's totals (RunTotals: stages per status, GPU milliseconds), kept by the
      // scheduler, so that listing runs and a run's header read one row, not every stage and
      // attempt of the run. Filled here for the runs already stored: the stages are read once,
      // the attempts only of stages with GPUs (CROSS JOIN keeps that order).
      R"sql(
ALTER TABLE runs ADD COLUMN stage_counts_json TEXT;
ALTER TABLE runs ADD COLUMN gpu_ms_ended INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN gpus_running INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN gpu_start_ms_running INTEGER NOT NULL DEFAULT 0;
CREATE TEMP TABLE run_gpus (run_id INTEGER PRIMARY KEY, ended_ms, running, start_ms);
INSERT INTO run_gpus
  SELECT a.run_id,
         sum(CASE WHEN a.ended_at_ms IS NULL THEN 0
             ELSE (max(a.ended_at_ms, a.started_at_ms) - a.started_at_ms) * g.gpus END),
         sum(CASE WHEN a.ended_at_ms IS NULL THEN g.gpus ELSE 0 END),
         sum(CASE WHEN a.ended_at_ms IS NULL THEN a.started_at_ms * g.gpus ELSE 0 END)
  FROM (SELECT id, coalesce(json_extract(resources_json, '$.gpus'), 0) AS gpus FROM stages) g
  CROSS JOIN attempts a ON a.stage_id = g.id
  WHERE g.gpus > 0 AND a.started_at_ms IS NOT NULL GROUP BY a.run_id;
UPDATE runs SET
  stage_counts_json = (SELECT json_group_object(status, n) FROM
      (SELECT status, count(*) AS n FROM stages WHERE run_id = runs.id GROUP BY status)),
  gpu_ms_ended = coalesce((SELECT ended_ms FROM run_gpus WHERE run_id = runs.id), 0),
  gpus_running = coalesce((SELECT running FROM run_gpus WHERE run_id = runs.id), 0),
  gpu_start_ms_running = coalesce((SELECT start_ms FROM run_gpus WHERE run_id = runs.id), 0);
DROP TABLE run_gpus;
)sql",
      // 13: the store's identity (docs/coordinator.md, "Identity"): the cluster id, random and
      // made once, which agents remember and check; the incarnation, new whenever a backup copy
      // is put in place (copied_at_ms is set in a copy by BackupDatabase, cleared at its first
      // open). One row.
      R"sql(
CREATE TABLE identity (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  cluster_id TEXT NOT NULL,
  incarnation TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  copied_at_ms INTEGER
);
INSERT INTO identity(one, cluster_id, incarnation, created_at_ms)
  VALUES (1, lower(hex(randomblob(16))), lower(hex(randomblob(8))),
          CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
)sql",
      // 14: GPUs (docs/gpus.md). Each agent's GPUs the coordinator holds out of service
      // (quarantined by a fault, drained by an operator) or has seen, and each attempt's GPU
      // telemetry: one row per attempt and GPU, its series downsampled to a bounded size.
      R"sql(
CREATE TABLE gpus (
  agent_id TEXT NOT NULL,
  gpu_index INTEGER NOT NULL,
  uuid TEXT NOT NULL DEFAULT '',
  health TEXT NOT NULL DEFAULT 'ok',
  reason TEXT NOT NULL DEFAULT '',
  since_ms INTEGER NOT NULL DEFAULT 0,
  by_whom TEXT NOT NULL DEFAULT '',
  passes INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, gpu_index)
);
CREATE TABLE gpu_series (
  attempt_id INTEGER NOT NULL,
  gpu_index INTEGER NOT NULL,
  uuid TEXT NOT NULL DEFAULT '',
  series_json TEXT NOT NULL,
  sampled_ms INTEGER NOT NULL DEFAULT 0,
  util_ms REAL NOT NULL DEFAULT 0,
  util_known_ms INTEGER NOT NULL DEFAULT 0,
  peak_mem INTEGER NOT NULL DEFAULT -1,
  mem_total INTEGER NOT NULL DEFAULT -1,
  energy_wh REAL NOT NULL DEFAULT 0,
  idle_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (attempt_id, gpu_index)
);
)sql",
      // Provenance: the workflow file's git work tree at submission (a serialized
      // v1::SourceState), and each attempt's environment as its agent saw it (a serialized
      // v1::AttemptEnvironment; profile, executable and their versions also as columns, so
      // the planner finds the latest for a cache key's key_on).
      R"sql(
CREATE TABLE run_sources (
  run_id INTEGER PRIMARY KEY,
  source BLOB NOT NULL
);
CREATE TABLE attempt_environments (
  attempt_id INTEGER PRIMARY KEY,
  executable TEXT NOT NULL DEFAULT '',
  executable_sha256 TEXT NOT NULL DEFAULT '',
  engine_profile TEXT NOT NULL DEFAULT '',
  engine_version TEXT NOT NULL DEFAULT '',
  environment BLOB NOT NULL
);
CREATE INDEX attempt_environments_by_profile ON attempt_environments(engine_profile, attempt_id);
CREATE INDEX attempt_environments_by_executable ON attempt_environments(executable, attempt_id);
CREATE TABLE agent_engine_versions (
  agent_id TEXT NOT NULL,
  profile TEXT NOT NULL,
  version TEXT NOT NULL,
  checked_at_ms INTEGER NOT NULL,
  PRIMARY KEY (agent_id, profile)
);
)sql",
      // When each attempt's stage last became ready before the attempt was made (the web UI's
      // timeline draws ready -> started as queued time). NULL for attempts made before.
      R"sql(
ALTER TABLE attempts ADD COLUMN ready_at_ms INTEGER;
)sql",
      // 17: sweep items whose early stopping counts an earlier run's stored values as their
      // own (docs/sweeps.md, "Changing the rule"): an item a changed rule resumes or stops
      // at submission, and the stage of the earlier run whose metric values it takes.
      R"sql(
CREATE TABLE stage_judged_from (
  stage_id INTEGER PRIMARY KEY,
  from_stage_id INTEGER NOT NULL
);
)sql",
      // 18: shared GPU nodes (docs/scheduling.md): who submitted a run, their team, its priority
      // class, and its GPU-hour budget (NULL: none) with the last threshold notified.
      R"sql(
ALTER TABLE runs ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN team TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN priority TEXT NOT NULL DEFAULT 'normal';
ALTER TABLE runs ADD COLUMN budget_gpu_hours REAL;
ALTER TABLE runs ADD COLUMN budget_hard INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN budget_raised_by TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN budget_noticed INTEGER NOT NULL DEFAULT 0;
)sql",
      // 19: maintenance windows (docs/scheduling.md, "Maintenance"): an agent drained from
      // at_ms on, by whom and why; the row goes when it is undrained.
      R"sql(
CREATE TABLE agent_drains (
  agent_id TEXT PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  by_whom TEXT NOT NULL DEFAULT '',
  set_at_ms INTEGER NOT NULL
);
)sql",
      // 20: tags (docs/workflow-format.md, "Tags"): a name for one stage's result, who set it
      // and when; and what each run's `${tags.*}` references resolved to at its submission.
      R"sql(
CREATE TABLE tags (
  name TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL,
  stage TEXT NOT NULL,
  stage_id INTEGER NOT NULL,
  attempt_id INTEGER,
  set_by TEXT NOT NULL DEFAULT '',
  set_at_ms INTEGER NOT NULL
);
CREATE INDEX tags_by_run ON tags(run_id);
CREATE TABLE run_tag_uses (
  run_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  tag TEXT NOT NULL,
  value TEXT NOT NULL,
  from_run_id INTEGER NOT NULL,
  from_stage TEXT NOT NULL,
  from_stage_id INTEGER NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX run_tag_uses_by_stage ON run_tag_uses(from_stage_id);
)sql",
      // 21: GPU-hour budgets of a team's or a workflow name's runs, per period
      // (docs/scheduling.md): the period runs from `anchor_ms` in steps of `period_ms`;
      // `noticed` is the last threshold notified in the period that starts at `noticed_period_ms`.
      // A run's `budget_hold`: why such a budget pauses it ("" when none does).
      R"sql(
ALTER TABLE runs ADD COLUMN budget_hold TEXT NOT NULL DEFAULT '';
CREATE TABLE budgets (
  scope TEXT NOT NULL,
  name TEXT NOT NULL,
  gpu_hours REAL NOT NULL,
  hard INTEGER NOT NULL DEFAULT 0,
  period_ms INTEGER NOT NULL,
  anchor_ms INTEGER NOT NULL,
  set_by TEXT NOT NULL DEFAULT '',
  set_at_ms INTEGER NOT NULL,
  noticed INTEGER NOT NULL DEFAULT 0,
  noticed_period_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (scope, name)
);
)sql",
      // 22: reservations (docs/scheduling.md, "Reservations"): `gpus` of an agent's GPUs held for
      // one user or team (`holder_kind` "user" or "team") from from_ms until until_ms. A
      // cancelled one keeps its row, with who cancelled it, when and why.
      R"sql(
CREATE TABLE reservations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  gpus INTEGER NOT NULL,
  holder_kind TEXT NOT NULL,
  holder TEXT NOT NULL,
  from_ms INTEGER NOT NULL,
  until_ms INTEGER NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  by_whom TEXT NOT NULL DEFAULT '',
  set_at_ms INTEGER NOT NULL,
  cancelled_at_ms INTEGER,
  cancelled_by TEXT NOT NULL DEFAULT '',
  cancel_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX reservations_by_until ON reservations(until_ms);
)sql",
      // 23: quotas set at run time (longhaul quota; docs/scheduling.md, "Changing quotas"): the
      // account's whole rule as --quota takes it after the '=', "" for a quota removed (one
      // from --quota stays removed across restarts).
      R"sql(
CREATE TABLE quotas (
  account TEXT PRIMARY KEY,
  rule TEXT NOT NULL,
  set_by TEXT NOT NULL DEFAULT '',
  set_at_ms INTEGER NOT NULL
);
)sql",
      // 24: the stop longhauld asked of an attempt (docs/scheduling.md, "How a preempted attempt
      // stops and comes back"): its kind ("preempted", "drain", "budget", ...), its reason, when
      // it was asked, and for a preemption the waiting stage it makes room for. Written in the
      // batch that sends the stop, so an attempt that ends after a restart still ends as asked.
      // `borrowed`: the scheduler placed it beyond its team's guaranteed GPUs.
      R"sql(
ALTER TABLE attempts ADD COLUMN stop_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE attempts ADD COLUMN stop_at_ms INTEGER;
ALTER TABLE attempts ADD COLUMN stop_for_stage_id INTEGER;
ALTER TABLE attempts ADD COLUMN borrowed INTEGER NOT NULL DEFAULT 0;
)sql",
  };
  return kMigrations;
}

Result<int> UserVersion(Db* db) {
  ASSIGN_OR_RETURN(std::optional<int64_t> v, QueryFirst(db, "PRAGMA user_version", FirstColumnInt));
  return static_cast<int>(v.value_or(0));
}

}  // namespace

int LatestSchemaVersion() { return static_cast<int>(Migrations().size()); }

Status Migrate(Db* db) {
  ASSIGN_OR_RETURN(int current, UserVersion(db));
  int latest = LatestSchemaVersion();
  if (current > latest) {
    return absl::FailedPreconditionError(
        StrCat(db->path(), " has schema version ", current, " but this longhauld knows only up to ",
               latest, "; use a newer longhauld"));
  }
  for (int v = current + 1; v <= latest; ++v) {
    Transaction tx(db);
    RETURN_IF_ERROR(tx.Begin());
    RETURN_IF_ERROR(Annotate(db->Exec(Migrations()[v - 1]), StrCat("migration ", v)));
    RETURN_IF_ERROR(db->Exec(StrCat("PRAGMA user_version=", v)));
    RETURN_IF_ERROR(tx.Commit());
  }
  return OkStatus();
}

}  // namespace longhaul::store
