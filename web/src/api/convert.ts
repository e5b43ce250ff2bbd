// Raw JSON (as longhauld prints it) -> the typed messages of types.ts. int64 fields arrive as
// strings ("123"), absent messages as undefined, and an absent repeated/map field as nothing
// at all when the server omits defaults; every converter fills those in, so views never test
// for undefined except on the optional sub-messages (progress, resources, total, free).
import type {
  AgentInfo, Artifact, Attempt, AttemptEnvironment, AttemptGpuSeries, AuditEntry, GpuHealth, GpuInfo, GpuPoint,
  GpuReading, GpuUsage, ListRunsResponse, Metric, PlanEntry, Progress, Resources, Run,
  RunUpdate, SourceState, Stage, StageGpus, SubmitRunResponse, MetricPage, MetricSeries,
  MetricSeriesResponse, ScopeBudget, Sweep, SweepItem, Lineage, LineageOrigin,
} from "./types";

type Json = Record<string, any>;

/** An int64 (string), int32 or double field as a number; 0 when absent or unparsable. */
export function num(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "string") {
    if (v === "NaN") return NaN;
    if (v === "Infinity") return Infinity;
    if (v === "-Infinity") return -Infinity;
    const n = Number(v);
    return Number.isFinite(n) ? n : 0;
  }
  return 0;
}

const str = (v: unknown): string => (typeof v === "string" ? v : v == null ? "" : String(v));
const arr = <T>(v: unknown, f: (x: Json) => T): T[] => (Array.isArray(v) ? v.map(f) : []);
function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) out[k] = str(x);
  return out;
}
function numMap(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) out[k] = num(x);
  return out;
}

export function toResources(j: Json | undefined): Resources | null {
  if (!j) return null;
  return { cpus: num(j.cpus), memory_bytes: num(j.memory_bytes), gpus: num(j.gpus) };
}

export function toProgress(j: Json | undefined): Progress | null {
  if (!j) return null;
  return {
    done: num(j.done), total: num(j.total), unit: str(j.unit), rate: num(j.rate),
    eta_seconds: j.eta_seconds === undefined ? -1 : num(j.eta_seconds),
    updated_at_ms: num(j.updated_at_ms),
  };
}

export const toMetric = (j: Json): Metric => ({
  name: str(j.name), value: num(j.value), step: num(j.step), attempt: num(j.attempt),
  ts_ms: num(j.ts_ms),
});

export const toArtifact = (j: Json): Artifact => ({
  name: str(j.name), path: str(j.path), bytes: j.bytes === undefined ? -1 : num(j.bytes),
  agent_id: str(j.agent_id), attempt: num(j.attempt),
});

export const toAttempt = (j: Json): Attempt => ({
  id: num(j.id), number: num(j.number), agent_id: str(j.agent_id),
  state: (j.state ?? "ATTEMPT_STATE_UNSPECIFIED") as Attempt["state"], reason: str(j.reason),
  exit_code: num(j.exit_code), signal: num(j.signal), created_at_ms: num(j.created_at_ms),
  started_at_ms: num(j.started_at_ms), ended_at_ms: num(j.ended_at_ms),
  output_dir: str(j.output_dir), events: num(j.events), malformed_events: num(j.malformed_events),
  checkpoint: str(j.checkpoint), checkpoint_step: num(j.checkpoint_step), pid: num(j.pid),
  argv: arr(j.argv, str), environment: toAttemptEnvironment(j.environment),
  ready_at_ms: num(j.ready_at_ms), gpus: Array.isArray(j.gpus) ? j.gpus.map(num) : [],
});

export function toAttemptEnvironment(j: Json | undefined): AttemptEnvironment | null {
  if (!j) return null;
  return {
    agent_version: str(j.agent_version), executable: str(j.executable),
    executable_path: str(j.executable_path), executable_sha256: str(j.executable_sha256),
    engine_profile: str(j.engine_profile), engine_version: str(j.engine_version),
    notes: arr(j.notes, str),
  };
}

export function toSourceState(j: Json | undefined): SourceState | null {
  if (!j) return null;
  return {
    kind: str(j.kind), root: str(j.root), commit: str(j.commit), branch: str(j.branch),
    dirty: !!j.dirty, diff_sha256: str(j.diff_sha256), diff_bytes: num(j.diff_bytes),
    diff: str(j.diff), diff_truncated: !!j.diff_truncated, note: str(j.note),
  };
}

export const toStage = (j: Json): Stage => ({
  name: str(j.name), kind: str(j.kind) || "task",
  status: (j.status ?? "STAGE_STATUS_UNSPECIFIED") as Stage["status"],
  needs: arr(j.needs, str), reason: str(j.reason), attempt_count: num(j.attempt_count),
  started_at_ms: num(j.started_at_ms), ended_at_ms: num(j.ended_at_ms),
  progress: toProgress(j.progress), last_message: str(j.last_message),
  last_message_level: str(j.last_message_level), outputs: strMap(j.outputs),
  cache_key: str(j.cache_key), cached_from_run_id: num(j.cached_from_run_id),
  cached_from_stage: str(j.cached_from_stage), next_retry_at_ms: num(j.next_retry_at_ms),
  attempts: arr(j.attempts, toAttempt), metrics: arr(j.metrics, toMetric),
  artifacts: arr(j.artifacts, toArtifact), resources: toResources(j.resources),
  agent_id: str(j.agent_id), malformed_events: num(j.malformed_events),
  last_malformed: str(j.last_malformed), plan_action: str(j.plan_action),
  plan_reason: str(j.plan_reason), description: str(j.description),
  fingerprint: str(j.fingerprint), wall_seconds: num(j.wall_seconds), gpu_hours: num(j.gpu_hours),
  gpu_usage: j.gpu_usage ? toGpuUsage(j.gpu_usage) : null,
});

export const toRun = (j: Json): Run => ({
  id: num(j.id), workflow_name: str(j.workflow_name), workflow_hash: str(j.workflow_hash),
  description: str(j.description),
  status: (j.status ?? "RUN_STATUS_UNSPECIFIED") as Run["status"], params: strMap(j.params),
  parent_run_id: num(j.parent_run_id), created_at_ms: num(j.created_at_ms),
  started_at_ms: num(j.started_at_ms), ended_at_ms: num(j.ended_at_ms), reason: str(j.reason),
  no_cache: !!j.no_cache, stages: arr(j.stages, toStage), workflow_path: str(j.workflow_path),
  stage_counts: numMap(j.stage_counts), summary_metrics: numMap(j.summary_metrics),
  wall_seconds: num(j.wall_seconds), gpu_hours: num(j.gpu_hours),
  gpu_usage: j.gpu_usage ? toGpuUsage(j.gpu_usage) : null,
  next_stage_page_token: str(j.next_stage_page_token),
  source: toSourceState(j.source),
  early_stop_saving: j.early_stop_saving ? {
    stopped_items: num(j.early_stop_saving.stopped_items),
    wall_seconds: num(j.early_stop_saving.wall_seconds),
    gpu_hours: num(j.early_stop_saving.gpu_hours), percent: num(j.early_stop_saving.percent),
  } : null,
  user: str(j.user), team: str(j.team), priority: str(j.priority) || "normal",
  budget: j.budget ? {
    gpu_hours: num(j.budget.gpu_hours), hard: j.budget.hard === true,
    used_gpu_hours: num(j.budget.used_gpu_hours), reached: j.budget.reached === true,
    raised_by: str(j.budget.raised_by),
  } : null,
  tags: arr(j.tags, (t) => ({
    name: str(t.name), run_id: num(t.run_id), stage: str(t.stage), attempt_id: num(t.attempt_id),
    set_by: str(t.set_by), set_at_ms: num(t.set_at_ms),
  })),
  tag_uses: arr(j.tag_uses, (u) => ({
    tag: str(u.tag), key: str(u.key), value: str(u.value), run_id: num(u.run_id),
    stage: str(u.stage),
  })),
  budget_hold: str(j.budget_hold),
});

export const toListRuns = (j: Json): ListRunsResponse => ({
  runs: arr(j.runs, toRun), next_page_token: str(j.next_page_token),
});

export const toRunUpdate = (j: Json): RunUpdate => ({
  run: toRun(j.run ?? {}), snapshot: !!j.snapshot,
});


/** An optional (proto3 `optional`) number: null when the server left it out. */
const optNum = (v: unknown): number | null => (v === undefined || v === null ? null : num(v));

export const toGpuReading = (j: Json | undefined): GpuReading | null => (j ? {
  ts_ms: num(j.ts_ms), sm_util_pct: optNum(j.sm_util_pct), mem_util_pct: optNum(j.mem_util_pct),
  mem_used_bytes: optNum(j.mem_used_bytes), mem_total_bytes: optNum(j.mem_total_bytes),
  power_watts: optNum(j.power_watts), temperature_c: optNum(j.temperature_c),
  healthy: j.healthy === true, fault: str(j.fault), lost: j.lost === true,
} : null);

export const toGpu = (j: Json): GpuInfo => ({
  index: num(j.index), name: str(j.name), memory_bytes: num(j.memory_bytes),
  attempt_id: num(j.attempt_id), run_id: num(j.run_id), stage: str(j.stage), uuid: str(j.uuid),
  health: (str(j.health) || "ok") as GpuHealth, health_reason: str(j.health_reason),
  health_since_ms: num(j.health_since_ms), reading: toGpuReading(j.reading),
});

export const toGpuPoint = (j: Json): GpuPoint => ({
  t_ms: num(j.t_ms), span_ms: num(j.span_ms), sm_util: num(j.sm_util), mem_util: num(j.mem_util),
  mem_used_max: num(j.mem_used_max), mem_total: num(j.mem_total), power_w: num(j.power_w),
  temp_max: num(j.temp_max), idle_ms: num(j.idle_ms),
});

export const toGpuUsage = (j: Json | undefined): GpuUsage => ({
  sampled_gpu_hours: num(j?.sampled_gpu_hours), mean_sm_util_pct: j ? num(j.mean_sm_util_pct) : -1,
  peak_mem_used_bytes: j ? num(j.peak_mem_used_bytes) : -1,
  mem_total_bytes: j ? num(j.mem_total_bytes) : -1,
  energy_kwh: num(j?.energy_kwh), idle_gpu_hours: num(j?.idle_gpu_hours),
});

export const toStageGpus = (j: Json): StageGpus => ({
  series: arr(j.series, (s): AttemptGpuSeries => ({
    attempt: num(s.attempt), attempt_id: num(s.attempt_id), gpu_index: num(s.gpu_index),
    uuid: str(s.uuid), agent_id: str(s.agent_id), points: arr(s.points, toGpuPoint),
    summary: toGpuUsage(s.summary),
  })),
  summary: toGpuUsage(j.summary),
});

export const toAgent = (j: Json): AgentInfo => ({
  id: str(j.id), hostname: str(j.hostname), total: toResources(j.total),
  free: toResources(j.free), state: (j.state ?? "AGENT_STATE_UNSPECIFIED") as AgentInfo["state"],
  last_seen_ms: num(j.last_seen_ms), connected_at_ms: num(j.connected_at_ms),
  running_attempts: num(j.running_attempts), labels: strMap(j.labels), version: str(j.version),
  executor: str(j.executor), gpus: arr(j.gpus, toGpu),
  disk_full: j.disk_full === true, state_free_bytes: num(j.state_free_bytes),
  shared_paths: Array.isArray(j.shared_paths) ? j.shared_paths.map(str) : [],
  drain: j.drain && typeof j.drain === "object"
    ? { at_ms: num(j.drain.at_ms), reason: str(j.drain.reason), by: str(j.drain.by),
        set_at_ms: num(j.drain.set_at_ms) }
    : null,
});

export const toPlanEntry = (j: Json): PlanEntry => ({
  stage: str(j.stage), action: str(j.action), reason: str(j.reason), cache_key: str(j.cache_key),
  reuse_run_id: num(j.reuse_run_id), reuse_stage: str(j.reuse_stage),
  saved_wall_seconds: num(j.saved_wall_seconds), saved_gpu_hours: num(j.saved_gpu_hours),
});

export const toSubmitResponse = (j: Json): SubmitRunResponse => ({
  run: j.run && num(j.run.id) > 0 ? toRun(j.run) : null, plan: arr(j.plan, toPlanEntry),
  declared_params: arr(j.declared_params, (p: Json) => ({
    name: str(p.name), default_value: str(p.default_value), line: num(p.line),
  })),
  workflow_name: str(j.workflow_name),
});

export const toMetricPage = (j: Json): MetricPage => ({
  points: arr(j.points, toMetric), next_cursor: str(j.next_cursor),
});

/** The stage `next`, keeping where `prev` says it was reused from when `next` does not say. */
function keepCachedFrom(next: Stage, prev: Stage | undefined): Stage {
  if (!prev || next.cached_from_run_id || !prev.cached_from_run_id) return next;
  return { ...next, cached_from_run_id: prev.cached_from_run_id, cached_from_stage: prev.cached_from_stage };
}

/**
 * Applies an update of the live stream to the run the page holds: a snapshot replaces it;
 * an update replaces the run's fields and the stages it carries (by name), keeping the rest.
 * Either way a stage keeps what the page knew of where it was reused from, when the stream
 * does not say.
 */
export function applyUpdate(current: Run | null, u: RunUpdate): Run {
  if (!current || current.id !== u.run.id) return u.run;
  const before = new Map(current.stages.map((s) => [s.name, s]));
  if (u.snapshot) {
    return { ...u.run, stages: u.run.stages.map((s) => keepCachedFrom(s, before.get(s.name))) };
  }
  const changed = new Map(u.run.stages.map((s) => [s.name, s]));
  const stages = current.stages.map((s) => {
    const c = changed.get(s.name);
    if (!c) return s;
    changed.delete(s.name);
    // An update's stage carries no attempts; keep the ones the page already fetched.
    const merged = c.attempts.length === 0 && s.attempts.length > 0 ? { ...c, attempts: s.attempts } : c;
    return keepCachedFrom(merged, s);
  });
  for (const s of changed.values()) stages.push(s);
  return { ...u.run, stages };
}

/** `live` with where each reused stage came from filled in from `stored` (GET /runs/{id}). */
export function withCachedFrom(live: Run, stored: Run): Run {
  const byName = new Map(stored.stages.map((s) => [s.name, s]));
  return { ...live, stages: live.stages.map((s) => keepCachedFrom(s, byName.get(s.name))) };
}

/** Whether a reused stage of the run does not say where it was reused from. */
export function lacksCachedFrom(r: Run): boolean {
  return r.stages.some((s) => s.status === "STAGE_CACHED" && !s.cached_from_run_id);
}

export const toAuditEntry = (j: Json): AuditEntry => ({
  id: num(j.id), ts_ms: num(j.ts_ms), principal: str(j.principal), role: str(j.role),
  peer: str(j.peer), action: str(j.action), target: str(j.target), detail: str(j.detail),
  result: str(j.result),
});

const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

export const toMetricSeries = (j: Json): MetricSeries => ({
  run_id: num(j.run_id), steps: arr(j.steps, num), values: arr(j.values, numOrNull),
  ts_ms: arr(j.ts_ms, num), total_points: num(j.total_points), thinned: !!j.thinned,
  truncated: !!j.truncated, last: numOrNull(j.last), min: numOrNull(j.min), max: numOrNull(j.max),
  error: str(j.error),
});

export const toMetricSeriesResponse = (j: Json): MetricSeriesResponse => ({
  metric: str(j.metric), points: num(j.points), series: arr(j.series, toMetricSeries),
});

function toSweepItem(j: Json): SweepItem {
  return {
    stage: str(j.stage),
    params: arr(j.params, (p) => ({ key: str(p.key), value: str(p.value) })),
    absent: j.absent === true,
    status: (str(j.status) || "STAGE_STATUS_UNSPECIFIED") as Stage["status"],
    reason: str(j.reason),
    final: optNum(j.final),
    best: optNum(j.best),
    steps: optNum(j.steps),
    wall_seconds: num(j.wall_seconds),
    gpu_hours: num(j.gpu_hours),
    started_at_ms: num(j.started_at_ms),
    series: arr(j.series, (p) => ({ step: num(p.step), value: num(p.value) })),
    stopped_at_step: optNum(j.stopped_at_step),
    stopped_value: optNum(j.stopped_value),
  };
}

export function toSweep(j: Json): Sweep {
  const es = j.early_stop as Json | undefined;
  return {
    run_id: num(j.run_id),
    sweep: str(j.sweep),
    metric: str(j.metric),
    maximize: j.maximize === true,
    keys: arr(j.keys, (k) => str(k)),
    items: arr(j.items, toSweepItem),
    early_stop: es ? {
      rule: str(es.rule), metric: str(es.metric), rungs: arr(es.rungs, (r) => num(r)),
      eta: num(es.eta), min_items: num(es.min_items),
    } : null,
    metrics: arr(j.metrics, (m) => str(m)),
  };
}

function toLineageOrigin(j: Json | undefined): LineageOrigin {
  return { run_id: num(j?.run_id), stage: str(j?.stage), attempt: num(j?.attempt), how: str(j?.how) };
}

export function toLineage(j: Json): Lineage {
  return {
    run_id: num(j.run_id),
    stage: str(j.stage),
    status: str(j.status) as Stage["status"],
    workflow_name: str(j.workflow_name),
    made_by: toLineageOrigin(j.made_by),
    inputs: arr(j.inputs, (i) => ({ needs: str(i.needs), made_by: toLineageOrigin(i.made_by) })),
    used_by: arr(j.used_by, (u) => ({
      run_id: num(u.run_id), stage: str(u.stage), how: str(u.how),
      status: str(u.status) as Stage["status"], produced: arr(u.produced, (p) => str(p)),
    })),
    runs_looked_at: num(j.runs_looked_at),
    more_runs: j.more_runs === true,
  };
}

export const toScopeBudget = (j: Json): ScopeBudget => ({
  scope: str(j.scope), name: str(j.name), gpu_hours: num(j.gpu_hours), hard: j.hard === true,
  period_ms: num(j.period_ms), period_start_ms: num(j.period_start_ms),
  used_gpu_hours: num(j.used_gpu_hours), reached: j.reached === true, set_by: str(j.set_by),
  set_at_ms: num(j.set_at_ms), paused_runs: Array.isArray(j.paused_runs) ? j.paused_runs.map(num) : [],
});
