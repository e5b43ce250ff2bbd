// Hash routes: #/runs, #/runs/12, #/runs/12/stages/datagen, #/runs/12/pivot, #/new,
// #/compare?runs=3,4, #/agents, #/budgets, #/audit. Pure parsing; app.tsx listens to hashchange.
// A stage's log view is in its query, so a link shows the same lines:
// #/runs/12/stages/train?attempt=2&stream=stderr&at=1048576&q=error.
// So is every other view's state (runs: filters and the page's cursors; run: the stage search,
// state filter, selected stage and tab; compare: the runs and options), written with
// replaceHash as it changes, so the URL always shares what is on screen without a history
// entry per keystroke.

/** Where the log viewer is: every field optional (absent: the latest attempt's tail). */
export interface LogLocation {
  attempt?: number; // 0 or absent: the latest
  stream?: string; // "stdout" or "stderr"; absent: the viewer chooses
  at?: number; // the byte offset shown (and highlighted); absent: the end, following
  q?: string; // the search
}

export function parseLogLocation(query: URLSearchParams): LogLocation {
  const loc: LogLocation = {};
  const num = (k: string) => {
    const v = query.get(k);
    return v !== null && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
  };
  const attempt = num("attempt");
  if (attempt) loc.attempt = attempt;
  const stream = query.get("stream");
  if (stream === "stdout" || stream === "stderr") loc.stream = stream;
  const at = num("at");
  if (at !== undefined) loc.at = at;
  const q = query.get("q");
  if (q) loc.q = q;
  return loc;
}

function logQuery(loc: LogLocation): string {
  const q = new URLSearchParams();
  if (loc.attempt) q.set("attempt", String(loc.attempt));
  if (loc.stream) q.set("stream", loc.stream);
  if (loc.at !== undefined) q.set("at", String(loc.at));
  if (loc.q) q.set("q", loc.q);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The run page's stages section: every field optional (absent: unfiltered, table). */
export interface RunViewState {
  q?: string; // the stage search
  state?: string; // the state filter ("running", "failed", ...)
  stage?: string; // the selected stage
  tab?: "graph" | "timeline"; // absent: the table (a large run shows one at a time), or the
  // graph and the table of a small run
}

export function parseRunViewState(query: URLSearchParams): RunViewState {
  const st: RunViewState = {};
  const q = query.get("q");
  if (q) st.q = q;
  const state = query.get("state");
  if (state && /^[a-z_]{1,32}$/.test(state)) st.state = state;
  const stage = query.get("stage");
  if (stage) st.stage = stage;
  const tab = query.get("tab");
  if (tab === "graph" || tab === "timeline") st.tab = tab;
  return st;
}

function runQuery(st: RunViewState): string {
  const q = new URLSearchParams();
  if (st.q) q.set("q", st.q);
  if (st.state) q.set("state", st.state);
  if (st.stage) q.set("stage", st.stage);
  if (st.tab) q.set("tab", st.tab);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The sweep page: the metric shown and the table's order (absent: early_stop's, file order). */
export interface SweepViewState {
  metric?: string;
  sort?: string; // a column: item, status, final, best, steps, wall, gpu-hours, param:KEY
  desc?: boolean;
}

export function parseSweepViewState(query: URLSearchParams): SweepViewState {
  const st: SweepViewState = {};
  const metric = query.get("metric");
  if (metric) st.metric = metric;
  const sort = query.get("sort");
  if (sort) st.sort = sort;
  if (query.get("desc") === "1") st.desc = true;
  return st;
}

function sweepQuery(st: SweepViewState): string {
  const q = new URLSearchParams();
  if (st.metric) q.set("metric", st.metric);
  if (st.sort) q.set("sort", st.sort);
  if (st.desc) q.set("desc", "1");
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** The runs page's cursors (the pages before this one's, oldest first): `cursor=` repeated. */
export function parseRunsCursors(query: URLSearchParams): string[] {
  return ["", ...query.getAll("cursor").filter(Boolean)];
}

/** `query` with its cursors replaced by `cursors` (the first, "", is the first page's). */
export function withRunsCursors(query: URLSearchParams, cursors: string[]): URLSearchParams {
  const n = new URLSearchParams(query);
  n.delete("cursor");
  for (const c of cursors.filter(Boolean)) n.append("cursor", c);
  return n;
}

/** The metrics page (#/metrics): which runs, which metric, how it is drawn. */
export interface MetricsPageState {
  runs?: number[]; // these runs; or
  workflow?: string; // the last `last` runs of this workflow (name exactly)
  last?: number;
  metric?: string; // "stage.name"
  log?: boolean; // a log scale for the values
  value?: string; // the run's value over runs: "last" (final), "min", "max"
  smooth?: number; // the by-step lines' smoothing weight, 0 < smooth < 1 (none when absent)
}

export function parseMetricsPage(query: URLSearchParams): MetricsPageState {
  const st: MetricsPageState = {};
  const runs = (query.get("runs") ?? "").split(",").map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  if (runs.length) st.runs = runs;
  const wf = query.get("workflow");
  if (wf) st.workflow = wf;
  const last = Number(query.get("last") ?? "");
  if (Number.isInteger(last) && last > 0) st.last = last;
  const metric = query.get("metric");
  if (metric) st.metric = metric;
  if (query.get("log") === "1") st.log = true;
  const value = query.get("value");
  if (value) st.value = value;
  const smooth = Number(query.get("smooth") ?? "");
  if (smooth > 0 && smooth < 1) st.smooth = smooth;
  return st;
}

export type Route =
  | { view: "runs"; query: URLSearchParams }
  | { view: "run"; run: number; state: RunViewState }
  | { view: "stage"; run: number; stage: string; log: LogLocation }
  | { view: "pivot"; run: number }
  | { view: "sweep"; run: number; sweep: string; state: SweepViewState }
  | { view: "lineage"; run: number; stage: string }
  | { view: "new" }
  | { view: "compare"; runs: number[]; query: URLSearchParams }
  | { view: "metrics"; query: URLSearchParams }
  | { view: "agents" }
  | { view: "budgets" }
  | { view: "audit" }
  | { view: "notfound"; path: string };

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const [path, qs = ""] = h.split("?", 2);
  const query = new URLSearchParams(qs);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "runs")) {
    return { view: "runs", query };
  }
  if (parts[0] === "runs" && /^\d+$/.test(parts[1] ?? "")) {
    const run = Number(parts[1]);
    if (parts.length === 2) return { view: "run", run, state: parseRunViewState(query) };
    if (parts.length === 3 && parts[2] === "pivot") return { view: "pivot", run };
    if (parts.length === 4 && parts[2] === "sweeps") {
      return { view: "sweep", run, sweep: parts[3], state: parseSweepViewState(query) };
    }
    if (parts.length === 4 && parts[2] === "lineage") return { view: "lineage", run, stage: parts[3] };
    if (parts.length === 4 && parts[2] === "stages") {
      return { view: "stage", run, stage: parts[3], log: parseLogLocation(query) };
    }
  }
  if (parts[0] === "compare" && parts.length === 1) {
    const runs = (query.get("runs") ?? "").split(",").map((s) => Number(s.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
    return { view: "compare", runs, query };
  }
  if (parts[0] === "new" && parts.length === 1) return { view: "new" };
  if (parts[0] === "metrics" && parts.length === 1) return { view: "metrics", query };
  if (parts[0] === "agents" && parts.length === 1) return { view: "agents" };
  if (parts[0] === "audit" && parts.length === 1) return { view: "audit" };
  if (parts[0] === "budgets" && parts.length === 1) return { view: "budgets" };
  return { view: "notfound", path };
}

export const href = {
  runs: (q?: URLSearchParams) => (q && q.toString() ? `#/runs?${q}` : "#/runs"),
  run: (id: number, st: RunViewState = {}) => `#/runs/${id}${runQuery(st)}`,
  stage: (id: number, stage: string, log: LogLocation = {}) =>
    `#/runs/${id}/stages/${encodeURIComponent(stage)}${logQuery(log)}`,
  pivot: (id: number) => `#/runs/${id}/pivot`,
  sweep: (id: number, sweep: string, st: SweepViewState = {}) =>
    `#/runs/${id}/sweeps/${encodeURIComponent(sweep)}${sweepQuery(st)}`,
  lineage: (id: number, stage: string) => `#/runs/${id}/lineage/${encodeURIComponent(stage)}`,
  compare: (ids: number[], opts: { all?: boolean; metric?: string[] } = {}) => {
    const q = new URLSearchParams();
    q.set("runs", ids.join(","));
    if (opts.all) q.set("all", "1");
    if (opts.metric?.length) q.set("metric", opts.metric.join(","));
    return `#/compare?${q.toString().replace(/%2C/g, ",")}`;
  },
  newRun: () => "#/new",
  /** One metric across runs: the runs given, or a workflow's last `last` runs. */
  metrics: (opts: MetricsPageState) => {
    const q = new URLSearchParams();
    if (opts.runs?.length) q.set("runs", opts.runs.join(","));
    if (opts.workflow) q.set("workflow", opts.workflow);
    if (opts.last) q.set("last", String(opts.last));
    if (opts.metric) q.set("metric", opts.metric);
    if (opts.log) q.set("log", "1");
    if (opts.value && opts.value !== "last") q.set("value", opts.value);
    if (opts.smooth && opts.smooth > 0 && opts.smooth < 1) q.set("smooth", String(opts.smooth));
    return `#/metrics${q.toString() ? "?" + q.toString().replace(/%2C/g, ",") : ""}`;
  },
  agents: () => "#/agents",
  budgets: () => "#/budgets",
  audit: () => "#/audit",
};

export function navigate(to: string): void {
  if (location.hash !== to) location.hash = to;
}

/**
 * Writes `to` into the hash without a history entry (a search box as it is typed in), and
 * tells the shell (REPLACED_HASH) so the route follows; a reload or a copied URL shows it again.
 */
export const REPLACED_HASH = "longhaul:replacehash";
export function replaceHash(to: string): void {
  if (location.hash === to) return;
  history.replaceState(history.state, "", to);
  window.dispatchEvent(new Event(REPLACED_HASH));
}
