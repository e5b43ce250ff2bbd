// The coordinator's store: every run, stage, attempt, event, metric, artifact and agent, in
// one SQLite file (WAL mode).
//
// Threading: the write methods and the Load* recovery reads use the writer connection and must
// be called from one thread only (the scheduler loop), between Begin() and Commit(). The Get*/
// List*/Find* client reads may be called from any thread; they use a pool of read-only
// connections and see the last committed state.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/memory_policy.h"
#include "core/status.h"
#include "daemon/store/rows.h"
#include "daemon/store/sqlite.h"
#include "longhaul/v1/client.pb.h"
#include "longhaul/v1/types.pb.h"

namespace longhaul::store {

// Who the store is (docs/coordinator.md, "Identity"): read at Open.
struct StoreIdentity {
  std::string cluster_id;   // random, made when the store was created; backups keep it
  std::string incarnation;  // random; new at the first open of a backup copy put in place
  int64_t created_at_ms = 0;
  bool created = false;       // this Open created the database file
  std::string restored_from;  // set when this Open found a backup copy: the old incarnation
  int64_t copied_at_ms = 0;   // with restored_from: when the copy was taken
};

// A tag: a name for one stage's result (docs/workflow-format.md, "Tags").
struct TagRow {
  std::string name;
  int64_t run_id = 0;
  std::string stage;
  int64_t stage_id = 0;
  std::optional<int64_t> attempt_id;  // the attempt that made the outputs; none for a cached stage
                                      // whose outputs an earlier run's stage made
  std::string set_by;
  int64_t set_at_ms = 0;
};

// A tag as a submission resolves it: the row and the tagged stage's recorded outputs.
struct TagTarget {
  TagRow tag;
  std::map<std::string, std::string> outputs;
};

// What one `${tags.*}` reference of a run resolved to at its submission.
struct TagUseRow {
  std::string key;  // "TAG.outputs.NAME" or "TAG.run"
  std::string tag;
  std::string value;
  int64_t from_run_id = 0;
  std::string from_stage;
  int64_t from_stage_id = 0;
};

class SqliteStore {
 public:
  // Opens or creates the database at `path` and applies migrations. A database that is a
  // backup copy (BackupDatabase marks its copies) gets a new incarnation here.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path);
  ~SqliteStore();

  const std::string& path() const { return path_; }
  const StoreIdentity& identity() const { return identity_; }

  // The database file must stay the one Open opened: Begin() compares the device and inode at
  // `path` with the open file's and, once they differ (the file was removed, or replaced by
  // another), fails this and every later Begin() with DataLoss naming the path, so nothing is
  // written into a file nobody will read again. Logged once. Thread-safe.
  Status FileCheck() const;

  // Attempt ids given from now on are above `highest` (an id an agent already used; see
  // docs/architecture.md, "Identifiers"). Kept in memory: agents say it again at each Hello.
  void RaiseAttemptIds(int64_t highest);

  // The write-ahead log is copied back into the database file by CheckpointIfDue, outside
  // any transaction, not inside the commit that grew it past this many pages, as SQLite's
  // automatic checkpoint would: the commit's callers (a 100,000-stage submission copied some
  // 70 MB back before it could answer) get their answers first. The writer is the only one
  // that writes, so nothing is appended while it copies and the log starts over at the next
  // write (a checkpoint on another thread would race the writer and let the log grow without
  // bound under a steady load).
  static constexpr int kCheckpointFrames = 1000;  // SQLite's own default
  // How many checkpoints the writer has run.
  int64_t checkpoints() const { return checkpoints_; }
  // Copies the log back now if the last commit left it past kCheckpointFrames (outside a
  // transaction; Begin calls it too). The scheduler loop calls it once a batch's callers have
  // their answers.
  void CheckpointIfDue();

  // --- writer: one thread, inside a transaction ---
  Status Begin();
  Status Commit();
  void Rollback();
  bool in_transaction() const { return in_tx_; }
  // Nested undo points inside the transaction: a failed client call undoes its own writes
  // without losing the rest of the batch.
  Status Savepoint(const std::string& name);
  Status ReleaseSavepoint(const std::string& name);
  void RollbackToSavepoint(const std::string& name);

  // Returns the id of the workflow text with this hash, storing it if new.
  Result<int64_t> PutWorkflow(const std::string& name, const std::string& text,
                              const std::string& hash, int64_t now_ms);
  Status InsertRun(RunRow* run);  // sets run->id
  Status UpdateRun(const RunRow& run);
  Status UpdateRunTotals(int64_t run_id, const RunTotals& totals);
  // Every attempt of a GPU stage that ended at or after `since_ms`, with its run's user and
  // team, from its creation (its placement) to its end (sqlite_store_usage.cc).
  Result<std::vector<GpuUsageRow>> LoadGpuUsage(int64_t since_ms);
  // The run's budget_* fields (InsertRun writes them too).
  Status UpdateRunBudget(const RunRow& run);
  // The run's priority class (changed after submission).
  Status UpdateRunPriority(int64_t run_id, const std::string& priority);
  // Budgets of teams and workflow names (sqlite_store_budgets.cc): written whole, keyed by
  // scope and name; every one, by scope and name; and the GPU-milliseconds of the ended
  // attempts of the scope's runs from `since_ms` on (an attempt that began before counts from
  // since_ms), the figure of `gpu-hours` for the part of each attempt in the period.
  Status PutScopeBudget(const ScopeBudgetRow& row);
  Result<std::vector<ScopeBudgetRow>> LoadScopeBudgets();
  Result<int64_t> ScopeEndedGpuMs(const std::string& scope, const std::string& name,
                                  int64_t since_ms);
  // Removes a scope budget; NotFound when there is none (sqlite_store_budgets.cc).
  Status DeleteScopeBudget(const std::string& scope, const std::string& name);
  // Quotas set at run time (sqlite_store_quotas.cc): written whole, keyed by account; every
  // one, by account.
  Status PutQuota(const QuotaRow& row);
  Result<std::vector<QuotaRow>> LoadQuotas();
  Status InsertStage(StageRow* stage);  // sets stage->id
  // Writes what changes while a run goes on (status, reason, counters, outputs, progress,
  // messages, retry and checkpoint, times, agent); what the submission decided (name, kind,
  // position, cache key, fingerprint, needs, resources, plan, description) stays as inserted.
  Status UpdateStage(const StageRow& stage);
  Status InsertAttempt(AttemptRow* attempt);  // sets attempt->id
  Status UpdateAttempt(const AttemptRow& attempt);
  // Stores the event unless (attempt_id, seq) is already there; returns whether it was new.
  Result<bool> InsertEvent(int64_t attempt_id, const EventRow& event);
  Status InsertMetric(const MetricRow& metric);
  Status InsertArtifact(const ArtifactRow& artifact);
  Status UpsertAgent(const AgentRow& agent);
  // GPUs (sqlite_store_gpus.cc).
  Status UpsertGpu(const GpuRow& gpu);
  Result<std::vector<GpuRow>> LoadGpus();
  Status UpsertGpuSeries(const GpuSeriesRow& row);
  // The telemetry rows of a run's attempts (of `stage` only, when not empty), by attempt id
  // and GPU. Any thread (reader connection).
  Result<std::vector<GpuSeriesRow>> ListGpuSeries(int64_t run_id, const std::string& stage);
  // Maintenance windows (sqlite_store_drains.cc): one row per drained agent.
  Status PutAgentDrain(const AgentDrainRow& drain);
  Status DeleteAgentDrain(const std::string& agent_id);
  Result<std::vector<AgentDrainRow>> LoadAgentDrains();
  // Reservations (sqlite_store_reservations.cc): Insert returns the new id; a cancelled one
  // keeps its row. Load: the ones not cancelled that end after `now_ms`, or with `ended_too`
  // every row; by start, then id.
  Result<int64_t> InsertReservation(const ReservationRow& r);
  Status CancelReservation(int64_t id, int64_t at_ms, const std::string& by,
                           const std::string& reason);
  Result<std::vector<ReservationRow>> LoadReservations(bool ended_too, int64_t now_ms);
  // Provenance (sqlite_store_provenance.cc): the workflow file's repository at submission, and
  // an attempt's environment as its agent reported it (replacing what it had).
  Status PutRunSourceState(int64_t run_id, const v1::SourceState& source);
  Status PutAttemptEnvironment(int64_t attempt_id, const v1::AttemptEnvironment& env);
  // An engine version an agent asked at its start (Hello.engine_versions).
  Status PutAgentEngineVersion(const std::string& agent_id, const std::string& profile,
                               const std::string& version, int64_t checked_at_ms);
  // The newest engine version recorded for a profile (by name, as --profile gave it): by an
  // attempt that ran with it (at its start) or by an agent that asked it at its own start,
  // whichever is later; and the newest SHA-256 recorded for an executable (argv[0] as the stage
  // gave it). What the planner compares for `cache: {key_on: [...]}` (docs/caching.md). Empty
  // when none was recorded. Any thread (reader connection).
  Result<std::string> LatestEngineVersion(const std::string& profile);
  Result<std::string> LatestExecutableSha256(const std::string& executable);
  // The environment the newest attempt of stage `stage_id` recorded (an empty message when
  // none did). Any thread.
  Result<v1::AttemptEnvironment> StageEnvironment(int64_t stage_id);
  // The run's recorded source state (an empty message when none). Any thread.
  Result<v1::SourceState> GetRunSourceState(int64_t run_id);
  // Appends to the audit trail (entry.id is assigned by the database).
  Status InsertAudit(const v1::AuditEntry& entry);
  // Notifications (sqlite_store_notify.cc). Insert sets row->id; Update writes the delivery
  // state (state, tries, last_error, next_try_at, delivered_at).
  Status InsertNotification(NotificationRow* row);
  Status UpdateNotification(const NotificationRow& row);

  // --- recovery reads (writer connection) ---
  Result<std::vector<RunRow>> LoadActiveRuns();
  Result<RunRow> LoadRun(int64_t run_id);
  Result<std::vector<StageRow>> LoadStages(int64_t run_id);
  Result<std::vector<AttemptRow>> LoadAttempts(int64_t run_id);
  Result<std::vector<AgentRow>> LoadAgents();
  Result<std::vector<ArtifactRow>> LoadArtifacts(int64_t stage_id);
  // Every stored value of metric `name` of these stages, in the order they were stored: what a
  // sweep's early stopping judges again after a restart (sqlite_store_sweeps.cc).
  Result<std::vector<MetricRow>> LoadMetricOfStages(const std::vector<int64_t>& stage_ids,
                                                    const std::string& name);
  // The same on a reader (any thread): what planning re-judges a sweep with when its rule
  // changed.
  Result<std::vector<MetricRow>> ReadMetricOfStages(const std::vector<int64_t>& stage_ids,
                                                    const std::string& name);
  // Sweep items whose early stopping counts an earlier stage's stored values as their own
  // (docs/sweeps.md, "Changing the rule"): recorded at submission, read when a judge is built.
  Status PutJudgedFrom(int64_t stage_id, int64_t from_stage_id);
  // stage id -> the stage whose values it takes, for those of `stage_ids` that have one.
  Result<std::map<int64_t, int64_t>> LoadJudgedFrom(const std::vector<int64_t>& stage_ids);
  Result<StageRow> LoadStageById(int64_t stage_id);
  // Tags (sqlite_store_tags.cc), writer side: sets (or moves) a tag, removes one (false when
  // there was none), the tag named `name` (nullopt when none), and a run's resolved tag
  // references (recorded at its submission, read back at recovery).
  Status PutTag(const TagRow& tag);
  Result<bool> DeleteTag(const std::string& name);
  Result<std::optional<TagRow>> LoadTag(const std::string& name);
  Status PutTagUses(int64_t run_id, const std::vector<TagUseRow>& uses);
  Result<std::vector<TagUseRow>> LoadTagUses(int64_t run_id);
  // Every notification still pending, oldest first.
  Result<std::vector<NotificationRow>> LoadPendingNotifications();
  // NotFound when there is no such attempt.
  Result<AttemptRow> LoadAttemptById(int64_t attempt_id);

  // --- client reads (any thread) ---
  // The run with every stage (for the coordinator's own use and tests: its size grows with the
  // run's; clients get the paged form below).
  Result<v1::Run> GetRun(int64_t run_id, bool include_attempts);
  // The run, its stage_counts and at most request.stage_limit stages (0: kMaxStagesPerMessage,
  // the most; -1: none), with next_stage_page_token set when more follow. NotFound for an
  // unknown run. (sqlite_store_stages.cc)
  Result<v1::Run> GetRun(const v1::GetRunRequest& request);
  // One page of a run's stages (client.proto, ListStagesRequest); InvalidArgument for a bad
  // page token, NotFound for an unknown run.
  Result<v1::ListStagesResponse> ListStages(const v1::ListStagesRequest& request);
  Result<v1::ListRunsResponse> ListRuns(const v1::ListRunsRequest& request);
  Result<v1::ListEventsResponse> ListEvents(const v1::ListEventsRequest& request);
  // One page of a stage's metric points (a cached stage: those of the stage it reuses), in
  // stored order after the cursor `request.after`; next_cursor is set even on an empty page.
  Result<v1::ListMetricsResponse> ListMetrics(const v1::ListMetricsRequest& request);
  // What a stage cost: wall time over its own attempts (running ones up to now) and that
  // times the GPUs each held. NotFound for an unknown run or stage.
  struct StageCost {
    double wall_seconds = 0;
    double gpu_hours = 0;
  };
  Result<StageCost> GetStageCost(int64_t run_id, const std::string& stage);
  // The most recent stage with this cache key that produced its result itself (succeeded, or a
  // service that stopped), outside `exclude_run_id`, with its outputs and artifacts.
  Result<std::optional<CacheHit>> FindCacheHit(const std::string& cache_key,
                                               int64_t exclude_run_id);
  // FindCacheHit for each key (out[i] answers cache_keys[i]; an empty key is nullopt), on one
  // connection in one read transaction, so every answer sees the same committed state.
  Result<std::vector<std::optional<CacheHit>>> FindCacheHits(
      const std::vector<std::string_view>& cache_keys, int64_t exclude_run_id);
  // A run's stages as planning compares with them: id, name and cache key, in position order
  // (the fingerprint only on demand, ReadFingerprintJson: most keys match).
  struct StageKey {
    int64_t id = 0;
    std::string name;
    std::string cache_key;
  };
  Result<std::vector<StageKey>> ReadStageKeys(int64_t run_id);
  // The stored fingerprint JSON of each stage id (out[i] for stage_ids[i]; nullopt for an id
  // with no stage), in one read transaction.
  Result<std::vector<std::optional<std::string>>> ReadFingerprintJsons(
      const std::vector<int64_t>& stage_ids);
  // What a pivot needs of an earlier run: its workflow text and path, and its --set values.
  struct RunSource {
    std::string workflow_text;
    std::string workflow_path;
    std::string workflow_name;
    std::map<std::string, std::string> overrides;
    std::string priority;  // the run's class (a pivot keeps it)
  };
  Result<RunSource> GetRunSource(int64_t run_id);
  // The newest run of workflow `name` (nullopt when none), for explaining a plan.
  Result<std::optional<int64_t>> LatestRunOf(const std::string& name);
  // Every stage row of a run (any thread).
  Result<std::vector<StageRow>> ReadStages(int64_t run_id);
  // The attempt `number` (0: the latest) of stage `stage` of run `run_id`.
  Result<AttemptRow> FindAttempt(int64_t run_id, const std::string& stage, int number);
  // Every stored value of `metric` of run `run_id`'s stages named `stages` (a reused stage's:
  // those of the stage it reuses), in the order they were stored: a sweep's table and chart, and
  // its early_stop verdicts judged again (sqlite_store_sweeps.cc). Any thread.
  struct SweepValue {
    std::string stage;
    double value = 0;
    std::optional<int64_t> step;
  };
  Result<std::vector<SweepValue>> ReadSweepValues(int64_t run_id,
                                                  const std::vector<std::string>& stages,
                                                  const std::string& metric);
  // Tags, by name: every one, or (run_id > 0) those on run `run_id`'s stages. Any thread.
  Result<std::vector<TagRow>> ListTags(int64_t run_id);
  // The tags named `names` with their stages' outputs; a name with no tag is left out. Any
  // thread.
  Result<std::vector<TagTarget>> ReadTagTargets(const std::vector<std::string>& names);
  // What run `run_id`'s tag references resolved to, by key. Any thread.
  Result<std::vector<TagUseRow>> ReadTagUses(int64_t run_id);
  // The runs whose tag references read stage `stage_id`'s result: (run id, tag), by run.
  Result<std::vector<std::pair<int64_t, std::string>>> ReadTagReaders(int64_t stage_id);
  // The audit trail, newest first: at most request.limit (default 50, at most 1000) entries
  // older than request.before_id (0: from the newest).
  Result<v1::ListAuditResponse> ListAudit(const v1::ListAuditRequest& request);

  // --- retention (sqlite_store_gc.cc) ---
  // Ended runs not yet collected, of workflow `workflow` ("" = every workflow), newest first
  // within each workflow.
  struct EndedRun {
    int64_t id = 0;
    std::string workflow_name;
    v1::RunStatus status = v1::RUN_STATUS_UNSPECIFIED;
    int64_t ended_at_ms = 0;
  };
  Result<std::vector<EndedRun>> ListEndedRuns(const std::string& workflow);
  // For each workflow name with runs (only `workflow`, when it is not ""): the id of the
  // workflow file its newest run was submitted with (whose `retention:` block applies).
  Result<std::map<std::string, int64_t>> NewestWorkflowIds(const std::string& workflow);
  // The text of stored workflow file `workflow_id`; NotFound when there is none.
  Result<std::string> LoadWorkflowText(int64_t workflow_id);
  // What collecting run `run_id` removes: each attempt with its agent and output dir, whether
  // it is kept (the attempt that made the result of a stage the cache would reuse, or that a
  // not-yet-collected run reused), the kept stages with why, and its event rows.
  struct GcAttempt {
    int64_t id = 0;
    std::string stage;
    std::string agent_id;
    std::string output_dir;
    bool keep = false;
  };
  struct GcPlan {
    std::vector<GcAttempt> attempts;
    std::vector<std::string> kept;  // "stage: why"
    int64_t events = 0;
  };
  Result<GcPlan> PlanRunGc(int64_t run_id);
  // Writer: deletes the run's event rows (returns how many) and marks it collected at now_ms.
  Result<int64_t> CollectRun(int64_t run_id, int64_t now_ms);

  // Notifications newest first: at most `limit` (1..1000) of run `run_id` (0: of every run and
  // none), older than `before_id` (0: from the newest).
  Result<std::vector<NotificationRow>> ListNotifications(int64_t run_id, int64_t before_id,
                                                         int limit);

  // Frees what SQLite's page caches hold beyond the pages in use, on the writer and on the idle
  // pooled readers (sqlite3_db_release_memory): after a big run leaves memory, so that its
  // cached pages do not pin the heap pages around them. The writer's caller's thread only.
  void ReleaseMemory();
  // What the idle pooled readers' page caches hold, in bytes. A read that left more than
  // 512 KB in its connection's cache empties it when it ends (daemon/store/reader.h).
  size_t IdleReaderCacheBytes();
  // Told when a read emptied its big cache (MemoryPolicy::AfterBigRead), so that the freed
  // pages go back to the system (not owned; may be null: they stay in malloc's arenas). Call
  // before reads start.
  void set_memory_policy(MemoryPolicy* m) { memory_ = m; }

  // PRAGMA integrity_check; "ok" when healthy.
  Result<std::string> IntegrityCheck();
  // How many runs there are in each status (by its stored name), for /metrics.
  Result<std::map<std::string, int64_t>> CountRunsByStatus();

 private:
  SqliteStore(std::string path, std::unique_ptr<Db> writer)
      : path_(std::move(path)), writer_(std::move(writer)) {}
  // The writer's WAL hook: notes the log's size after each commit.
  static int OnWalCommit(void* self, sqlite3* db, const char* name, int frames);

  class Reader;  // RAII lease of a pooled read connection
  Result<std::unique_ptr<Db>> OpenReader();

  Status LoadIdentity(bool created);
  Status CheckFile();

  std::string path_;
  std::unique_ptr<Db> writer_;
  StoreIdentity identity_;
  dev_t dev_ = 0;  // the database file Open opened
  ino_t ino_ = 0;
  mutable std::mutex file_mu_;
  Status file_lost_;              // guarded by file_mu_; sticky once set
  int64_t attempt_id_floor_ = 0;  // the next attempt id is at least this
  bool in_tx_ = false;
  int wal_frames_ = 0;  // the log's pages after the writer's last commit
  int64_t checkpoints_ = 0;
  std::mutex pool_mu_;
  std::vector<std::unique_ptr<Db>> pool_;  // idle readers
  MemoryPolicy* memory_ = nullptr;
};

}  // namespace longhaul::store
