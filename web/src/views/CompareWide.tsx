// Compare of many runs (more than WIDE_COMPARE_RUNS): transposed, a row per run and a column
// per differing param and per metric, in a frame that scrolls both ways with the run column and
// the headers held in place; only the rows in view are in the page, so 100 runs of 30 metrics
// draw as fast as 10. The params every run has with one value are one line, "same in all".
// Each metric's least and greatest value are marked.
import { useEffect, useRef } from "preact/hooks";
import type { Run } from "../api/types";
import { extremeOf, extremes, metricMap, metricRows, paramSplit } from "../lib/compare";
import { formatDelta, formatDuration, formatGpuHours, formatMetric } from "../lib/format";
import { href } from "../lib/router";
import { rowWindow } from "../lib/virtual";
import { Badge, CountsBar, useScrollTop } from "./common";

/** More runs than this are compared transposed (CompareWide); up to it, runs are columns. */
export const WIDE_COMPARE_RUNS = 8;
const ROW_H = 36;
const VIEW_H = 620;

/** "same in all: a=1, b=2": the params no run sets apart, on one line. */
export function SameInAll({ same }: { same: Array<[string, string]> }) {
  if (!same.length) return null;
  return (
    <p class="same-in-all" data-testid="params-same">
      <b>same in all:</b>{" "}
      {same.map(([k, v], i) => (
        <span key={k} class="mono" data-param={k}>{i ? ", " : ""}{k}={v}</span>))}
    </p>
  );
}

/**
 * A metric's cell: the value, marked when it is the least or greatest of the runs; `delta`
 * (the difference to the first run) is its tooltip.
 */
export function MetricCell({ v, ex, delta }:
    { v: number | undefined; ex: { min: number; max: number } | null; delta?: string }) {
  const e = extremeOf(v, ex);
  const what = e ? `the ${e === "max" ? "greatest" : "least"} of the runs` : "";
  const title = [what, delta].filter(Boolean).join("; ");
  return (
    <td class={`num${e ? ` ext-${e}` : ""}`} data-extreme={e || undefined} title={title || undefined}>
      {v !== undefined ? formatMetric(v) : "–"}
    </td>
  );
}

export function WideCompare({ runs, all }: { runs: Run[]; all: boolean }) {
  const { box, scrollTop, onScroll } = useScrollTop();
  const table = useRef<HTMLTableElement>(null);
  // When the first rows reached the screen (the browser test and bench read it).
  useEffect(() => {
    requestAnimationFrame(() => {
      if (table.current && !table.current.dataset.drawnAt) table.current.dataset.drawnAt = String(performance.now());
    });
  }, []);
  const { differing, same } = paramSplit(runs);
  const params = all ? [...differing, ...same.map(([k]) => k)] : differing;
  const metrics = metricRows(runs);
  const maps = runs.map(metricMap);
  const ex = metrics.map((k) => extremes(maps.map((m) => m.get(k))));
  const height = Math.min(VIEW_H, (runs.length + 1) * ROW_H + 20);
  const w = rowWindow(runs.length, ROW_H, scrollTop, height);
  const first = maps[0];
  return (
    <>
      {!all && <SameInAll same={same} />}
      <div class="table-scroll virtual compare-wide" ref={box} onScroll={onScroll} style={{ height: `${height}px` }}>
        <table class="grid wide" ref={table} data-testid="compare-wide" data-runs={runs.length}
               data-params={params.length} data-metrics={metrics.length}>
          <thead>
            <tr>
              <th class="runcell">Run</th><th class="num">Duration</th><th class="num">GPU-h</th><th>Stages</th>
              {params.map((k) => <th key={`p${k}`} class="param mono" data-param={k}>{k}</th>)}
              {metrics.map((k) => {
                const dot = k.indexOf(".");
                return (
                  <th key={`m${k}`} class="num metric-col" data-metric={k} title={k}>
                    <span class="metric-stage">{k.slice(0, dot)}</span>{k.slice(dot + 1)}
                  </th>);
              })}
            </tr>
          </thead>
          <tbody>
            {w.padTop > 0 && <tr class="pad" style={{ height: `${w.padTop}px` }} aria-hidden="true" />}
            {runs.slice(w.first, w.last).map((r, j) => {
              const m = maps[w.first + j];
              return (
                <tr key={r.id} data-run={r.id}>
                  <th class="runcell"><a href={href.run(r.id)}>run {r.id}</a> <Badge state={r.status} /></th>
                  <td class="num">{formatDuration(r.wall_seconds)}</td>
                  <td class="num">{formatGpuHours(r.gpu_hours)}</td>
                  <td><CountsBar counts={r.stage_counts} /></td>
                  {params.map((k) => <td key={`p${k}`} class="mono param">{r.params[k] ?? "–"}</td>)}
                  {metrics.map((k, i) => {
                    const v = m.get(k);
                    const base = first.get(k);
                    const delta = j + w.first > 0 && v !== undefined && base !== undefined
                      ? `${formatDelta(base, v)} vs run ${runs[0].id}` : undefined;
                    return <MetricCell key={`m${k}`} v={v} ex={ex[i]} delta={delta} />;
                  })}
                </tr>);
            })}
            {w.padBottom > 0 && <tr class="pad" style={{ height: `${w.padBottom}px` }} aria-hidden="true" />}
          </tbody>
        </table>
      </div>
      <p class="muted small">
        {runs.length} runs · {params.length} params differ · {metrics.length} metrics ·
        the greatest value of each metric is <span class="ext-max legend-key">marked</span>, the least{" "}
        <span class="ext-min legend-key">so</span>. Hover a value for its difference to run {runs[0].id}.
      </p>
    </>
  );
}
