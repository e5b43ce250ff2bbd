// What Compare shows, computed from two or more runs: params that differ, each stage's state
// per run, every metric ("stage.metric", latest value) and what their GPUs did side by side.
import type { GpuUsage, Run, Stage } from "../api/types";
import { formatBytes, formatDelta, formatGpuHours, formatNumber } from "./format";
import { formatEnergy, formatPercent } from "./gpu";

export const CAMPAIGN_METRICS: Array<[string, string]> = [
  ["bench_spec.accept_rate", "accept rate"],
  ["bench_spec.accept_length", "acceptance length"],
  ["bench_spec.output_throughput", "output tokens/s (speculative)"],
  ["bench_baseline.output_throughput", "output tokens/s (baseline)"],
  ["bench_spec.speedup_output_throughput", "speed-up"],
];

/** Param names in any run, sorted; with all=false only those whose values are not all equal. */
export function paramRows(runs: Run[], all: boolean): string[] {
  const names = new Set<string>();
  for (const r of runs) for (const k of Object.keys(r.params)) names.add(k);
  return [...names].sort().filter((k) => all || new Set(runs.map((r) => r.params[k] ?? "\u0000")).size > 1);
}

/**
 * The params split for many runs: `differing` (names whose values are not all equal, a run
 * without the param counting as a value of its own), sorted, and `same` (name, value) for
 * those every run has with one value, sorted: shown as one line "same in all: ...".
 */
export function paramSplit(runs: Run[]): { differing: string[]; same: Array<[string, string]> } {
  const all = paramRows(runs, true);
  const differing: string[] = [];
  const same: Array<[string, string]> = [];
  for (const k of all) {
    const first = runs[0]?.params[k];
    if (first !== undefined && runs.every((r) => r.params[k] === first)) same.push([k, first]);
    else differing.push(k);
  }
  return { differing, same };
}

/** The smallest and largest of the values known (undefined: not known), when they differ. */
export function extremes(values: Array<number | undefined>): { min: number; max: number } | null {
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v === undefined || Number.isNaN(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return min < max ? { min, max } : null;
}

/** "max", "min" or "" for a value of a row whose extremes are `ex`. */
export function extremeOf(v: number | undefined, ex: { min: number; max: number } | null): "" | "min" | "max" {
  if (!ex || v === undefined) return "";
  return v === ex.max ? "max" : v === ex.min ? "min" : "";
}

/** Stage names in the order of the first run that has them. */
export function stageRows(runs: Run[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of runs) for (const s of r.stages) if (!seen.has(s.name)) { seen.add(s.name); out.push(s.name); }
  return out;
}

/** "stage.metric" -> latest value, for one run. */
export function metricMap(run: Run): Map<string, number> {
  const m = new Map<string, number>();
  for (const s of run.stages) for (const x of s.metrics) m.set(`${s.name}.${x.name}`, x.value);
  for (const [k, v] of Object.entries(run.summary_metrics)) if (!m.has(k)) m.set(k, v);
  return m;
}

/** Every metric name of any run, sorted by stage order then name. */
export function metricRows(runs: Run[]): string[] {
  const order = new Map(stageRows(runs).map((s, i) => [s, i]));
  const names = new Set<string>();
  for (const r of runs) for (const k of metricMap(r).keys()) names.add(k);
  const stageOf = (k: string) => order.get(k.slice(0, k.indexOf("."))) ?? 1e9;
  return [...names].sort((a, b) => stageOf(a) - stageOf(b) || a.localeCompare(b));
}

export function findStage(run: Run, name: string): Stage | undefined {
  return run.stages.find((s) => s.name === name);
}

/** A run or a stage, as far as its GPUs go. */
interface HoldsGpus { gpu_hours: number; gpu_usage: GpuUsage | null }

/** Whether it held a GPU: GPU-hours counted, or telemetry sampled. */
export function heldGpu(x: HoldsGpus): boolean {
  return x.gpu_hours > 0 || x.gpu_usage !== null;
}

/** Whether any of the runs (or any of their stages) held a GPU: Compare's GPU section is shown then. */
export function anyHeldGpu(runs: Run[]): boolean {
  return runs.some((r) => heldGpu(r) || r.stages.some(heldGpu));
}

/** The stages that held a GPU in any of the runs, in stage order. */
export function gpuStageRows(runs: Run[]): string[] {
  return stageRows(runs).filter((name) => runs.some((r) => {
    const s = findStage(r, name);
    return s !== undefined && heldGpu(s);
  }));
}

/** The idle GPU-hours as % of the GPU time sampled; null when nothing was sampled. */
export function idleShare(u: GpuUsage | null): number | null {
  return u && u.sampled_gpu_hours > 0 ? (100 * u.idle_gpu_hours) / u.sampled_gpu_hours : null;
}

/** "3.1 idle (25 %)"; "" without telemetry. */
export function idleText(u: GpuUsage | null): string {
  if (!u) return "";
  const share = idleShare(u);
  return `${formatGpuHours(u.idle_gpu_hours)} idle${share === null ? "" : ` (${formatPercent(share)})`}`;
}

export type GpuMeasure = "gpu_hours" | "idle" | "mean_sm" | "peak_mem" | "energy";

/** The GPU rows of a run, and of each stage that held a GPU, with their labels. */
export const RUN_GPU_MEASURES: Array<[GpuMeasure, string]> = [
  ["gpu_hours", "GPU-hours"], ["idle", "idle GPU-hours"], ["mean_sm", "mean SM util"], ["energy", "energy"],
];
export const STAGE_GPU_MEASURES: Array<[GpuMeasure, string]> = [
  ["mean_sm", "mean SM util"], ["peak_mem", "peak memory"], ["energy", "energy"], ["idle", "idle GPU-hours"],
];

/** A measure as a number (GPU-hours, %, bytes, kWh), what Δ compares; null: not known. */
export function gpuValue(x: HoldsGpus | undefined, m: GpuMeasure): number | null {
  if (!x) return null;
  const u = x.gpu_usage;
  switch (m) {
    case "gpu_hours": return heldGpu(x) ? x.gpu_hours : null;
    case "idle": return u ? u.idle_gpu_hours : null;
    case "mean_sm": return u && u.mean_sm_util_pct >= 0 ? u.mean_sm_util_pct : null;
    case "peak_mem": return u && u.peak_mem_used_bytes >= 0 ? u.peak_mem_used_bytes : null;
    case "energy": return u ? u.energy_kwh : null;
  }
}

/** A measure as shown: "2.5", "1 (25 %)", "61 %", "70.0 GiB of 140 GiB", "2.00 kWh"; "–" when not known. */
export function gpuText(x: HoldsGpus | undefined, m: GpuMeasure): string {
  const v = gpuValue(x, m);
  if (v === null || !x) return "–";
  const u = x.gpu_usage;
  switch (m) {
    case "gpu_hours": return formatGpuHours(v);
    case "idle": {
      const share = idleShare(u);
      return share === null ? formatGpuHours(v) : `${formatGpuHours(v)} (${formatPercent(share)})`;
    }
    case "mean_sm": return formatPercent(v);
    case "peak_mem": return u && u.mem_total_bytes > 0 ? `${formatBytes(v)} of ${formatBytes(u.mem_total_bytes)}` : formatBytes(v);
    case "energy": return formatEnergy(v * 1000);
  }
}

/** b's measure against a's: "+0.5 (+20.0%)", memory as "+63.0 GiB (+90.0%)"; "" unless both are known. */
export function gpuDelta(a: HoldsGpus | undefined, b: HoldsGpus | undefined, m: GpuMeasure): string {
  const va = gpuValue(a, m);
  const vb = gpuValue(b, m);
  if (va === null || vb === null) return "";
  if (m !== "peak_mem") return formatDelta(va, vb);
  const d = vb - va;
  if (d === 0) return "=";
  const pct = va > 0 ? ` (${d > 0 ? "+" : "−"}${formatNumber(Math.abs(d / va) * 100, 1)}%)` : "";
  return `${d > 0 ? "+" : "−"}${formatBytes(Math.abs(d))}${pct}`;
}
