// Compare: two or more runs side by side — the params that differ (all on request), each
// stage's state and where it was reused from, what each cost, what their GPUs did, every
// metric with the difference to the first run, and a bar chart of the chosen metrics (the
// campaign's by default).
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { getRun } from "../api/client";
import type { Run } from "../api/types";
import {
  anyHeldGpu, CAMPAIGN_METRICS, extremes, findStage, gpuDelta, gpuStageRows, gpuText, metricMap,
  metricRows, paramSplit, RUN_GPU_MEASURES, STAGE_GPU_MEASURES, stageRows,
} from "../lib/compare";
import { parseRunIds, workflowMismatch } from "../lib/filters";
import { formatDelta, formatDeltaDuration, formatDuration, formatGpuHours, formatMetric } from "../lib/format";
import { href, navigate, replaceHash } from "../lib/router";
import { provenanceRows } from "../lib/provenance";
import { isTerminalRun } from "../lib/status";
import { useResource } from "../store/resource";
import { Badge, Empty, ErrorBox, Section } from "./common";
import { BarChart } from "./BarChart";
import { MetricCell, SameInAll, WIDE_COMPARE_RUNS, WideCompare } from "./CompareWide";

/** Compare's options besides the runs, as in its URL: every param or the differing, the charted metrics. */
interface CompareOptions { all: boolean; metric: string[] }

function Picker({ ids, opts }: { ids: number[]; opts: CompareOptions }) {
  const [text, setText] = useState(ids.join(", "));
  const parsed = parseRunIds(text);
  const go = () => {
    if (!parsed.error && parsed.ids.length) navigate(href.compare(parsed.ids, opts));
  };
  return (
    <form class="filters" onSubmit={(e) => { e.preventDefault(); go(); }}>
      <label class="grow">Runs to compare
        <input value={text} placeholder="e.g. 3, 4" data-search data-testid="compare-runs"
               aria-invalid={parsed.error ? "true" : undefined}
               onInput={(e) => setText((e.target as HTMLInputElement).value)} />
        {parsed.error && <span class="field-error" data-testid="runs-error">{parsed.error}</span>}
      </label>
      <button type="submit">Compare</button>
    </form>
  );
}

function loadRuns(ids: number[]): Promise<Run[]> {
  return Promise.all(ids.map((id) => getRun(id, true)));  // attempts: their environments
}

function RunHeads({ runs }: { runs: Run[] }) {
  return (
    <tr>
      <th />
      {runs.map((r) => (
        <th key={r.id} class="runcol"><a href={href.run(r.id)}>run {r.id}</a> <Badge state={r.status} />
          {r.parent_run_id ? <div class="muted small">pivot of {r.parent_run_id}</div> : null}</th>
      ))}
      {runs.slice(1).map((r) => <th key={`d${r.id}`} class="num">Δ {r.id} vs {runs[0].id}</th>)}
    </tr>
  );
}

function Campaign({ runs }: { runs: Run[] }) {
  const maps = runs.map(metricMap);
  const rows = CAMPAIGN_METRICS.filter(([k]) => maps.some((m) => m.has(k)));
  if (!rows.length) return null;
  return (
    <Section title="Speculative decoding">
      <table class="grid compare campaign" data-testid="campaign">
        <thead><RunHeads runs={runs} /></thead>
        <tbody>
          {rows.map(([k, label]) => (
            <tr key={k} data-metric={k}>
              <th>{label}<div class="muted small mono">{k}</div></th>
              {maps.map((m, i) => <td key={i} class="num big">{m.has(k) ? formatMetric(m.get(k)!) : "–"}</td>)}
              {maps.slice(1).map((m, i) => (
                <td key={`d${i}`} class="num delta">{m.has(k) && maps[0].has(k) ? formatDelta(maps[0].get(k)!, m.get(k)!) : ""}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </Section>
  );
}

// Listed first: an engine upgrade or uncommitted code explains a difference the params do not.
function Provenance({ runs }: { runs: Run[] }) {
  const rows = provenanceRows(runs);
  if (!rows.length) return null;
  return (
    <Section title="What differs besides params">
      <table class="grid compare" data-testid="compare-provenance">
        <thead><RunHeads runs={runs} /></thead>
        <tbody>{rows.map((row) => (
          <tr key={row.what} class="differs" data-what={row.what}>
            <th>{row.what}</th>
            {row.values.map((v, i) => <td key={i} class="mono">{v}</td>)}
            {runs.slice(1).map((r) => <td key={`d${r.id}`} />)}
          </tr>))}
        </tbody>
      </table>
    </Section>
  );
}

/** The params that differ first, then (all) the rest, or one line of those the same in all. */
function Params({ runs, all }: { runs: Run[]; all: boolean }) {
  const { differing, same } = paramSplit(runs);
  const rows = all ? [...differing, ...same.map(([k]) => k)] : differing;
  return (
    <>
      {rows.length === 0 ? <Empty>All params are the same.</Empty> : (
        <table class="grid compare" data-testid="compare-params"><thead><RunHeads runs={runs} /></thead>
          <tbody>{rows.map((k, i) => (
            <tr key={k} data-param={k} class={i < differing.length ? "differs" : ""}>
              <th class="mono">{k}</th>
              {runs.map((r) => <td key={r.id} class="mono">{r.params[k] ?? "–"}</td>)}
              {runs.slice(1).map((r) => <td key={`d${r.id}`} />)}
            </tr>))}
          </tbody></table>)}
      {!all && <SameInAll same={same} />}
    </>
  );
}

function ParamsSection({ runs, all, setAll, children, title }: {
  runs: Run[]; all: boolean; setAll: (on: boolean) => void; children: ComponentChildren; title?: string;
}) {
  return (
    <Section title={title ?? (all ? "Params" : "Params that differ")} actions={
      <label class="check"><input type="checkbox" checked={all} data-testid="all-params"
        onChange={(e) => setAll((e.target as HTMLInputElement).checked)} /> show all</label>}>
      {runs.length > 0 && children}
    </Section>
  );
}

function Stages({ runs }: { runs: Run[] }) {
  return (
    <Section title="Stages and cost">
      <table class="grid compare" data-testid="compare-stages">
        <thead><RunHeads runs={runs} /></thead>
        <tbody>
          {stageRows(runs).map((name) => (
            <tr key={name} data-stage={name}>
              <th>{name}</th>
              {runs.map((r) => {
                const s = findStage(r, name);
                if (!s) return <td key={r.id} class="muted">–</td>;
                return (
                  <td key={r.id}>
                    <a href={href.stage(r.id, name)}><Badge state={s.status} /></a>
                    {s.cached_from_run_id > 0 && <span class="note"> from run {s.cached_from_run_id}</span>}
                    <div class="muted small">{formatDuration(s.wall_seconds)} · {formatGpuHours(s.gpu_hours)} GPU-h</div>
                  </td>
                );
              })}
              {runs.slice(1).map((r) => {
                const a = findStage(runs[0], name);
                const b = findStage(r, name);
                return <td key={`d${r.id}`} class="num delta">{a && b ? formatDeltaDuration(a.wall_seconds, b.wall_seconds) : ""}</td>;
              })}
            </tr>
          ))}
          <tr class="total">
            <th>whole run</th>
            {runs.map((r) => <td key={r.id}>{formatDuration(r.wall_seconds)} · {formatGpuHours(r.gpu_hours)} GPU-h</td>)}
            {runs.slice(1).map((r) => <td key={`d${r.id}`} class="num delta">{formatDeltaDuration(runs[0].wall_seconds, r.wall_seconds)}</td>)}
          </tr>
        </tbody>
      </table>
    </Section>
  );
}

/** What the GPUs did: per run, then per stage that held a GPU in any run; none held: nothing. */
function Gpus({ runs }: { runs: Run[] }) {
  if (!anyHeldGpu(runs)) return null;
  const stages = gpuStageRows(runs);
  return (
    <Section title="GPUs">
      <table class="grid compare" data-testid="compare-gpus">
        <thead><RunHeads runs={runs} /></thead>
        <tbody>
          {RUN_GPU_MEASURES.map(([m, label]) => (
            <tr key={m} data-gpu={m}>
              <th>{label}</th>
              {runs.map((r) => <td key={r.id} class="num">{gpuText(r, m)}</td>)}
              {runs.slice(1).map((r) => <td key={`d${r.id}`} class="num delta">{gpuDelta(runs[0], r, m)}</td>)}
            </tr>))}
          {stages.flatMap((name) => STAGE_GPU_MEASURES.map(([m, label], i) => (
            <tr key={`${name}:${m}`} class={i === 0 ? "group-start" : ""} data-stage={name} data-gpu={m}>
              <th>{i === 0 ? <b>{name}</b> : ""} <span class="muted">{label}</span></th>
              {runs.map((r) => <td key={r.id} class="num">{gpuText(findStage(r, name), m)}</td>)}
              {runs.slice(1).map((r) => (
                <td key={`d${r.id}`} class="num delta">{gpuDelta(findStage(runs[0], name), findStage(r, name), m)}</td>))}
            </tr>)))}
        </tbody>
      </table>
    </Section>
  );
}

function Metrics({ runs }: { runs: Run[] }) {
  const maps = runs.map(metricMap);
  const rows = metricRows(runs);
  const ex = new Map(rows.map((k) => [k, extremes(maps.map((m) => m.get(k)))]));
  return (
    <Section title="Every metric">
      {rows.length === 0 ? <Empty>No metrics.</Empty> : (
        <table class="grid compare" data-testid="compare-metrics">
          <thead><RunHeads runs={runs} /></thead>
          <tbody>{rows.map((k) => (
            <tr key={k} data-metric={k}>
              <th class="mono">{k}</th>
              {maps.map((m, i) => <MetricCell key={i} v={m.get(k)} ex={ex.get(k) ?? null} />)}
              {maps.slice(1).map((m, i) => (
                <td key={`d${i}`} class="num delta">{m.has(k) && maps[0].has(k) ? formatDelta(maps[0].get(k)!, m.get(k)!) : ""}</td>
              ))}
            </tr>))}
          </tbody>
        </table>)}
    </Section>
  );
}

export function CompareView({ ids, query }: { ids: number[]; query: URLSearchParams }) {
  const key = ids.length ? `compare:${ids.join(",")}` : null;
  const res = useResource<Run[]>(key, () => loadRuns(ids), 5000);
  const runs = res.data ?? [];
  const chosen = (query.get("metric") ?? "").split(",").filter(Boolean);
  const opts: CompareOptions = { all: query.get("all") === "1", metric: chosen };
  const setAll = (all: boolean) => replaceHash(href.compare(ids, { ...opts, all }));
  const allMetrics = metricRows(runs);
  const campaign = CAMPAIGN_METRICS.map(([k]) => k).filter((k) => allMetrics.includes(k));
  const bars = chosen.length ? chosen : campaign.length ? campaign : allMetrics.slice(0, 5);
  const live = runs.some((r) => !isTerminalRun(r.status));
  return (
    <div>
      <div class="page-head">
        <div>
          <div class="crumbs"><a href="#/runs">Runs</a> / compare</div>
          <h1>Compare {ids.length > WIDE_COMPARE_RUNS ? `${ids.length} runs`
            : ids.length ? ids.map((i) => `run ${i}`).join(" · ") : "runs"}</h1>
          {live && <p class="desc">Some runs are still running; values update every few seconds.</p>}
        </div>
      </div>
      <Picker key={ids.join(",")} ids={ids} opts={opts} />
      <ErrorBox error={res.error} />
      {ids.length < 2 && <Empty>Pick two or more runs (or tick them on the Runs page).</Empty>}
      {workflowMismatch(runs) && (
        <p class="note warn" data-testid="workflow-mismatch">{workflowMismatch(runs)}</p>)}
      {ids.length > WIDE_COMPARE_RUNS && (
        <>
          <p class="muted" data-testid="compare-wide-note">
            {ids.length} runs: a row per run. <a href={href.metrics({ runs: ids })}>Chart a metric of these runs</a>
          </p>
          <ParamsSection runs={runs} all={opts.all} setAll={setAll}
                         title={`Runs, params${opts.all ? "" : " that differ"} and metrics`}>
            <WideCompare key={ids.join(",")} runs={runs} all={opts.all} />
          </ParamsSection>
          <Provenance runs={runs} />
        </>
      )}
      {ids.length <= WIDE_COMPARE_RUNS && runs.length >= 1 && (
        <>
          <Provenance runs={runs} />
          <Campaign runs={runs} />
          {bars.length > 0 && (
            <Section title="Chosen metrics">
              <BarChart runs={runs.map((r) => r.id)} metrics={bars}
                        values={runs.map((r) => { const m = metricMap(r); return bars.map((k) => m.get(k)); })} />
            </Section>
          )}
          <ParamsSection runs={runs} all={opts.all} setAll={setAll}><Params runs={runs} all={opts.all} /></ParamsSection>
          <Stages runs={runs} />
          <Gpus runs={runs} />
          <Metrics runs={runs} />
          {ids.length >= 2 && <p class="muted small"><a href={href.metrics({ runs: ids })} data-testid="compare-chart">Chart a metric of these runs by step</a></p>}
        </>
      )}
    </div>
  );
}
