// A stage's GPU telemetry shaped for its charts: one chart per GPU (agent and index), each
// attempt that held the GPU a stretch of it, on a time axis shared by every chart of the
// stage, with where each attempt began. Pure: the view (views/GpuCharts.tsx) only draws.
import type { AttemptGpuSeries, GpuPoint } from "../api/types";

export interface GpuChart {
  key: string; agent_id: string; gpu_index: number; uuid: string;
  /** The attempts that held this GPU, oldest first. */
  stretches: AttemptGpuSeries[];
  /** The GPU's memory, bytes (the largest total seen; -1: not known). */
  mem_total: number;
}

/** One chart per GPU, in the order GPUs first appear (by attempt, then index). */
export function chartsByGpu(series: AttemptGpuSeries[]): GpuChart[] {
  const out = new Map<string, GpuChart>();
  for (const s of series) {
    const key = `${s.agent_id}:${s.gpu_index}`;
    let c = out.get(key);
    if (!c) {
      c = { key, agent_id: s.agent_id, gpu_index: s.gpu_index, uuid: s.uuid, stretches: [], mem_total: -1 };
      out.set(key, c);
    }
    c.stretches.push(s);
    for (const p of s.points) c.mem_total = Math.max(c.mem_total, p.mem_total);
  }
  return [...out.values()];
}

/** [first ms, last ms] over every point of the stage; null without points. */
export function timeDomain(series: AttemptGpuSeries[]): [number, number] | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of series) {
    for (const p of s.points) {
      lo = Math.min(lo, p.t_ms);
      hi = Math.max(hi, p.t_ms + p.span_ms);
    }
  }
  return lo <= hi ? [lo, hi > lo ? hi : lo + 1] : null;
}

/** Where each attempt's telemetry begins (its earliest point), by attempt number. */
export function attemptStarts(series: AttemptGpuSeries[]): Array<{ attempt: number; t_ms: number }> {
  const first = new Map<number, number>();
  for (const s of series) {
    if (!s.points.length) continue;
    const t = s.points[0].t_ms;
    first.set(s.attempt, Math.min(first.get(s.attempt) ?? Infinity, t));
  }
  return [...first.entries()].map(([attempt, t_ms]) => ({ attempt, t_ms }))
    .sort((a, b) => a.t_ms - b.t_ms);
}

/**
 * SVG polyline `points` strings for `value` of `points`, split where it is not known (< 0).
 * `x` maps a time, `y` a value, to pixels.
 */
export function polylines(points: GpuPoint[], value: (p: GpuPoint) => number,
                          x: (t: number) => number, y: (v: number) => number): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  for (const p of points) {
    const v = value(p);
    if (!(v >= 0) || !Number.isFinite(v)) {
      if (cur.length) out.push(cur.join(" "));
      cur = [];
      continue;
    }
    // A merged bucket covers span_ms: draw it at its middle; a sample at its time.
    const t = p.t_ms + p.span_ms / 2;
    cur.push(`${x(t).toFixed(1)},${y(v).toFixed(1)}`);
  }
  if (cur.length) out.push(cur.join(" "));
  return out;
}

/** Memory used as % of `total` (-1 when either is not known). */
export function memPercent(p: GpuPoint, total: number): number {
  return p.mem_used_max >= 0 && total > 0 ? Math.min(100, (p.mem_used_max / total) * 100) : -1;
}

/** "73 %"; "–" for not known. */
export function formatPercent(v: number | null): string {
  return v === null || !(v >= 0) ? "–" : `${v < 10 ? v.toFixed(1) : v.toFixed(0)} %`;
}

/** Energy: "12 Wh" under a kWh, "3.41 kWh" above. */
export function formatEnergy(wh: number): string {
  if (!Number.isFinite(wh) || wh <= 0) return "0 Wh";
  if (wh < 1000) return `${wh < 10 ? wh.toFixed(2) : wh.toFixed(0)} Wh`;
  return `${(wh / 1000).toFixed(wh < 10000 ? 2 : 1)} kWh`;
}
