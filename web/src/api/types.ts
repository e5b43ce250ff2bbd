// The longhaul.v1 messages as the UI uses them. The server prints int64 fields as JSON
// strings (MessageToJsonString); convert.ts turns them into numbers, so every field here is a
// plain number. Names follow the .proto (snake_case), as the server prints them.

export type RunStatus =
  | "RUN_STATUS_UNSPECIFIED" | "RUN_PENDING" | "RUN_RUNNING" | "RUN_SUCCEEDED"
  | "RUN_FAILED" | "RUN_CANCELLED";

export type StageStatus =
  | "STAGE_STATUS_UNSPECIFIED" | "STAGE_WAITING" | "STAGE_READY" | "STAGE_RUNNING"
  | "STAGE_SUCCEEDED" | "STAGE_FAILED" | "STAGE_CANCELLED" | "STAGE_CACHED" | "STAGE_SKIPPED"
  | "STAGE_STARTING" | "STAGE_SERVING" | "STAGE_STOPPED" | "STAGE_STOPPED_EARLY";

export type AttemptState =
  | "ATTEMPT_STATE_UNSPECIFIED" | "ATTEMPT_STARTING" | "ATTEMPT_RUNNING" | "ATTEMPT_EXITED"
  | "ATTEMPT_KILLED" | "ATTEMPT_UNKNOWN" | "ATTEMPT_LOST";

export type AgentState =
  | "AGENT_STATE_UNSPECIFIED" | "AGENT_CONNECTED" | "AGENT_UNREACHABLE"
  | "AGENT_DISCONNECTED" | "AGENT_LOST";

export interface Resources { cpus: number; memory_bytes: number; gpus: number }

export interface Progress {
  done: number; total: number; unit: string; rate: number; eta_seconds: number;
  updated_at_ms: number;
}

export interface Metric { name: string; value: number; step: number; attempt: number; ts_ms: number }

export interface Artifact {
  name: string; path: string; bytes: number; agent_id: string; attempt: number;
}

export interface Attempt {
  id: number; number: number; agent_id: string; state: AttemptState; reason: string;
  exit_code: number; signal: number; created_at_ms: number; started_at_ms: number;
  ended_at_ms: number; output_dir: string; events: number; malformed_events: number;
  checkpoint: string; checkpoint_step: number; pid: number; argv: string[];
  /** When its stage became ready before it was made (0: not recorded); the GPU indices it held. */
  ready_at_ms: number; gpus: number[];
  /** What it ran on, as its agent saw it at the start; null when not recorded. */
  environment: AttemptEnvironment | null;
}

export interface AttemptEnvironment {
  agent_version: string; executable: string; executable_path: string; executable_sha256: string;
  engine_profile: string; engine_version: string; notes: string[];
}

/** The workflow file's git work tree at submission; kind "" when nothing was recorded. */
export interface SourceState {
  kind: string; root: string; commit: string; branch: string; dirty: boolean;
  diff_sha256: string; diff_bytes: number; diff: string; diff_truncated: boolean; note: string;
}

export interface Stage {
  name: string; kind: string; status: StageStatus; needs: string[]; reason: string;
  attempt_count: number; started_at_ms: number; ended_at_ms: number;
  progress: Progress | null; last_message: string; last_message_level: string;
  outputs: Record<string, string>; cache_key: string; cached_from_run_id: number;
  cached_from_stage: string; next_retry_at_ms: number; attempts: Attempt[];
  metrics: Metric[]; artifacts: Artifact[]; resources: Resources | null; agent_id: string;
  malformed_events: number; last_malformed: string; plan_action: string; plan_reason: string;
  description: string; fingerprint: string; wall_seconds: number; gpu_hours: number;
  /** What its attempts' GPUs did (GET /runs/{id}); null without telemetry, or from the stream. */
  gpu_usage: GpuUsage | null;
}

export interface Run {
  id: number; workflow_name: string; workflow_hash: string; description: string;
  status: RunStatus; params: Record<string, string>; parent_run_id: number;
  created_at_ms: number; started_at_ms: number; ended_at_ms: number; reason: string;
  no_cache: boolean; stages: Stage[]; workflow_path: string;
  stage_counts: Record<string, number>; summary_metrics: Record<string, number>;
  wall_seconds: number; gpu_hours: number;
  /** What its GPUs did (GET /runs/{id}); null without telemetry, or from the live stream. */
  gpu_usage: GpuUsage | null;
  /** Set when the answer holds only the first page of the run's stages (GET /runs/{id}). */
  next_stage_page_token: string;
  source: SourceState | null;
  /** What early stopping saved its sweeps (GET /runs/{id}); null when nothing to say. */
  early_stop_saving: EarlyStopSaving | null;
  /** Who submitted it ("" for runs from before this was kept), their team, its priority class. */
  user: string; team: string; priority: string;
  /** Its GPU-hour budget (docs/scheduling.md); null when it has none. */
  budget: RunBudget | null;
  /** GET /runs/{id}: the tags on its stages, and what its ${tags.*} references resolved to. */
  tags: RunTag[]; tag_uses: TagUse[];
  /** When a team's or workflow's budget pauses it, why ("team vision's budget of 500 GPU-h
   * for 30d reached (501 used)"); "" otherwise. */
  budget_hold: string;
}

/** A name for one stage's result (docs/workflow-format.md, "Tags"). */
export interface RunTag {
  name: string; run_id: number; stage: string; attempt_id: number; set_by: string;
  set_at_ms: number;
}

/** One ${tags.*} reference of a run as its submission resolved it. */
export interface TagUse { tag: string; key: string; value: string; run_id: number; stage: string }

export interface RunBudget {
  gpu_hours: number; hard: boolean; used_gpu_hours: number; reached: boolean; raised_by: string;
}

/** An estimate of the work the stopped sweep items did not do (docs/sweeps.md). */
export interface EarlyStopSaving {
  stopped_items: number; wall_seconds: number; gpu_hours: number; percent: number;
}

export interface ListRunsResponse { runs: Run[]; next_page_token: string }

export interface RunUpdate { run: Run; snapshot: boolean }

/** One sample of a GPU as its agent last sent it; null: a figure the GPU does not report. */
export interface GpuReading {
  ts_ms: number; sm_util_pct: number | null; mem_util_pct: number | null;
  mem_used_bytes: number | null; mem_total_bytes: number | null; power_watts: number | null;
  temperature_c: number | null; healthy: boolean; fault: string; lost: boolean;
}

export type GpuHealth = "ok" | "quarantined" | "drained";

export interface GpuInfo {
  index: number; name: string; memory_bytes: number; attempt_id: number; run_id: number;
  stage: string; uuid: string;
  /** "quarantined" (a fault) and "drained" (an operator) are not offered to attempts. */
  health: GpuHealth; health_reason: string; health_since_ms: number;
  reading: GpuReading | null;
}

/** A stretch of one GPU's telemetry; -1: not known. */
export interface GpuPoint {
  t_ms: number; span_ms: number; sm_util: number; mem_util: number; mem_used_max: number;
  mem_total: number; power_w: number; temp_max: number; idle_ms: number;
}

export interface GpuUsage {
  sampled_gpu_hours: number; mean_sm_util_pct: number; peak_mem_used_bytes: number;
  mem_total_bytes: number; energy_kwh: number; idle_gpu_hours: number;
}

/** One attempt's series of one GPU. */
export interface AttemptGpuSeries {
  attempt: number; attempt_id: number; gpu_index: number; uuid: string; agent_id: string;
  points: GpuPoint[]; summary: GpuUsage;
}

export interface StageGpus { series: AttemptGpuSeries[]; summary: GpuUsage }

export interface AgentInfo {
  id: string; hostname: string; total: Resources | null; free: Resources | null;
  state: AgentState; last_seen_ms: number; connected_at_ms: number; running_attempts: number;
  labels: Record<string, string>; version: string; executor: string; gpus: GpuInfo[];
  /** Its state dir is full, as it last reported; state_free_bytes: free there then. */
  disk_full: boolean; state_free_bytes: number;
  /** Its --shared-path prefixes: outputs under them may be read from other agents. */
  shared_paths: string[];
  /** Its maintenance window (`longhaul agent drain`), null when none (docs/scheduling.md). */
  drain: AgentDrain | null;
}

/** From at_ms on the agent runs nothing; before, only attempts that end by then start there. */
export interface AgentDrain { at_ms: number; reason: string; by: string; set_at_ms: number }

export interface PlanEntry {
  stage: string; action: string; reason: string; cache_key: string; reuse_run_id: number;
  reuse_stage: string; saved_wall_seconds: number; saved_gpu_hours: number;
}

/** A param the workflow declares, with its default as written and the line declaring it. */
export interface DeclaredParam { name: string; default_value: string; line: number }

export interface SubmitRunResponse {
  run: Run | null; plan: PlanEntry[];
  /** The workflow's declared params in file order, and its name (dry runs and submissions). */
  declared_params: DeclaredParam[]; workflow_name: string;
}

/** POST /runs: a workflow file's text with --set values (docs/http-api.md). */
export interface SubmitRequest {
  workflow_text: string; workflow_path: string; params: Record<string, string>;
  dry_run: boolean; no_cache: boolean; submission_id?: string;
}

/** The GPU-hour budget of a team's or a workflow name's runs per period (GET /budgets). */
export interface ScopeBudget {
  scope: string; name: string; gpu_hours: number; hard: boolean; period_ms: number;
  period_start_ms: number; used_gpu_hours: number; reached: boolean; set_by: string;
  set_at_ms: number;
  /** The active runs it pauses now. */
  paused_runs: number[];
}

/** POST /budgets: sets a team's or workflow's budget; period_ms 0 keeps its period. */
export interface SetBudgetRequest {
  scope: string; name: string; gpu_hours: number; period_ms: number; hard: boolean;
}

/** GET /whoami: the caller's token name and role, and what the role allows. */
export interface WhoAmI { name: string; role: string; can_submit: boolean; can_admin: boolean }

export interface MetricPage { points: Metric[]; next_cursor: string }

export interface LogChunk {
  text: Uint8Array; offset: number; next_offset: number; finished: boolean; attempt: number;
}

/** One line a log search found: the byte offset where it starts, and its text (raw, at most
 * 1,000 bytes: `truncated` says it was cut). */
export interface LogMatch { offset: number; line: string; truncated: boolean }

/** A log search's answer (docs/http-api.md, "Searching a log"). */
export interface LogSearchResult {
  matches: LogMatch[];
  more: boolean; // more matches follow: search on from next_offset
  next_offset: number;
  searched_bytes: number;
  end_offset: number; // the log's length when searched
  finished: boolean;
  attempt: number;
}

export interface PivotRequest {
  params: Record<string, string>; from_stage: string; dry_run: boolean; no_cache: boolean;
}

/** One mutation in the audit trail (who, what, when, from where, how it ended). */
export interface AuditEntry {
  id: number; ts_ms: number; principal: string; role: string; peer: string; action: string;
  target: string; detail: string; result: string;
}

/** One run's points of one metric (GET /metric-series): columns, thinned to at most `points`. */
export interface MetricSeries {
  run_id: number; steps: number[]; values: Array<number | null>; ts_ms: number[];
  total_points: number; thinned: boolean; truncated: boolean;
  /** Over every point stored (read), thinned or not; null when it has none. */
  last: number | null; min: number | null; max: number | null;
  /** Why the run has no series (no such run, or no such stage in it); "" otherwise. */
  error: string;
}

export interface MetricSeriesResponse { metric: string; points: number; series: MetricSeries[] }
/** A foreach stage of a run as a sweep (GET /runs/{id}/sweeps/{stage}, docs/http-api.md). */
export interface SweepItem {
  stage: string;
  params: Array<{ key: string; value: string }>;
  absent: boolean; // not in the run
  status: StageStatus;
  reason: string;
  final: number | null;
  best: number | null;
  steps: number | null;
  wall_seconds: number;
  gpu_hours: number;
  started_at_ms: number;
  series: Array<{ step: number; value: number }>;
  /** Stopped by the early_stop rule: the step (asha: the rung) and its value there. */
  stopped_at_step: number | null;
  stopped_value: number | null;
}

export interface Sweep {
  run_id: number;
  sweep: string;
  metric: string;
  maximize: boolean;
  keys: string[];
  items: SweepItem[];
  early_stop: { rule: string; metric: string; rungs: number[]; eta: number; min_items: number } | null;
  metrics: string[];
}

/** Where a stage's result came from and where it went (GET .../stages/{stage}/lineage). */
export interface LineageOrigin { run_id: number; stage: string; attempt: number; how: string }
export interface Lineage {
  run_id: number;
  stage: string;
  status: StageStatus;
  workflow_name: string;
  made_by: LineageOrigin;
  inputs: Array<{ needs: string; made_by: LineageOrigin }>;
  used_by: Array<{ run_id: number; stage: string; how: string; status: StageStatus; produced: string[] }>;
  runs_looked_at: number;
  more_runs: boolean;
}
