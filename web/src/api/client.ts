// The typed client of longhauld's JSON API (/api/v1). Every function returns converted,
// number-typed messages (convert.ts) or throws an ApiError carrying the server's message.
import {
  toAgent, toAttempt, toScopeBudget, toAuditEntry, toGpu, toListRuns, toMetricPage, toMetricSeriesResponse, toRun,
  toStage, toStageGpus,
  toSubmitResponse, toSweep, toLineage,
} from "./convert";
import type {
  AgentInfo, Attempt, AuditEntry, GpuInfo, ListRunsResponse, LogChunk, LogSearchResult, MetricPage,
  MetricSeriesResponse,
  PivotRequest, Sweep, Lineage,
  Run, ScopeBudget, SetBudgetRequest, Stage, StageGpus, SubmitRequest, SubmitRunResponse, WhoAmI,
} from "./types";
import { noteRequest, noteUnauthenticated } from "./connection";

export const API = "/api/v1";

export class ApiError extends Error {
  constructor(message: string, readonly status: number, readonly code: string) {
    super(message);
  }
}

async function request(path: string, init?: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(API + path, init);
  } catch (e) {
    noteRequest(false);
    throw new ApiError("longhauld is not reachable", 0, "UNAVAILABLE");
  }
  if (res.status === 401) noteUnauthenticated(true);
  if (!res.ok) {
    let message = `${res.status} ${res.statusText}`;
    let code = "";
    try {
      const body = await res.json();
      if (body && typeof body.error === "string") message = body.error;
      if (body && typeof body.code === "string") code = body.code;
    } catch {
      /* not JSON: keep the status line */
    }
    // A 4xx, or longhauld's own error (503 "agent not connected"), is an answer; a 5xx without
    // longhauld's error body (a proxy's 502) says longhauld is not the one answering.
    noteRequest(res.status < 500 || code !== "");
    throw new ApiError(message, res.status, code);
  }
  noteRequest(true);
  return res;
}

async function getJson(path: string): Promise<any> {
  return (await request(path)).json();
}

async function postJson(path: string, body: unknown): Promise<any> {
  const res = await request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return res.json();
}

export interface RunsQuery {
  status?: string;
  workflow?: string;
  params?: Record<string, string>;
  id?: number;
  metrics?: string[];
  limit?: number;
  cursor?: string;
}

/** The query string of GET /runs for q (exported for tests). */
export function runsQueryString(q: RunsQuery): string {
  const p = new URLSearchParams();
  if (q.status) p.set("status", q.status);
  if (q.workflow) p.set("workflow", q.workflow);
  for (const [k, v] of Object.entries(q.params ?? {})) p.append("param", `${k}=${v}`);
  if (q.id) p.set("id", String(q.id));
  for (const m of q.metrics ?? []) p.append("metric", m);
  if (q.limit) p.set("limit", String(q.limit));
  if (q.cursor) p.set("cursor", q.cursor);
  const s = p.toString();
  return s ? "?" + s : "";
}

export async function listRuns(q: RunsQuery): Promise<ListRunsResponse> {
  return toListRuns(await getJson("/runs" + runsQueryString(q)));
}

export async function getRun(id: number, attempts = false): Promise<Run> {
  return toRun(await getJson(`/runs/${id}${attempts ? "?attempts=1" : ""}`));
}

/** The run without its stages (GET /runs/{id}?stages=-1): its counts, cost and GPU use. */
export async function getRunTotals(id: number): Promise<Run> {
  return toRun(await getJson(`/runs/${id}?stages=-1`));
}

export async function listChildren(id: number): Promise<Run[]> {
  return toListRuns(await getJson(`/runs/${id}/children`)).runs;
}

const stagePath = (run: number, stage: string) =>
  `/runs/${run}/stages/${encodeURIComponent(stage)}`;

/**
 * Every stage of the run with its attempts: GET /runs/{id}/stages?attempts=1, page by page
 * (1,000 stages each); `onPage` is given the stages read so far after each page but the last.
 */
export async function listStagesWithAttempts(run: number,
                                             onPage?: (soFar: Stage[]) => void): Promise<Stage[]> {
  const out: Stage[] = [];
  let cursor = "";
  for (;;) {
    const q = new URLSearchParams({ attempts: "1", limit: "1000" });
    if (cursor) q.set("cursor", cursor);
    const j = await getJson(`/runs/${run}/stages?${q}`);
    if (Array.isArray(j.stages)) for (const s of j.stages) out.push(toStage(s));
    cursor = typeof j.next_page_token === "string" ? j.next_page_token : "";
    if (!cursor) return out;
    onPage?.(out);
  }
}

export async function listAttempts(run: number, stage: string): Promise<Attempt[]> {
  const j = await getJson(stagePath(run, stage) + "/attempts");
  return Array.isArray(j.attempts) ? j.attempts.map(toAttempt) : [];
}

export async function listMetrics(run: number, stage: string, after: string): Promise<MetricPage> {
  const q = new URLSearchParams({ limit: "1000" });
  if (after) q.set("after", after);
  return toMetricPage(await getJson(`${stagePath(run, stage)}/metrics?${q}`));
}

/** The most runs GET /metric-series answers for in one request (docs/http-api.md). */
export const MAX_SERIES_RUNS = 100;

/** One metric ("stage.name") in each of the runs, at most `points` points a run. */
export async function getMetricSeries(metric: string, runs: number[],
                                      points = 1000): Promise<MetricSeriesResponse> {
  const q = new URLSearchParams({ metric, runs: runs.join(","), points: String(points) });
  return toMetricSeriesResponse(await getJson(`/metric-series?${q.toString().replace(/%2C/g, ",")}`));
}

/** A stage's GPU telemetry: per attempt and GPU, and the stage's summary. */
export async function listGpuSeries(run: number, stage: string): Promise<StageGpus> {
  return toStageGpus(await getJson(stagePath(run, stage) + "/gpus"));
}

export function logUrl(run: number, stage: string, attempt: number, stream: string,
                       offset: number, maxBytes: number): string {
  const q = new URLSearchParams({
    attempt: String(attempt), stream, offset: String(offset), max_bytes: String(maxBytes),
  });
  return `${API}${stagePath(run, stage)}/logs?${q}`;
}

export function logDownloadUrl(run: number, stage: string, attempt: number, stream: string) {
  const q = new URLSearchParams({ attempt: String(attempt), stream, download: "1" });
  return `${API}${stagePath(run, stage)}/logs?${q}`;
}

/** The lines of a stage's log that hold `query` (the whole log, searched by longhauld), from
 * byte `offset` on; at most `limit`. */
export async function searchLog(run: number, stage: string, attempt: number, stream: string,
                                query: string, offset = 0, limit = 100): Promise<LogSearchResult> {
  const q = new URLSearchParams({
    attempt: String(attempt), stream, q: query, icase: "1", offset: String(offset), limit: String(limit),
  });
  const r = await getJson(`${stagePath(run, stage)}/logs/search?${q}`);
  return {
    matches: (r.matches ?? []).map((m: any) => ({
      offset: Number(m.offset), line: String(m.line ?? ""), truncated: !!m.truncated,
    })),
    more: !!r.more,
    next_offset: Number(r.next_offset ?? 0),
    searched_bytes: Number(r.searched_bytes ?? 0),
    end_offset: Number(r.end_offset ?? 0),
    finished: !!r.finished,
    attempt: Number(r.attempt ?? attempt),
  };
}

/** The length of a stage's log now (a read of its last byte). */
export async function logSize(run: number, stage: string, attempt: number,
                              stream: string): Promise<number> {
  return (await readLog(run, stage, attempt, stream, -1, 1)).next_offset;
}

/** One chunk of a stage's log: offset -N reads the last N bytes. */
export async function readLog(run: number, stage: string, attempt: number, stream: string,
                              offset: number, maxBytes: number): Promise<LogChunk> {
  const url = logUrl(run, stage, attempt, stream, offset, maxBytes).slice(API.length);
  const res = await request(url);
  const h = (name: string) => res.headers.get(name) ?? "";
  const text = new Uint8Array(await res.arrayBuffer());
  const start = Number(h("X-Longhaul-Offset") || 0);
  return {
    text,
    offset: start,
    next_offset: Number(h("X-Longhaul-Next-Offset") || start + text.length),
    finished: h("X-Longhaul-Finished") === "true",
    attempt: Number(h("X-Longhaul-Attempt") || attempt),
  };
}

export async function listAgents(): Promise<AgentInfo[]> {
  const j = await getJson("/agents");
  return Array.isArray(j.agents) ? j.agents.map(toAgent) : [];
}

/**
 * Takes GPU `gpu` of `agent` ("all": every one) out of service, or brings it back (admin;
 * audited). Returns the GPUs' states after.
 */
export async function drainGpu(agent: string, gpu: number | "all", undrain: boolean,
                               reason: string): Promise<GpuInfo[]> {
  const j = await postJson(
    `/agents/${encodeURIComponent(agent)}/gpus/${gpu}/${undrain ? "undrain" : "drain"}`, { reason });
  return Array.isArray(j.gpus) ? j.gpus.map(toGpu) : [];
}

/**
 * Sets `agent`'s maintenance window from `atMs` (0: now) with a reason, or ends it (admin;
 * audited as DrainAgent). Returns the agent after, with its `drain`.
 */
export async function drainAgent(agent: string, atMs: number, reason: string): Promise<AgentInfo> {
  const j = await postJson(`/agents/${encodeURIComponent(agent)}/drain`, { atMs: String(atMs), reason });
  return toAgent(j.agent ?? {});
}

export async function undrainAgent(agent: string): Promise<AgentInfo> {
  const j = await postJson(`/agents/${encodeURIComponent(agent)}/undrain`, {});
  return toAgent(j.agent ?? {});
}

/** The budgets of teams and workflow names, by scope then name (any role). */
export async function listBudgets(): Promise<ScopeBudget[]> {
  const j = await getJson("/budgets");
  return Array.isArray(j.budgets) ? j.budgets.map(toScopeBudget) : [];
}

/** Sets a team's or workflow's budget (admin; audited as SetBudget); 400 names bad input. */
export async function setBudget(req: SetBudgetRequest): Promise<ScopeBudget> {
  return toScopeBudget(await postJson("/budgets", { ...req, period_ms: String(req.period_ms) }));
}

/** Sets run's own GPU-hour budget; a run it paused continues (admin; SetRunBudget). */
export async function setRunBudget(run: number, gpuHours: number): Promise<Run> {
  return toRun(await postJson(`/runs/${run}/budget`, { gpu_hours: gpuHours }));
}

/** Changes run's priority class (operator and --priority-allow's rule; SetRunPriority). */
export async function setRunPriority(run: number, priority: string): Promise<Run> {
  return toRun(await postJson(`/runs/${run}/priority`, { priority }));
}

/** One page of the audit trail, newest first; `before` (an entry id) pages on. Admin only. */
export async function listAudit(limit: number, before = 0): Promise<AuditEntry[]> {
  const q = new URLSearchParams({ limit: String(limit) });
  if (before > 0) q.set("before", String(before));
  const j = await getJson(`/audit?${q}`);
  return Array.isArray(j.entries) ? j.entries.map(toAuditEntry) : [];
}

export async function pivot(run: number, req: PivotRequest): Promise<SubmitRunResponse> {
  return toSubmitResponse(await postJson(`/runs/${run}/pivot`, req));
}

/** POST /runs: a dry run (plan only) or a submission of a workflow's text. */
export async function submitRun(req: SubmitRequest): Promise<SubmitRunResponse> {
  return toSubmitResponse(await postJson("/runs", req));
}

/** The workflow file run id was submitted with (no stages), and the path it was read from. */
export async function getRunWorkflow(id: number): Promise<{ text: string; path: string; run: Run }> {
  const j = await getJson(`/runs/${id}?stages=-1&workflow_text=1`);
  return { text: typeof j.workflow_text === "string" ? j.workflow_text : "", path: String(j.workflow_path ?? ""), run: toRun(j) };
}

/** Who the caller is and what the role allows (every caller is an admin without --tokens). */
export async function whoAmI(): Promise<WhoAmI> {
  const j = await getJson("/whoami");
  return { name: String(j.name ?? ""), role: String(j.role ?? ""), can_submit: !!j.can_submit, can_admin: !!j.can_admin };
}

export async function retry(run: number, stage = ""): Promise<Run> {
  return toRun(await postJson(`/runs/${run}/retry`, { stage }));
}

export async function cancel(run: number): Promise<Run> {
  return toRun(await postJson(`/runs/${run}/cancel`, {}));
}

/**
 * Presents a token once: longhauld checks it and keeps it in an HttpOnly, SameSite=Strict
 * cookie that every later request (and the live stream) carries. Throws ApiError when refused.
 */
export async function login(token: string): Promise<void> {
  await request("/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token }),
  });
  noteUnauthenticated(false);
}

/** A foreach stage of a run as a sweep, with each item's values of `metric` by step. */
export async function getSweep(run: number, stage: string, metric = ""): Promise<Sweep> {
  const q = new URLSearchParams({ series: "1" });
  if (metric) q.set("metric", metric);
  return toSweep(await getJson(`/runs/${run}/sweeps/${encodeURIComponent(stage)}?${q}`));
}

/** Where a stage's result came from and which stages and later runs used it. */
export async function getLineage(run: number, stage: string): Promise<Lineage> {
  return toLineage(await getJson(`${stagePath(run, stage)}/lineage`));
}
