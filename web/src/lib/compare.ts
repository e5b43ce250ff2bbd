// What Compare shows, computed from two or more runs: params that differ, each stage's state
// per run, and every metric ("stage.metric", latest value) side by side.
import type { Run, Stage } from "../api/types";

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
