// One metric across runs (MetricRunsView.tsx): each run's series by step, the legend that
// names a run by the params that set it apart, and one value per run for the chart over runs.
import type { Metric, MetricSeries, Run } from "../api/types";
import { paramSplit } from "./compare";
import { seriesByName } from "./metrics";

/** Which value of a run's series stands for the run in the chart over runs. */
export type RunValue = "last" | "min" | "max";
export const RUN_VALUES: Array<[RunValue, string]> = [["last", "final"], ["min", "min"], ["max", "max"]];

export function parseRunValue(s: string | null): RunValue {
  return s === "min" || s === "max" ? s : "last";
}

/** "run 12 · lr=0.1, seed=3": the run and its values of the params that differ between the runs. */
export function runLabel(run: Run | undefined, id: number, differing: string[]): string {
  if (!run) return `run ${id}`;
  const kv = differing.map((k) => `${k}=${run.params[k] ?? "–"}`);
  return kv.length ? `run ${id} · ${kv.join(", ")}` : `run ${id}`;
}

/** The labels of the runs, in the order of `ids` (a run not loaded is its id). */
export function runLabels(ids: number[], runs: Run[]): string[] {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const { differing } = paramSplit(ids.map((id) => byId.get(id)).filter((r): r is Run => !!r));
  return ids.map((id) => runLabel(byId.get(id), id, differing));
}

/** A series as a stage's chart draws it (by step; unstepped points by their order). */
export function stepSeries(s: MetricSeries): [number[], number[]] {
  const points: Metric[] = s.steps.map((step, i) => ({
    name: "m", value: s.values[i] ?? NaN, step, attempt: 0, ts_ms: s.ts_ms[i] ?? i,
  }));
  return seriesByName(points).get("m") ?? [[], []];
}

/**
 * The runs' series on one x axis (the union of their steps, sorted), each run's values at
 * those steps and null where it has none: uPlot's aligned data.
 */
export function alignSeries(list: Array<[number[], number[]]>): [number[], ...Array<Array<number | null>>] {
  const xs = [...new Set(list.flatMap(([x]) => x))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const ys = list.map(([x, y]) => {
    const out: Array<number | null> = new Array(xs.length).fill(null);
    x.forEach((step, i) => { out[at.get(step)!] = Number.isFinite(y[i]) ? y[i] : null; });
    return out;
  });
  return [xs, ...ys];
}

/** Whether every value drawn is above 0 (a log scale can show them). */
export function allPositive(data: Array<Array<number | null>>): boolean {
  return data.every((ys) => ys.every((v) => v === null || v > 0));
}

/** The series' value that stands for the run, null when it has none. */
export function runValue(s: MetricSeries, which: RunValue): number | null {
  return s[which];
}

/** A colour per series, far apart for neighbours (the golden angle around the hue circle). */
export function seriesColour(i: number): string {
  return `hsl(${Math.round((i * 137.508) % 360)}, 65%, ${i % 2 ? 38 : 48}%)`;
}

/** The run ids of a workflow's runs, oldest first (submission order): at most `last`. */
export function workflowRuns(runs: Run[], workflow: string, last: number): Run[] {
  return runs.filter((r) => r.workflow_name === workflow)
    .sort((a, b) => a.id - b.id).slice(-last);
}
