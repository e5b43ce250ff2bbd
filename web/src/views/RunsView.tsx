// Runs (home): newest first, filters in the URL (#/runs?status=&workflow=&param=k=v&id=&metric=),
// keyset paging through the API's cursor (a stack of cursors for "newer", in the URL as
// repeated cursor=), polled every 5 s.
// A filter the server could not use (a param without `=`, a metric that is not STAGE.NAME) is
// said next to its field and not applied; a metric no listed run has is said above the table.
import { useState } from "preact/hooks";
import { listRuns, type RunsQuery } from "../api/client";
import type { ListRunsResponse, Run } from "../api/types";
import { metricsNoRunHas, parseMetricFilter, parseParamFilter } from "../lib/filters";
import { elapsedMs, formatDuration, formatGpuHours, formatMetric } from "../lib/format";
import { href, navigate, parseRunsCursors, replaceHash, withRunsCursors } from "../lib/router";
import { useResource } from "../store/resource";
import { Badge, Clock, CountsBar, Empty, ErrorBox, Pager } from "./common";

const PAGE = 50;
const STATUSES = ["", "pending", "running", "succeeded", "failed", "cancelled"];

function queryFrom(q: URLSearchParams): RunsQuery {
  const params: Record<string, string> = {};
  for (const p of q.getAll("param")) {
    const i = p.indexOf("=");
    if (i > 0) params[p.slice(0, i)] = p.slice(i + 1);
  }
  const metrics = (q.get("metric") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const id = Number(q.get("id") ?? "");
  const limit = Number(q.get("limit") ?? PAGE);
  return {
    status: q.get("status") ?? "", workflow: q.get("workflow") ?? "", params,
    id: Number.isInteger(id) && id > 0 ? id : undefined, metrics,
    limit: Number.isInteger(limit) && limit > 0 && limit <= 500 ? limit : PAGE,
  };
}

function Filters({ q }: { q: URLSearchParams }) {
  const [workflow, setWorkflow] = useState(q.get("workflow") ?? "");
  const [param, setParam] = useState(q.getAll("param").join(" "));
  const [id, setId] = useState(q.get("id") ?? "");
  const [metric, setMetric] = useState(q.get("metric") ?? "");
  const params = parseParamFilter(param);
  const metrics = parseMetricFilter(metric);
  const idError = id.trim() && !/^\d+$/.test(id.trim()) ? `“${id.trim()}” is not a run id` : "";
  const go = (status: string) => {
    if (params.error || metrics.error || idError) return; // said next to the field
    const n = new URLSearchParams();
    if (status) n.set("status", status);
    if (workflow.trim()) n.set("workflow", workflow.trim());
    for (const p of params.params) n.append("param", p);
    if (id.trim()) n.set("id", id.trim());
    if (metric.trim()) n.set("metric", metrics.metrics.join(","));
    if (q.get("limit")) n.set("limit", q.get("limit")!);
    // No cursor: a new filter starts at the first page.
    navigate(href.runs(n));
  };
  const status = q.get("status") ?? "";
  return (
    <form class="filters" onSubmit={(e) => { e.preventDefault(); go(status); }}>
      <label>Status
        <select data-testid="status-filter" value={status}
                onChange={(e) => go((e.target as HTMLSelectElement).value)}>
          {STATUSES.map((s) => <option key={s} value={s}>{s || "any"}</option>)}
        </select>
      </label>
      <label>Workflow
        <input data-testid="workflow-filter" data-search value={workflow} placeholder="name or a part" size={14}
               title="runs whose workflow name contains this (any case)"
               onInput={(e) => setWorkflow((e.target as HTMLInputElement).value)} />
      </label>
      <label>Param
        <input data-testid="param-filter" value={param} placeholder="key=value" size={18}
               aria-invalid={params.error ? "true" : undefined}
               onInput={(e) => setParam((e.target as HTMLInputElement).value)} />
        {params.error && <span class="field-error" data-testid="param-error">{params.error}</span>}
      </label>
      <label>Run id
        <input data-testid="id-search" value={id} placeholder="#" size={6} inputMode="numeric"
               aria-invalid={idError ? "true" : undefined}
               onInput={(e) => setId((e.target as HTMLInputElement).value)} />
        {idError && <span class="field-error" data-testid="id-error">{idError}</span>}
      </label>
      <label class="grow">Metrics
        <input data-testid="metric-filter" value={metric} placeholder="stage.metric, …"
               aria-invalid={metrics.error ? "true" : undefined}
               onInput={(e) => setMetric((e.target as HTMLInputElement).value)} />
        {metrics.error && <span class="field-error" data-testid="metric-error">{metrics.error}</span>}
      </label>
      <button type="submit" data-testid="apply-filters">Apply</button>
    </form>
  );
}

function RunRow({ run, metrics, selected, onSelect }:
    { run: Run; metrics: string[]; selected: boolean; onSelect: (on: boolean) => void }) {
  const el = elapsedMs(run.started_at_ms || run.created_at_ms, run.ended_at_ms, Date.now());
  return (
    <tr data-run={run.id}>
      <td><input type="checkbox" checked={selected} aria-label={`select run ${run.id}`}
                 onChange={(e) => onSelect((e.target as HTMLInputElement).checked)} /></td>
      <td class="num"><a href={href.run(run.id)}>{run.id}</a></td>
      <td><a href={href.run(run.id)}>{run.workflow_name}</a>
        {run.tags.map((t) => (
          <span key={t.name} class="tag" data-testid="run-tag-chip"
            title={`tag ${t.name}: stage ${t.stage}'s result (\${tags.${t.name}.outputs.NAME})`}>{t.name}</span>
        ))}</td>
      <td><Badge state={run.status} /></td>
      <td class="num">{run.parent_run_id ? <a href={href.run(run.parent_run_id)}>{run.parent_run_id}</a> : ""}</td>
      <td><Clock ms={run.started_at_ms || run.created_at_ms} /></td>
      <td class="num">{el >= 0 ? formatDuration(el / 1000) : "–"}</td>
      <td class="num">{formatGpuHours(run.gpu_hours)}</td>
      <td data-testid="run-by">{run.user || "–"}{run.team && <span class="muted"> · {run.team}</span>}
        {run.priority !== "normal" && <span class={`tag prio-${run.priority}`} data-testid="run-priority"
          title="its priority class: the queue orders by class first (docs/scheduling.md)">{run.priority}</span>}</td>
      <td><CountsBar counts={run.stage_counts} /></td>
      {metrics.map((m) => (
        <td key={m} class="num">{m in run.summary_metrics ? formatMetric(run.summary_metrics[m]) : ""}</td>
      ))}
    </tr>
  );
}

export function RunsView({ query }: { query: URLSearchParams }) {
  const q = queryFrom(query);
  // Cursors of the pages before this one; the last is this page's cursor. In the URL, so a
  // reload or a shared link shows the same page.
  const cursors = parseRunsCursors(query);
  const setCursors = (c: string[]) => replaceHash(href.runs(withRunsCursors(query, c)));
  const [selected, setSelected] = useState<number[]>([]);
  const cursor = cursors[cursors.length - 1];
  const key = `runs:${withRunsCursors(query, []).toString()}:${cursor}`;
  const res = useResource<ListRunsResponse>(key, () => listRuns({ ...q, cursor }), 5000);
  const runs = res.data?.runs ?? [];
  const next = res.data?.next_page_token ?? "";
  const metrics = q.metrics ?? [];
  const filtered = !!(q.status || q.workflow || q.id || Object.keys(q.params ?? {}).length);
  const workflows = new Set(runs.map((r) => r.workflow_name));
  const toggle = (id: number, on: boolean) =>
    setSelected(on ? [...selected.filter((x) => x !== id), id] : selected.filter((x) => x !== id));
  return (
    <div>
      <div class="page-head">
        <h1>Runs</h1>
        <div class="actions">
          {workflows.size === 1 && (
            <a href={href.metrics({ workflow: [...workflows][0], metric: metrics[0] })} data-testid="chart-workflow"
               title="a metric of this workflow's last runs, by step and over runs">
              Chart {[...workflows][0]}'s runs</a>)}
          <button disabled={selected.length < 1} data-testid="chart-selected"
                  title="a metric of the ticked runs on one chart, one line per run"
                  onClick={() => navigate(href.metrics({ runs: [...selected].sort((a, b) => a - b), metric: metrics[0] }))}>
            Chart metric
          </button>
          <button disabled={selected.length < 2} data-testid="compare-selected"
                  onClick={() => navigate(href.compare([...selected].sort((a, b) => a - b)))}>
            Compare {selected.length >= 2 ? `(${selected.length})` : "selected"}
          </button>
        </div>
      </div>
      <Filters key={withRunsCursors(query, []).toString()} q={query} />
      <ErrorBox error={res.error} />
      {res.data && metricsNoRunHas(runs, metrics).map((m) => (
        <p key={m} class="note warn" data-testid="metric-missing">
          No run listed has metric “{m}”: its column is empty. (A metric is STAGE.NAME as the
          stage reports it; a run's stage page lists its metrics.)
        </p>))}
      <div class="card flush">
        <table class="grid runs" data-testid="runs-table">
          <thead>
            <tr>
              <th /><th class="num">Run</th><th>Workflow</th><th>Status</th><th class="num">Parent</th>
              <th>Started</th><th class="num">Duration</th><th class="num">GPU-h</th>
              <th title="who submitted it, their team, and its priority class when not normal">By</th><th>Stages</th>
              {metrics.map((m) => {
                const dot = m.indexOf(".");
                return (
                  <th key={m} class="num metric-col" title={m}>
                    {dot > 0 && <span class="metric-stage">{m.slice(0, dot)}</span>}
                    {m.slice(dot + 1)}
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <RunRow key={r.id} run={r} metrics={metrics} selected={selected.includes(r.id)}
                      onSelect={(on) => toggle(r.id, on)} />
            ))}
          </tbody>
        </table>
        {!res.loading && runs.length === 0 && (filtered || cursors.length > 1
          ? <Empty>No runs match.</Empty>
          : <Empty><span data-testid="no-runs-yet">No runs yet. Submit the first one with{" "}
              <code>longhaul submit workflows/eagle3-local.yaml</code> (from the repository), or
              paste a workflow on <a href={href.newRun()}>New run</a>.</span></Empty>)}
        {res.loading && <Empty>Loading…</Empty>}
      </div>
      <Pager page={cursors.length}
             newer={cursors.length > 1 ? () => setCursors(cursors.slice(0, -1)) : null}
             older={next ? () => setCursors([...cursors, next]) : null} />
    </div>
  );
}
