// Run: header with status and cost, actions, the DAG, the stage table, params and lineage.
import { useEffect, useState } from "preact/hooks";
import { cancel, getRun, getRunTotals, listChildren, retry } from "../api/client";
import type { EarlyStopSaving, GpuUsage, Run } from "../api/types";
import { runMissing, useRunWatch } from "../api/watch";
import { idleText } from "../lib/compare";
import { elapsedMs, formatDuration, formatGpuHours } from "../lib/format";
import { href, replaceHash, type RunViewState } from "../lib/router";
import { COUNT_ORDER, isRetryable, isTerminalRun, stateName } from "../lib/status";
import { filtering, runSweeps, stageMatches } from "../lib/sweep";
import { LARGE_RUN_STAGES } from "../lib/virtual";
import { lastEnvironment, sourceText } from "../lib/provenance";
import { tagSources, tagSourceText, tagsOnRun } from "../lib/tags";
import { useResource } from "../store/resource";
import { ConfirmButton } from "./Actions";
import { BudgetRaise, ClassControl } from "./RunControls";
import { Badge, Clock, Empty, KeyValues, NotFound, Section } from "./common";
import { DagView } from "./DagView";
import { StageTable } from "./StageTable";
import { TimelineView } from "./TimelineView";

/**
 * The run's GPU use: as the run says it, else read from the store (the live stream does not
 * carry it), again every minute while the run is live (longhauld writes telemetry once a minute).
 */
function useGpuUsage(run: Run): GpuUsage | null {
  const ask = run.gpu_usage === null && run.gpu_hours > 0;
  const res = useResource<Run>(ask ? `gpu-usage:${run.id}` : null, () => getRunTotals(run.id),
                               isTerminalRun(run.status) ? 0 : 60_000);
  return run.gpu_usage ?? res.data?.gpu_usage ?? null;
}

/**
 * What early stopping saved, as GET /runs/{id} says it (the live stream does not carry it),
 * asked again as stages end while the run is live.
 */
function useEarlyStopSaving(run: Run): EarlyStopSaving | null {
  // The watch's run has no stage_counts: its stages say it then.
  const stopped = run.stage_counts.stopped_early
    ?? run.stages.filter((s) => s.status === "STAGE_STOPPED_EARLY").length;
  const ask = run.early_stop_saving === null && stopped > 0;
  const res = useResource<Run>(ask ? `early-stop-saving:${run.id}:${stopped}` : null,
                               () => getRunTotals(run.id), isTerminalRun(run.status) ? 0 : 60_000);
  return run.early_stop_saving ?? res.data?.early_stop_saving ?? null;
}

function savingText(s: EarlyStopSaving): string {
  const what = s.gpu_hours > 0 ? `${formatGpuHours(s.gpu_hours)} GPU-h`
                               : `${formatDuration(s.wall_seconds)} stage time`;
  return `saved ~${what} (${Math.round(s.percent)} % of the sweep)`;
}

export function RunHeader({ run, crumb, state }: { run: Run; crumb?: string; state?: string }) {
  const el = elapsedMs(run.started_at_ms, run.ended_at_ms, Date.now());
  const idle = idleText(useGpuUsage(run));
  const saving = useEarlyStopSaving(run);
  return (
    <div class="page-head">
      <div>
        <div class="crumbs">
          <a href="#/runs">Runs</a> / <a href={href.run(run.id)}>run {run.id}</a>
          {crumb && <> / <span>{crumb}</span></>}
        </div>
        <h1>
          {crumb ?? <>Run {run.id} <span class="sub">{run.workflow_name}</span></>}{" "}
          <Badge state={state ?? run.status} />
        </h1>
        {run.description && !crumb && <p class="desc">{run.description}</p>}
      </div>
      <div class="stats">
        <div><span class="k">started</span><Clock ms={run.started_at_ms || run.created_at_ms} /></div>
        <div><span class="k">duration</span>{el >= 0 ? formatDuration(el / 1000) : "–"}</div>
        <div><span class="k">wall (stages)</span>{formatDuration(run.stages.reduce((a, s) => a + s.wall_seconds, 0))}</div>
        <div data-testid="run-gpu-hours"><span class="k">GPU-hours</span>{formatGpuHours(run.gpu_hours)}
          {run.budget && <span data-testid="run-budget" class={run.budget.reached ? "bad-text" : ""}
            title={`GPU-hour budget${run.budget.hard ? " (hard: running attempts are stopped when it is reached)" : ""}${run.budget.raised_by ? `; last set by ${run.budget.raised_by}` : ""}`}>
            {" "}of {formatGpuHours(run.budget.gpu_hours)} budget
            {run.budget.reached ? " — reached: no new attempts until an admin raises it" : ""}</span>}
          {run.budget_hold && <span data-testid="run-budget-hold" class="bad-text">
            {" "}— paused: {run.budget_hold}</span>}
          {idle && <span class="muted">, {idle}</span>}
          {!crumb && <BudgetRaise run={run} />}</div>
        {run.user && <div data-testid="run-submitter"><span class="k">submitted by</span>{run.user}
          {run.team && <span class="muted"> · team {run.team}</span>}
          {run.priority !== "normal" && <span class={`tag prio-${run.priority}`}>{run.priority}</span>}</div>}
        {!crumb && <ClassControl run={run} />}
        {saving && <div data-testid="run-early-stop-saving"
          title={`${saving.stopped_items} item(s) stopped early; estimated from the finished items' time per step`}>
          <span class="k">early stopping</span>{savingText(saving)}</div>}
      </div>
    </div>
  );
}

function Lineage({ run }: { run: Run }) {
  const children = useResource<Run[]>(`children:${run.id}`, () => listChildren(run.id), 10000);
  const kids = children.data ?? [];
  // The live stream carries no tags: the run's own answer has them.
  const head = useResource<Run>(`tags:${run.id}`, () => getRunTotals(run.id), 30000);
  const tags = tagsOnRun(head.data?.tags ?? []);
  const sources = tagSources(head.data?.tag_uses ?? []);
  return (
    <Section title="Lineage">
      <KeyValues rows={[
        ["parent", run.parent_run_id
          ? <span><a href={href.run(run.parent_run_id)}>run {run.parent_run_id}</a>{" · "}
              <a href={href.compare([run.parent_run_id, run.id])}>compare</a></span>
          : <span class="muted">none</span>],
        ["pivots", kids.length
          ? <span class="chips">{kids.map((k) => (
              <a key={k.id} class="chip" href={href.run(k.id)}>run {k.id} <Badge state={k.status} /></a>
            ))}</span>
          : <span class="muted">none yet</span>],
        ["tags", tags.length
          ? <span class="chips" data-testid="run-tags">{tags.map((t) => (
              <span key={t} class="chip">{t}</span>
            ))}</span>
          : <span class="muted">none</span>],
        ["from tags", sources.length
          ? <span class="chips" data-testid="run-tag-sources">{sources.map((s) => (
              <a key={s.tag} class="chip" href={href.run(s.run)}>{tagSourceText(s)}</a>
            ))}</span>
          : <span class="muted">none</span>],
      ]} />
    </Section>
  );
}

/**
 * The run's stages: a search box and a state filter over the graph (matches highlighted, the
 * rest dimmed) and the table (only the matches); Enter in the search box selects the next
 * match, which both bring into view. Up to LARGE_RUN_STAGES stages the graph and the table are
 * shown one above the other; past it the table (virtualised) is shown first and the graph is a
 * tab away. The timeline is a tab of its own in both (it lists the matches too).
 */
function Stages({ run, initial }: { run: Run; initial: RunViewState }) {
  const large = run.stages.length > LARGE_RUN_STAGES;
  const [tab, setTab] = useState<"table" | "graph" | "timeline">(initial.tab ?? "table");
  const [query, setQuery] = useState(initial.q ?? "");
  const [state, setState] = useState(initial.state ?? "");
  const [focused, setFocused] = useState<string | undefined>(initial.stage);
  // What is shown goes into the URL as it changes (no history entry per keystroke).
  useEffect(() => {
    replaceHash(href.run(run.id, {
      q: query || undefined, state: state || undefined, stage: focused,
      tab: tab === "table" || (tab === "graph" && !large) ? undefined : tab,
    }));
  }, [run.id, query, state, focused, tab, large]);
  const filtered = filtering(query, state);
  // The first page of a big run (GET /runs/{id}) until the stream has every stage.
  const pending = run.next_stage_page_token
    ? Object.values(run.stage_counts).reduce((a, b) => a + b, 0) - run.stages.length : 0;
  const shown = filtered ? run.stages.filter((s) => stageMatches(s, query, state)) : run.stages;
  // The states the run's stages are in, with their counts (the watch's run has no stage_counts).
  const counts: Record<string, number> = {};
  for (const s of run.stages) {
    const k = stateName(s.status);
    counts[k] = (counts[k] ?? 0) + 1;
  }
  const states = Object.keys(counts).sort((a, b) => COUNT_ORDER.indexOf(a) - COUNT_ORDER.indexOf(b));
  const selectNext = () => {
    if (!shown.length) return;
    const i = focused ? shown.findIndex((s) => s.name === focused) : -1;
    setFocused(shown[(i + 1) % shown.length].name);
  };
  const sweeps = runSweeps(run.stages);
  const graph = <DagView runId={run.id} stages={run.stages} query={query} state={state} selected={focused} />;
  const table = <StageTable runId={run.id} stages={shown} virtual={large} focused={focused} />;
  return (
    <Section title="Stages">
      <div class="stage-filter">
        <span class="seg-buttons" role="tablist">
          {large ? (<>
            <button type="button" role="tab" class={tab === "table" ? "on" : ""} data-testid="tab-table"
                    aria-selected={tab === "table"} onClick={() => setTab("table")}>Table</button>
            <button type="button" role="tab" class={tab === "graph" ? "on" : ""} data-testid="tab-graph"
                    aria-selected={tab === "graph"} onClick={() => setTab("graph")}>Graph</button>
          </>) : (
            <button type="button" role="tab" class={tab !== "timeline" ? "on" : ""} data-testid="tab-table"
                    aria-selected={tab !== "timeline"} onClick={() => setTab("table")}>Graph & table</button>
          )}
          <button type="button" role="tab" class={tab === "timeline" ? "on" : ""} data-testid="tab-timeline"
                  aria-selected={tab === "timeline"} onClick={() => setTab("timeline")}>Timeline</button>
        </span>
        <input type="search" data-search placeholder="Search stages (Enter: next match)" value={query}
               data-testid="stage-search" aria-label="search stages"
               onInput={(e) => { setQuery((e.target as HTMLInputElement).value); setFocused(undefined); }}
               onKeyDown={(e) => { if (e.key === "Enter") { e.preventDefault(); selectNext(); } }} />
        <select value={state} data-testid="stage-state" aria-label="filter by state"
                onChange={(e) => { setState((e.target as HTMLSelectElement).value); setFocused(undefined); }}>
          <option value="">any state</option>
          {states.map((k) => <option key={k} value={k}>{k} ({counts[k].toLocaleString("en-US")})</option>)}
        </select>
        <span class="muted small" data-testid="stage-matches">
          {filtered ? `${shown.length.toLocaleString("en-US")} of ` : ""}{run.stages.length.toLocaleString("en-US")} stages
          {focused ? ` · selected ${focused}` : ""}
        </span>
        {pending > 0 && <span class="muted small" data-testid="stages-loading">loading {pending.toLocaleString("en-US")} more…</span>}
        {focused && <a href={href.stage(run.id, focused)} data-testid="open-selected">open</a>}
      </div>
      {sweeps.length > 0 && (
        <div class="sweep-links small" data-testid="sweep-links">
          sweeps:{" "}
          {sweeps.map((g) => (
            <a key={g.id} href={href.sweep(run.id, g.base)} data-sweep={g.base}
               title={`the ${g.members.length} items of ${g.base} as one table and chart`}>
              {g.base} ×{g.members.length.toLocaleString("en-US")}
            </a>
          ))}
        </div>
      )}
      {tab === "timeline" ? <TimelineView run={run} stages={shown} />
        : large ? (tab === "table" ? table : graph) : <>{graph}{table}</>}
    </Section>
  );
}

// What the run ran on: the workflow file's repository at submission, and each stage's last
// attempt's executable, engine and agent. The watch stream carries neither: read with GetRun.
function Provenance({ id }: { id: number }) {
  const res = useResource<Run>(`provenance:${id}`, () => getRun(id, true), 10000);
  const run = res.data;
  if (!run) return null;
  const rows = run.stages.map((s) => [s.name, lastEnvironment(s)] as const).filter(([, e]) => e);
  const src = run.source;
  return (
    <Section title="Provenance">
      <KeyValues rows={[
        ["source", <span class="mono" data-testid="run-source">{sourceText(src)}</span>],
        ...(src?.root ? [["repository", <span class="mono">{src.root}</span>] as [string, any]] : []),
      ]} />
      {src?.dirty && src.diff && (
        <details><summary>uncommitted changes ({src.diff_bytes} bytes{src.diff_truncated ? ", first 256 KiB shown" : ""})</summary>
          <pre class="mono small">{src.diff}</pre></details>
      )}
      {rows.length > 0 && (
        <table class="grid" data-testid="run-environment">
          <thead><tr><th>stage</th><th>executable</th><th>sha256</th><th>engine</th><th>agent</th></tr></thead>
          <tbody>{rows.map(([name, e]) => (
            <tr key={name} data-stage={name}>
              <th>{name}</th>
              <td class="mono">{e!.executable_path || e!.executable}</td>
              <td class="mono">{e!.executable_sha256.slice(0, 12) || "–"}</td>
              <td class="mono">{e!.engine_profile ? `${e!.engine_profile} ${e!.engine_version || "?"}` : "–"}</td>
              <td class="mono">{e!.agent_version}</td>
            </tr>))}
          </tbody>
        </table>
      )}
    </Section>
  );
}

/** While a run is not there: "No run 999" when longhauld says so, else loading. */
export function RunNotLoaded({ id }: { id: number }) {
  const missing = runMissing(id);
  if (missing) {
    return <NotFound title={`No run ${id}`} message={missing} back="#/runs" backLabel="← All runs" />;
  }
  return <Empty>Loading run {id}…</Empty>;
}

export function RunView({ id, initial = {} }: { id: number; initial?: RunViewState }) {
  const run = useRunWatch(id);
  if (!run) return <RunNotLoaded id={id} />;
  const retryable = run.stages.some((s) => isRetryable(s.status));
  const params = Object.entries(run.params).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div>
      <RunHeader run={run} />
      <div class="toolbar">
        <a class="button primary" href={href.pivot(run.id)} data-testid="pivot-link">Pivot…</a>
        {run.parent_run_id > 0 && <a class="button" href={href.compare([run.parent_run_id, run.id])}>Compare with parent</a>}
        <a class="button" data-testid="run-metrics-link"
           href={run.parent_run_id > 0 ? href.metrics({ runs: [run.parent_run_id, run.id] })
             : href.metrics({ workflow: run.workflow_name })}
           title={run.parent_run_id > 0 ? "a metric of this run and its parent, by step"
             : `a metric of the last runs of ${run.workflow_name}, by step and over runs`}>Metrics across runs</a>
        {retryable && (
          <ConfirmButton label="Retry failed stages" confirm="Retry every failed stage?" runId={id}
                         testId="retry-run" onConfirm={() => retry(id)} />
        )}
        {!isTerminalRun(run.status) && (
          <ConfirmButton label="Cancel run" confirm="Cancel this run?" runId={id} danger
                         testId="cancel-run" onConfirm={() => cancel(id)} />
        )}
        {run.reason && <span class="note">{run.reason}</span>}
      </div>
      <Stages run={run} initial={initial} />
      <div class="two-col">
        <Section title="Params">
          {params.length
            ? <table class="grid params"><tbody>{params.map(([k, v]) => (
                <tr key={k}><th>{k}</th><td class="mono">{v}</td></tr>))}</tbody></table>
            : <Empty>No params.</Empty>}
        </Section>
        <Lineage run={run} />
      </div>
      <Provenance id={id} />
    </div>
  );
}
