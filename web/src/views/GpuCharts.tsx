// A stage's GPUs (GET .../gpus): per GPU an SVG chart of SM utilisation and memory used over
// the stage's time, attempt boundaries as dashed lines, and the stage's summary with a row per
// attempt and GPU. Draws nothing when the stage has no GPU telemetry. Polled while it runs.
import { listGpuSeries } from "../api/client";
import type { GpuUsage, StageGpus } from "../api/types";
import { formatBytes, formatDuration, formatGpuHours } from "../lib/format";
import {
  attemptStarts, chartsByGpu, formatEnergy, formatPercent, memPercent, polylines, timeDomain,
  type GpuChart,
} from "../lib/gpu";
import { useResource } from "../store/resource";
import { ErrorBox, KeyValues, Section } from "./common";

const W = 360;
const H = 120;
const PAD = { l: 34, r: 8, t: 8, b: 18 };

function Chart({ c, domain, starts }: {
  c: GpuChart; domain: [number, number]; starts: Array<{ attempt: number; t_ms: number }>;
}) {
  const [t0, t1] = domain;
  const x = (t: number) => PAD.l + ((t - t0) / (t1 - t0)) * (W - PAD.l - PAD.r);
  const y = (v: number) => PAD.t + (1 - Math.min(100, Math.max(0, v)) / 100) * (H - PAD.t - PAD.b);
  const sm = c.stretches.flatMap((s) => polylines(s.points, (p) => p.sm_util, x, y));
  const mem = c.stretches.flatMap((s) => polylines(s.points, (p) => memPercent(p, c.mem_total), x, y));
  return (
    <figure class="chart gpu-chart" data-gpu={c.key}>
      <figcaption>
        <span class="mono">GPU {c.gpu_index} · {c.agent_id}</span>
        <span class="small muted mono" title={c.uuid}>{c.uuid.slice(0, 12)}</span>
      </figcaption>
      <svg width={W} height={H} viewBox={`0 0 ${W} ${H}`} role="img"
           aria-label={`GPU ${c.gpu_index} of ${c.agent_id}: SM utilisation and memory used`}>
        <rect class="plot" x={PAD.l} y={PAD.t} width={W - PAD.l - PAD.r} height={H - PAD.t - PAD.b} />
        {[0, 50, 100].map((v) => (
          <g key={v}>
            <line class="gridline" x1={PAD.l} x2={W - PAD.r} y1={y(v)} y2={y(v)} />
            <text class="axis" x={PAD.l - 4} y={y(v) + 3} text-anchor="end">{v}%</text>
          </g>))}
        {starts.slice(1).map((a) => (
          <g key={a.attempt} class="attempt-start" data-attempt={a.attempt}>
            <line x1={x(a.t_ms)} x2={x(a.t_ms)} y1={PAD.t} y2={H - PAD.b} />
            <text class="axis" x={x(a.t_ms) + 3} y={PAD.t + 9}>#{a.attempt}</text>
          </g>))}
        {mem.map((pts, i) => <polyline key={`m${i}`} class="line mem" points={pts} />)}
        {sm.map((pts, i) => <polyline key={`s${i}`} class="line sm" points={pts} />)}
        <text class="axis" x={PAD.l} y={H - 4}>0</text>
        <text class="axis" x={W - PAD.r} y={H - 4} text-anchor="end">{formatDuration((t1 - t0) / 1000)}</text>
      </svg>
    </figure>
  );
}

function summaryRows(s: GpuUsage): Array<[string, string]> {
  return [
    ["mean SM util", formatPercent(s.mean_sm_util_pct)],
    ["peak memory", `${formatBytes(s.peak_mem_used_bytes)}${s.mem_total_bytes > 0 ? ` of ${formatBytes(s.mem_total_bytes)}` : ""}`],
    ["energy", formatEnergy(s.energy_kwh * 1000)],
    ["GPU-hours idle", `${formatGpuHours(s.idle_gpu_hours)} of ${formatGpuHours(s.sampled_gpu_hours)} sampled`],
  ];
}

export function GpuSection({ runId, stage, live }: { runId: number; stage: string; live: boolean }) {
  const res = useResource<StageGpus>(`gpus:${runId}:${stage}`, () => listGpuSeries(runId, stage),
                                     live ? 10_000 : 0);
  const g = res.data;
  if (!g || g.series.length === 0) return res.error ? <ErrorBox error={res.error} /> : null;
  const domain = timeDomain(g.series);
  const starts = attemptStarts(g.series);
  return (
    <Section title="GPUs">
      <ErrorBox error={res.error} />
      <div class="gpu-summary" data-testid="gpu-summary">
        <KeyValues rows={summaryRows(g.summary)} />
        <p class="small muted legend"><span class="key sm" /> SM utilisation <span class="key mem" /> memory used
          {starts.length > 1 && <> · dashed: a new attempt</>}</p>
      </div>
      {domain && <div class="charts gpu-charts">
        {chartsByGpu(g.series).map((c) => <Chart key={c.key} c={c} domain={domain} starts={starts} />)}
      </div>}
      <table class="grid gpu-series" data-testid="gpu-series">
        <thead><tr><th class="num">Attempt</th><th class="num">GPU</th><th>Agent</th>
          <th class="num">Mean SM</th><th class="num">Peak memory</th><th class="num">Energy</th>
          <th class="num">Idle</th></tr></thead>
        <tbody>{g.series.map((s) => (
          <tr key={`${s.attempt_id}:${s.gpu_index}`}><td class="num">{s.attempt}</td>
            <td class="num">{s.gpu_index}</td><td>{s.agent_id}</td>
            <td class="num">{formatPercent(s.summary.mean_sm_util_pct)}</td>
            <td class="num">{formatBytes(s.summary.peak_mem_used_bytes)}</td>
            <td class="num">{formatEnergy(s.summary.energy_kwh * 1000)}</td>
            <td class="num">{formatDuration(s.summary.idle_gpu_hours * 3600)}</td></tr>))}
        </tbody>
      </table>
    </Section>
  );
}
