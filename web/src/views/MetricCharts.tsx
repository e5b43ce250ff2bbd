// A stage's metrics: one uPlot chart per metric name, value against step, updated live by
// polling GET .../metrics?after=CURSOR (only new points come back).
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { listMetrics } from "../api/client";
import type { Metric } from "../api/types";
import { formatMetric } from "../lib/format";
import { seriesByName } from "../lib/metrics";
import { requestRender } from "../store/scheduler";
import { Empty } from "./common";

const POLL_MS = 2000;

/** A metric of one value (no series to draw): the number itself, labelled. */
function SingleValue({ name, value, stepped }: { name: string; value: number; stepped: boolean }) {
  return (
    <figure class="chart single" data-metric={name} data-single="true">
      <figcaption><span class="mono">{name}</span></figcaption>
      <div class="single-value" data-testid="metric-value">{formatMetric(value)}</div>
      <div class="muted small">{stepped ? "one value so far" : "one value, reported without a step"}</div>
    </figure>
  );
}

/** A colour of the page's palette (styles.css; dark under prefers-color-scheme), for the canvas. */
export function chartColour(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

function Chart({ name, data }: { name: string; data: [number[], number[]] }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    if (!el.current) return;
    const ink = chartColour("--muted", "#6b7280");
    const grid = chartColour("--line2", "#eef0f3");
    const tick = chartColour("--line", "#e5e7eb");
    const line = chartColour("--accent", "#2563eb");
    plot.current = new uPlot({
      width: 320, height: 150, legend: { show: false }, cursor: { points: { size: 5 } },
      scales: { x: { time: false } },
      axes: [
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: tick }, size: 28 },
        { stroke: ink, grid: { stroke: grid }, ticks: { stroke: tick }, size: 48,
          values: (_u, vals) => vals.map((v) => formatMetric(v)) },
      ],
      series: [{}, { stroke: line, width: 2, fill: "rgba(88,140,235,0.10)", points: { show: data[0].length < 40 } }],
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
      {[...series.entries()].map(([name, d]) => d[0].length === 1
        ? <SingleValue key={name} name={name} value={d[1][0]}
                       stepped={state.current.points.some((p) => p.name === name && p.step >= 0)} />
        : <Chart key={name} name={name} data={d} />)}
    </div>
  );
}
