// A foreach stage as a sweep (docs/ui.md, "A sweep's table and chart"): one table of its items
// (values, state with the stop reason on hover, the metric's final and best value, steps, cost),
// sortable by any column, and a chart of each item's metric by step with the early_stop rungs as
// vertical lines and each stop marked where it happened. The same answer `longhaul show RUN
// --sweep` prints (GET /runs/{id}/sweeps/{stage}), polled while the run goes on.
import { getSweep } from "../api/client";
import type { Sweep, SweepItem } from "../api/types";
import { formatDuration, formatGpuHours, formatMetric } from "../lib/format";
import { href, replaceHash, type SweepViewState } from "../lib/router";
import { stateName } from "../lib/status";
import {
  CHART_PAD, seriesPath, sortSweepItems, stopMark, sweepChartLayout,
} from "../lib/sweeptable";
import { useResource } from "../store/resource";
import { Badge, Empty, ErrorBox, NotFound, Section } from "./common";

const POLL_MS = 3000;
const COLORS = ["#2563eb", "#10b981", "#f59e0b", "#8b5cf6", "#0ea5e9", "#ec4899", "#14b8a6", "#84cc16"];
const STOPPED = "#9ca3af";

const num = (v: number | null) => (v === null ? "–" : formatMetric(v));

function SortHeader({ col, label, st, go, right }:
    { col: string; label: string; st: SweepViewState; go: (s: SweepViewState) => void; right?: boolean }) {
  const active = (st.sort ?? "item") === col;
  const arrow = active ? (st.desc ? " ▾" : " ▴") : "";
  return (
    <th class={right ? "num" : ""} aria-sort={active ? (st.desc ? "descending" : "ascending") : "none"}>
      <button class="link" data-sort={col}
              onClick={() => go({ ...st, sort: col, desc: active ? !st.desc : false })}>
        {label}{arrow}
      </button>
    </th>
  );
}

function ItemRow({ it, runId, sweep }: { it: SweepItem; runId: number; sweep: Sweep }) {
  const status = it.absent ? "absent" : stateName(it.status);
  return (
    <tr data-item={it.stage} data-status={status}>
      <td><a class="mono" href={href.stage(runId, it.stage)}>{it.stage}</a></td>
      {sweep.keys.map((k) => (
        <td key={k} class="mono" data-param={k || "value"}>
          {it.params.find((p) => p.key === k)?.value ?? ""}
        </td>
      ))}
      <td data-col="status" title={it.reason || undefined}>
        {it.absent ? <span class="muted">not in the run</span> : <Badge state={it.status} />}
        {it.stopped_at_step !== null && <span class="small muted"> at step {it.stopped_at_step}</span>}
      </td>
      <td class="num" data-col="final">{num(it.final)}</td>
      <td class="num" data-col="best">{num(it.best)}</td>
      <td class="num" data-col="steps">{it.steps ?? "–"}</td>
      <td class="num" data-col="wall">{it.started_at_ms > 0 ? formatDuration(it.wall_seconds) : "–"}</td>
      <td class="num" data-col="gpu-hours">{it.absent ? "–" : formatGpuHours(it.gpu_hours)}</td>
    </tr>
  );
}

/** The metric by step of every item; rungs as vertical lines, stops marked with an ×. */
function SweepChart({ sweep }: { sweep: Sweep }) {
  const items = sweep.items.filter((it) => it.series.length > 0);
  if (items.length === 0) return <Empty>No values of {sweep.metric || "a metric"} with a step yet.</Empty>;
  const judged = sweep.early_stop !== null && sweep.early_stop.metric === sweep.metric;
  const rungs = judged ? sweep.early_stop!.rungs : [];
  const l = sweepChartLayout(items, rungs, 720, 300);
  const colour = new Map(sweep.items.map((it, i) => [it.stage, COLORS[i % COLORS.length]]));
  const stopped = (it: SweepItem) => it.status === "STAGE_STOPPED_EARLY";
  const yTicks = [0, 0.25, 0.5, 0.75, 1].map((f) => l.values[0] + f * (l.values[1] - l.values[0]));
  return (
    <div class="sweep-chart">
      <svg width={l.width} height={l.height} role="img" data-testid="sweep-chart"
           aria-label={`${sweep.metric} by step of each item of sweep ${sweep.sweep}`}>
        <rect x={CHART_PAD.left} y={CHART_PAD.top} class="plot-area"
              width={l.width - CHART_PAD.left - CHART_PAD.right}
              height={l.height - CHART_PAD.top - CHART_PAD.bottom} />
        {yTicks.map((v) => (
          <text key={v} x={CHART_PAD.left - 6} y={l.y(v) + 4} text-anchor="end" class="tick">
            {formatMetric(v)}
          </text>
        ))}
        <text x={CHART_PAD.left} y={l.height - 8} class="tick">step {l.steps[0]}</text>
        <text x={l.width - CHART_PAD.right} y={l.height - 8} text-anchor="end" class="tick">
          {l.steps[1]}
        </text>
        {rungs.map((r, i) => (
          <g key={`rung-${r}`} data-rung={r}>
            <line x1={l.x(r)} x2={l.x(r)} y1={CHART_PAD.top} y2={l.height - CHART_PAD.bottom}
                  class="rung" />
            <text x={l.x(r) + 3} y={CHART_PAD.top + 10} class="tick">rung {i + 1}</text>
          </g>
        ))}
        {items.map((it) => (
          <path key={it.stage} d={seriesPath(it, l)} data-series={it.stage}
                data-state={stopped(it) ? "stopped" : "survivor"} fill="none"
                stroke={stopped(it) ? STOPPED : colour.get(it.stage)}
                stroke-width={stopped(it) ? 1.5 : 2.5}
                stroke-dasharray={stopped(it) ? "4 3" : undefined}>
            <title>{it.stage}</title>
          </path>
        ))}
        {items.map((it) => {
          const m = stopMark(it);
          if (!m) return null;
          const x = l.x(m.step);
          const y = l.y(m.value);
          return (
            <g key={`stop-${it.stage}`} data-stop={it.stage} data-step={m.step} class="stop-mark">
              <path d={`M${x - 5} ${y - 5} L${x + 5} ${y + 5} M${x - 5} ${y + 5} L${x + 5} ${y - 5}`} />
              <title>{`${it.stage} stopped at step ${m.step}: ${it.reason}`}</title>
            </g>
          );
        })}
      </svg>
      <ul class="sweep-legend">
        {items.map((it) => (
          <li key={it.stage} data-legend={it.stage}>
            <span class={`swatch${stopped(it) ? " dashed" : ""}`}
                  style={{ borderColor: stopped(it) ? STOPPED : colour.get(it.stage) }} />
            <span class="mono">{it.stage}</span>
            {stopped(it) && <span class="muted small"> stopped at step {it.stopped_at_step ?? "?"}</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function SweepView({ runId, sweep: name, state }:
    { runId: number; sweep: string; state: SweepViewState }) {
  const metric = state.metric ?? "";
  const res = useResource<Sweep>(`sweep:${runId}/${name}/${metric}`,
                                 () => getSweep(runId, name, metric), POLL_MS);
  const go = (st: SweepViewState) => replaceHash(href.sweep(runId, name, st));
  const back = <a href={href.run(runId)}>run {runId}</a>;
  if (res.error && !res.data) {
    return <NotFound title={`Sweep ${name}`} message={res.error.message} back={href.run(runId)}
                     backLabel={`back to run ${runId}`} />;
  }
  const sweep = res.data;
  if (!sweep) return <Empty>Loading…</Empty>;
  const rows = sortSweepItems(sweep.items, state.sort ?? "item", state.desc === true, sweep.maximize);
  const stoppedCount = sweep.items.filter((it) => it.status === "STAGE_STOPPED_EARLY").length;
  const es = sweep.early_stop;
  return (
    <div data-testid="sweep-view">
      <div class="page-head">
        <h1>Sweep <span class="mono">{sweep.sweep}</span> of {back}</h1>
      </div>
      <ErrorBox error={res.error} />
      <p class="muted" data-testid="sweep-summary">
        {sweep.items.length} items
        {sweep.metric ? `; ${sweep.metric}, ${sweep.maximize ? "max" : "min"} is best` : "; no metric reported"}
        {es && `; early_stop: ${es.rule} on ${es.metric}`}
        {es && es.rungs.length > 0 && ` at steps ${es.rungs.join(", ")}`}
        {es && `; ${stoppedCount} stopped early`}
      </p>
      {sweep.metrics.length > 1 && (
        <label class="small">metric{" "}
          <select data-testid="sweep-metric" value={sweep.metric}
                  onChange={(e) => go({ ...state, metric: (e.target as HTMLSelectElement).value })}>
            {sweep.metrics.map((m) => <option key={m} value={m}>{m}</option>)}
          </select>
        </label>
      )}
      <Section title="Items">
        <div class="table-wrap">
          <table class="grid sweep" data-testid="sweep-table">
            <thead>
              <tr>
                <SortHeader col="item" label="Item" st={state} go={go} />
                {sweep.keys.map((k) => (
                  <SortHeader key={k} col={`param:${k}`} label={k || "value"} st={state} go={go} />
                ))}
                <SortHeader col="status" label="Status" st={state} go={go} />
                <SortHeader col="final" label="Final" st={state} go={go} right />
                <SortHeader col="best" label="Best" st={state} go={go} right />
                <SortHeader col="steps" label="Steps" st={state} go={go} right />
                <SortHeader col="wall" label="Wall" st={state} go={go} right />
                <SortHeader col="gpu-hours" label="GPU-h" st={state} go={go} right />
              </tr>
            </thead>
            <tbody>{rows.map((it) => <ItemRow key={it.stage} it={it} runId={runId} sweep={sweep} />)}</tbody>
          </table>
        </div>
      </Section>
      <Section title={`${sweep.metric || "Metric"} by step`}>
        <SweepChart sweep={sweep} />
      </Section>
    </div>
  );
}
