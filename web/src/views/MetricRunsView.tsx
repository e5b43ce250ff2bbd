// One metric across runs (#/metrics): the chosen runs, or a workflow's last runs, each run's
// series by step on one chart (a legend entry per run, named by the params that differ, that
// hides or shows it; log scale; hover says run, step and value), and the chart over runs: the
// final, least or greatest value of each run in submission order. One request for every
// series (GET /metric-series), polled while the page is open.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { getMetricSeries, getRun, getRunTotals, listRuns, MAX_SERIES_RUNS } from "../api/client";
import type { MetricSeries, MetricSeriesResponse, Run } from "../api/types";
import { metricRows } from "../lib/compare";
import { parseMetricFilter } from "../lib/filters";
import { formatMetric } from "../lib/format";
import {
  alignSeries, allPositive, parseRunValue, RUN_VALUES, runLabels, runValue, seriesColour, stepSeries,
  workflowRuns, type RunValue,
} from "../lib/metricruns";
import { href, parseMetricsPage, replaceHash, type MetricsPageState } from "../lib/router";
import { useResource } from "../store/resource";
import { Empty, ErrorBox, Section } from "./common";
import { chartColour } from "./MetricCharts";

const DEFAULT_LAST = 50;
// Steps and run positions are whole numbers: the x axis ticks 1, 2, 5, 10, 20, 50, ... apart.
const WHOLE_INCRS = Array.from({ length: 30 }, (_, i) => [1, 2, 5][i % 3] * 10 ** Math.floor(i / 3));

async function loadRuns(st: MetricsPageState, last: number): Promise<Run[]> {
  if (st.runs) return Promise.all(st.runs.slice(0, MAX_SERIES_RUNS).map((id) => getRunTotals(id)));
  const page = await listRuns({ workflow: st.workflow, limit: 500 });
  return workflowRuns(page.runs, st.workflow ?? "", last);
}

function axes(format: (v: number) => string): uPlot.Axis[] {
  const ink = chartColour("--muted", "#6b7280");
  const grid = chartColour("--line2", "#eef0f3");
  const tick = chartColour("--line", "#e5e7eb");
  return [
    { stroke: ink, grid: { stroke: grid }, ticks: { stroke: tick }, size: 32, incrs: WHOLE_INCRS,
      values: (_u, vals) => vals.map(format) },
    { stroke: ink, grid: { stroke: grid }, ticks: { stroke: tick }, size: 56,
      values: (_u, vals) => vals.map((v) => formatMetric(v)) },
  ];
}

/** The visible series nearest the pointer at its x: its index (1-based, as uPlot's), or 0. */
function nearestSeries(u: uPlot): number {
  const idx = u.cursor.idx;
  const top = u.cursor.top ?? -1;
  if (idx === null || idx === undefined || top < 0) return 0;
  let best = 0;
  let bestDist = Infinity;
  for (let i = 1; i < u.series.length; i++) {
    const v = u.data[i][idx];
    if (!u.series[i].show || v === null || v === undefined) continue;
    const d = Math.abs(u.valToPos(v, "y") - top);
    if (d < bestDist) { best = i; bestDist = d; }
  }
  return best;
}

interface PlotProps {
  data: uPlot.AlignedData; labels: string[]; log: boolean; points: boolean;
  xFormat: (v: number) => string; hover: (series: number, idx: number) => string;
  hidden?: Set<number>; testid: string;
}

/** A uPlot chart of several series; the line under it says what the pointer is on. */
function Plot({ data, labels, log, points, xFormat, hover, hidden, testid }: PlotProps) {
  const el = useRef<HTMLDivElement>(null);
  const readout = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const hoverRef = useRef(hover);
  hoverRef.current = hover;
  const shape = `${labels.join("\n")}|${log}`;
  useEffect(() => {
    if (!el.current) return;
    const width = Math.max(480, Math.min(1100, el.current.clientWidth || 900));
    plot.current = new uPlot({
      width, height: 320, legend: { show: false },
      cursor: { points: { size: 6 }, focus: { prox: 24 } }, focus: { alpha: 0.35 },
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      axes: axes(xFormat),
      series: [{}, ...labels.map((label, i) => ({
        label, stroke: seriesColour(i), width: 1.5, spanGaps: true,
        show: !hidden?.has(i), points: { show: points, size: 5 },
      }))],
      hooks: {
        setCursor: [(u: uPlot) => {
          const i = nearestSeries(u);
          if (readout.current) {
            readout.current.textContent = i && u.cursor.idx != null ? hoverRef.current(i - 1, u.cursor.idx) : "";
          }
        }],
      },
    }, data, el.current);
    return () => plot.current?.destroy();
  }, [shape]);
  useEffect(() => { plot.current?.setData(data); });
  useEffect(() => {
    const u = plot.current;
    if (!u) return;
    labels.forEach((_, i) => {
      const show = !hidden?.has(i);
      if (u.series[i + 1].show !== show) u.setSeries(i + 1, { show });
    });
  });
  return (
    <div class="multi-chart" data-testid={testid} data-series={labels.length}>
      <div ref={el} />
      <div ref={readout} class="hover-readout mono small" data-testid={`${testid}-hover`} />
    </div>
  );
}

function StepChart({ series, labels, log }: { series: MetricSeries[]; labels: string[]; log: boolean }) {
  const [hidden, setHidden] = useState<Set<number>>(new Set());
  const drawn = series.map(stepSeries);
  const data = alignSeries(drawn);
  const canLog = allPositive(data.slice(1) as Array<Array<number | null>>);
  if (drawn.every(([x]) => x.length <= 1)) {
    return <Empty>Each run has at most one value of this metric: its value per run is under “Over runs”.</Empty>;
  }
  const toggle = (i: number) => {
    const n = new Set(hidden);
    if (n.has(i)) n.delete(i); else n.add(i);
    setHidden(n);
  };
  return (
    <>
      {log && !canLog && <p class="note warn">A value is 0 or less: drawn on a linear scale.</p>}
      <Plot data={data as uPlot.AlignedData} labels={labels} log={log && canLog} testid="step-chart"
            points={data[0].length < 40} hidden={hidden} xFormat={(v) => String(v)}
            hover={(i, idx) => {
              const v = data[i + 1][idx];
              return `${labels[i]} · step ${data[0][idx]} · ${v === null ? "–" : formatMetric(v)}`;
            }} />
      <ul class="series-legend" data-testid="series-legend">
        {series.map((s, i) => (
          <li key={s.run_id} data-run={s.run_id} data-shown={hidden.has(i) ? "false" : "true"}
              data-points={drawn[i][0].length} class={hidden.has(i) ? "off" : ""}>
            <button type="button" class="link" onClick={() => toggle(i)}
                    title={hidden.has(i) ? "show this run" : "hide this run"}>
              <span class="swatch" style={{ background: seriesColour(i) }} />
              <span class="label">{labels[i]}</span>
            </button>
            {" "}<a class="small" href={href.run(s.run_id)}>open</a>
            {s.error && <span class="muted small"> — {s.error}</span>}
            {s.thinned && <span class="muted small"> — {drawn[i][0].length.toLocaleString("en-US")} of {s.total_points.toLocaleString("en-US")} points drawn</span>}
          </li>))}
      </ul>
    </>
  );
}

function OverRunsChart({ series, labels, which, log }:
    { series: MetricSeries[]; labels: string[]; which: RunValue; log: boolean }) {
  const withValue = series.map((s, i) => ({ s, i, v: runValue(s, which) })).filter((x) => x.v !== null);
  if (withValue.length === 0) return <Empty>No run has a value of this metric.</Empty>;
  const xs = withValue.map((_, k) => k);
  const ys = withValue.map((x) => x.v);
  const canLog = allPositive([ys]);
  const word = RUN_VALUES.find(([k]) => k === which)![1];
  return (
    <>
      <Plot data={[xs, ys] as uPlot.AlignedData} labels={[`${word} value`]} log={log && canLog} points
            testid="over-runs-chart"
            xFormat={(k) => (Number.isInteger(k) && withValue[k] ? String(withValue[k].s.run_id) : "")}
            hover={(_i, idx) => `${labels[withValue[idx].i]} · ${word} ${formatMetric(ys[idx]!)}`} />
      <p class="muted small" data-testid="over-runs-note">
        x: run id, in submission order · {withValue.length} of {series.length} runs have a value
      </p>
    </>
  );
}

function Form({ st }: { st: MetricsPageState }) {
  const [runs, setRuns] = useState((st.runs ?? []).join(", "));
  const [workflow, setWorkflow] = useState(st.workflow ?? "");
  const [last, setLast] = useState(String(st.last ?? DEFAULT_LAST));
  const [metric, setMetric] = useState(st.metric ?? "");
  const parsed = parseMetricFilter(metric);
  const go = () => {
    if (parsed.error) return;
    const ids = runs.split(/[\s,]+/).map(Number).filter((n) => Number.isInteger(n) && n > 0);
    const n = Number(last);
    replaceHash(href.metrics({
      ...st, metric: parsed.metrics[0] ?? "",
      runs: workflow.trim() ? undefined : ids,
      workflow: workflow.trim() || undefined,
      last: workflow.trim() && Number.isInteger(n) && n > 0 ? n : undefined,
    }));
  };
  return (
    <form class="filters" onSubmit={(e) => { e.preventDefault(); go(); }}>
      <label class="grow">Metric
        <input data-testid="series-metric" data-search value={metric} placeholder="stage.metric, e.g. finetune.loss"
               list="metric-names" aria-invalid={parsed.error ? "true" : undefined}
               onInput={(e) => setMetric((e.target as HTMLInputElement).value)} />
        {parsed.error && <span class="field-error">{parsed.error}</span>}
      </label>
      <label>Runs
        <input data-testid="series-runs" value={runs} placeholder="e.g. 3, 4, 9" size={16}
               onInput={(e) => setRuns((e.target as HTMLInputElement).value)} />
      </label>
      <label>or workflow
        <input data-testid="series-workflow" value={workflow} placeholder="name" size={14}
               onInput={(e) => setWorkflow((e.target as HTMLInputElement).value)} />
      </label>
      <label>last
        <input value={last} size={4} inputMode="numeric" title={`at most ${MAX_SERIES_RUNS} runs`}
               onInput={(e) => setLast((e.target as HTMLInputElement).value)} />
      </label>
      <button type="submit" data-testid="series-apply">Draw</button>
    </form>
  );
}

export function MetricRunsView({ query }: { query: URLSearchParams }) {
  const st = parseMetricsPage(query);
  const last = Math.min(st.last ?? DEFAULT_LAST, MAX_SERIES_RUNS);
  const which = parseRunValue(st.value ?? null);
  const runsKey = st.runs ? `mruns:${st.runs.join(",")}` : st.workflow ? `mruns:wf:${st.workflow}:${last}` : null;
  const runsRes = useResource<Run[]>(runsKey, () => loadRuns(st, last), 10000);
  const runs = runsRes.data ?? [];
  const ids = st.runs ? st.runs.slice(0, MAX_SERIES_RUNS) : runs.map((r) => r.id);
  const newest = ids.length ? Math.max(...ids) : 0;
  const names = useResource<string[]>(newest ? `mnames:${newest}` : null,
    async () => metricRows([await getRun(newest)]), 0);
  const metric = st.metric ?? "";
  const seriesKey = ids.length && metric ? `mseries:${metric}:${ids.join(",")}` : null;
  const res = useResource<MetricSeriesResponse>(seriesKey, () => getMetricSeries(metric, ids), 10000);
  const series = res.data?.series ?? [];
  const labels = runLabels(series.map((s) => s.run_id), runs);
  const set = (patch: Partial<MetricsPageState>) => replaceHash(href.metrics({ ...st, ...patch }));
  const title = st.workflow ? `workflow ${st.workflow}, last ${last} runs` : ids.map((i) => `run ${i}`).join(" · ");
  return (
    <div>
      <div class="page-head">
        <div>
          <div class="crumbs"><a href="#/runs">Runs</a> / metrics</div>
          <h1>{metric || "A metric"} across runs</h1>
          {ids.length > 0 && <p class="desc">{title}</p>}
        </div>
        {ids.length >= 2 && (
          <div class="actions"><a href={href.compare(ids)} data-testid="series-compare">Compare these runs</a></div>)}
      </div>
      <Form key={query.toString()} st={st} />
      <datalist id="metric-names">{(names.data ?? []).map((n) => <option key={n} value={n} />)}</datalist>
      {st.runs && st.runs.length > MAX_SERIES_RUNS && (
        <p class="note warn">The first {MAX_SERIES_RUNS} runs are drawn ({st.runs.length} asked).</p>)}
      <ErrorBox error={runsRes.error ?? res.error} />
      {!runsKey && <Empty>Tick runs on the Runs page and press Chart, or name runs or a workflow above.</Empty>}
      {runsKey && !metric && (
        <Empty>Name a metric as stage.metric{names.data?.length ? `, e.g. ${names.data[0]}` : ""}.</Empty>)}
      {runsKey && runsRes.data && ids.length === 0 && <Empty>No runs of workflow “{st.workflow}”.</Empty>}
      {res.data && (
        <>
          <Section title="By step, one line per run" actions={
            <label class="check"><input type="checkbox" checked={!!st.log} data-testid="series-log"
              onChange={(e) => set({ log: (e.target as HTMLInputElement).checked })} /> log scale</label>}>
            <StepChart key={`${metric}:${st.log}`} series={series} labels={labels} log={!!st.log} />
          </Section>
          <Section title="Over runs" actions={
            <label>value of each run{" "}
              <select data-testid="series-value" value={which}
                      onChange={(e) => set({ value: (e.target as HTMLSelectElement).value })}>
                {RUN_VALUES.map(([k, word]) => <option key={k} value={k}>{word}</option>)}
              </select></label>}>
            <OverRunsChart key={`${metric}:${which}:${st.log}`} series={series} labels={labels}
                           which={which} log={!!st.log} />
          </Section>
        </>)}
    </div>
  );
}
