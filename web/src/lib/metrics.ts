// A stage's metric points as chart series (MetricCharts.tsx).
import type { Metric } from "../api/types";

/**
 * Points per metric name, x = step. A point without a step (the store's -1) is placed by its
 * order among the metric's unstepped points (0, 1, ...) when no point of that name has a
 * step, and left out of the chart of a metric whose other points have steps.
 */
export function seriesByName(points: Metric[]): Map<string, [number[], number[]]> {
  const out = new Map<string, [number[], number[]]>();
  const grouped = new Map<string, Metric[]>();
  for (const p of points) {
    if (!grouped.has(p.name)) grouped.set(p.name, []);
    grouped.get(p.name)!.push(p);
  }
  for (const [name, ps] of grouped) {
    const withStep = ps.filter((p) => p.step >= 0);
    // Steps all 0 (a stage that never counts them) say no more than no steps at all.
    if (withStep.length === 1 || withStep.some((p) => p.step !== 0)) {
      const sorted = [...withStep].sort((a, b) => a.step - b.step || a.ts_ms - b.ts_ms);
      out.set(name, [sorted.map((p) => p.step), sorted.map((p) => p.value)]);
    } else {
      const sorted = [...ps].sort((a, b) => a.ts_ms - b.ts_ms);
      out.set(name, [sorted.map((_, i) => i), sorted.map((p) => p.value)]);
    }
  }
  return out;
}
