// A stage's metrics: one uPlot chart per metric name, value against step, updated live by
// polling GET .../metrics?after=CURSOR (only new points come back).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { listMetrics } from "../api/client";
import type { Metric } from "../api/types";
import { formatMetric } from "../lib/format";
import { requestRender } from "../store/scheduler";
import { Empty } from "./common";

const POLL_MS = 2000;

/** Points per metric name, x = step (or the point's index when the stage reports no steps). */
export function seriesByName(points: Metric[]): Map<string, [number[], number[]]> {
  const out = new Map<string, [number[], number[]]>();
  const grouped = new Map<string, Metric[]>();
  for (const p of points) {
    if (!grouped.has(p.name)) grouped.set(p.name, []);
    grouped.get(p.name)!.push(p);
  }
  for (const [name, ps] of grouped) {
    const stepped = ps.some((p) => p.step !== 0);
    const sorted = stepped ? [...ps].sort((a, b) => a.step - b.step || a.ts_ms - b.ts_ms) : ps;
    out.set(name, [sorted.map((p, i) => (stepped ? p.step : i)), sorted.map((p) => p.value)]);
  }
  return out;
}

function Chart({ name, data }: { name: string; data: [number[], number[]] }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    if (!el.current) return;
    plot.current = new uPlot({
      width: 320, height: 150, legend: { show: false }, cursor: { points: { size: 5 } },
      scales: { x: { time: false } },
      axes: [
        { stroke: "#6b7280", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e5e7eb" }, size: 28 },
        { stroke: "#6b7280", grid: { stroke: "#eef0f3" }, ticks: { stroke: "#e5e7eb" }, size: 48,
          values: (_u, vals) => vals.map((v) => formatMetric(v)) },
      ],
      series: [{}, { stroke: "#2563eb", width: 2, fill: "rgba(37,99,235,0.08)", points: { show: data[0].length < 40 } }],
    }, data, el.current);
    return () => plot.current?.destroy();
  }, []);
  useEffect(() => {
    plot.current?.setData(data);
  });
  const last = data[1].length ? data[1][data[1].length - 1] : NaN;
  return (
    <figure class="chart" data-metric={name}>
      <figcaption><span class="mono">{name}</span><span class="val">{formatMetric(last)}</span></figcaption>
      <div ref={el} />
    </figure>
  );
}

export function MetricCharts({ runId, stage, live }: { runId: number; stage: string; live: boolean }) {
  const state = useRef<{ points: Metric[]; cursor: string; key: string }>({ points: [], cursor: "", key: "" });
  const key = `${runId}/${stage}`;
  if (state.current.key !== key) state.current = { points: [], cursor: "", key };
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const s = state.current;
    const poll = async () => {
      try {
        for (;;) {
          const page = await listMetrics(runId, stage, s.cursor);
          if (stopped) return;
          s.points.push(...page.points);
          if (page.next_cursor) s.cursor = page.next_cursor;
          if (page.points.length < 1000) break;
        }
        requestRender();
      } catch {
        /* shown by the connection state; try again on the next poll */
      }
      if (!stopped && live) timer = setTimeout(poll, POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, live]);
  const series = seriesByName(state.current.points);
  if (series.size === 0) return <Empty>No metrics reported.</Empty>;
  return (
    <div class="charts" data-testid="metric-charts">
      {[...series.entries()].map(([name, d]) => <Chart key={name} name={name} data={d} />)}
    </div>
  );
}
