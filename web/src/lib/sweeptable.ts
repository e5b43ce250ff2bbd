// The sweep view's table and chart (docs/ui.md, "A sweep's table and chart"), from GET
// /runs/{id}/sweeps/{stage}: sorting the items by a column, and placing each item's series, the
// rungs and the stop marks on the chart. Pure functions; views/SweepView.tsx draws them.
import type { SweepItem } from "../api/types";
import { stateName } from "./status";

/** The columns besides the foreach keys (`param:KEY`). */
export type SweepColumn = "item" | "status" | "final" | "best" | "steps" | "wall" | "gpu-hours" | string;

function paramValue(it: SweepItem, key: string): string {
  return it.params.find((p) => p.key === key)?.value ?? "";
}

/**
 * The items ordered by `column`: metric columns best first (by `maximize`), steps and costs
 * most first, status and item (file order) and foreach keys (numbers as numbers) ascending;
 * `desc` reverses that. Items without a value come last either way; ties keep file order.
 */
export function sortSweepItems(items: readonly SweepItem[], column: SweepColumn, desc: boolean,
                               maximize: boolean): SweepItem[] {
  const order = new Map(items.map((it, i) => [it.stage, i]));
  type Key = number | string | null;
  const keyOf = (it: SweepItem): Key => {
    switch (column) {
      case "item": return order.get(it.stage) ?? 0;
      case "status": return it.absent ? null : stateName(it.status);
      case "final": return it.final === null ? null : maximize ? -it.final : it.final;
      case "best": return it.best === null ? null : maximize ? -it.best : it.best;
      case "steps": return it.steps === null ? null : -it.steps;
      case "wall": return it.absent ? null : -it.wall_seconds;
      case "gpu-hours": return it.absent ? null : -it.gpu_hours;
      default: {
        const v = paramValue(it, column.replace(/^param:/, ""));
        const n = Number(v);
        return v !== "" && Number.isFinite(n) ? n : v;
      }
    }
  };
  const keyed = items.map((it) => ({ it, k: keyOf(it), i: order.get(it.stage) ?? 0 }));
  keyed.sort((a, b) => {
    if (a.k === null || b.k === null) return a.k === b.k ? a.i - b.i : a.k === null ? 1 : -1;
    let c = 0;
    if (typeof a.k === "number" && typeof b.k === "number") c = a.k - b.k;
    else c = String(a.k) < String(b.k) ? -1 : String(a.k) > String(b.k) ? 1 : 0;
    if (desc) c = -c;
    return c !== 0 ? c : a.i - b.i;
  });
  return keyed.map((x) => x.it);
}

/** Where the chart draws things, in SVG user units. */
export interface SweepChartLayout {
  width: number;
  height: number;
  x: (step: number) => number;
  y: (value: number) => number;
  steps: [number, number];
  values: [number, number];
}

export const CHART_PAD = { left: 56, right: 16, top: 12, bottom: 28 };

/** Scales that fit every item's points and the rungs (a flat range is widened by one). */
export function sweepChartLayout(items: readonly SweepItem[], rungs: readonly number[],
                                 width: number, height: number): SweepChartLayout {
  let s0 = Infinity, s1 = -Infinity, v0 = Infinity, v1 = -Infinity;
  for (const it of items) {
    for (const p of it.series) {
      s0 = Math.min(s0, p.step); s1 = Math.max(s1, p.step);
      if (Number.isFinite(p.value)) { v0 = Math.min(v0, p.value); v1 = Math.max(v1, p.value); }
    }
  }
  for (const r of rungs) { s0 = Math.min(s0, r); s1 = Math.max(s1, r); }
  if (!Number.isFinite(s0)) { s0 = 0; s1 = 1; }
  if (!Number.isFinite(v0)) { v0 = 0; v1 = 1; }
  if (s1 === s0) s1 = s0 + 1;
  if (v1 === v0) { v0 -= 0.5; v1 += 0.5; }
  const w = width - CHART_PAD.left - CHART_PAD.right;
  const h = height - CHART_PAD.top - CHART_PAD.bottom;
  return {
    width, height, steps: [s0, s1], values: [v0, v1],
    x: (s) => CHART_PAD.left + ((s - s0) / (s1 - s0)) * w,
    y: (v) => CHART_PAD.top + (1 - (v - v0) / (v1 - v0)) * h,
  };
}

/** An item's series as an SVG path ("M x y L x y ..."), in step order; "" without points. */
export function seriesPath(it: SweepItem, layout: SweepChartLayout): string {
  const pts = [...it.series].filter((p) => Number.isFinite(p.value)).sort((a, b) => a.step - b.step);
  return pts.map((p, i) => `${i ? "L" : "M"}${layout.x(p.step).toFixed(1)} ${layout.y(p.value).toFixed(1)}`)
    .join(" ");
}

/**
 * Where a stopped item's stop is marked: at the step it was stopped at, on its own series
 * (its value there as the rule judged it, else its last value at or before that step).
 */
export function stopMark(it: SweepItem): { step: number; value: number } | null {
  if (it.stopped_at_step === null) return null;
  const step = it.stopped_at_step;
  if (it.stopped_value !== null) return { step, value: it.stopped_value };
  const before = it.series.filter((p) => p.step <= step).sort((a, b) => a.step - b.step);
  return before.length ? { step, value: before[before.length - 1].value } : null;
}
