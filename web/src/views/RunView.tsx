// Run: header with status and cost, actions, the DAG, the stage table, params and lineage.
import { cancel, getRun, listChildren, retry } from "../api/client";
import type { Run } from "../api/types";
import { useRunWatch } from "../api/watch";
import { elapsedMs, formatDuration, formatGpuHours } from "../lib/format";
import { href } from "../lib/router";
import { lastEnvironment, sourceText } from "../lib/provenance";
import { isRetryable, isTerminalRun } from "../lib/status";
import { useResource } from "../store/resource";
import { ConfirmButton } from "./Actions";
import { Badge, Clock, Empty, KeyValues, Section } from "./common";
import { DagView } from "./DagView";
import { StageTable } from "./StageTable";

export function RunHeader({ run, crumb, state }: { run: Run; crumb?: string; state?: string }) {
  const el = elapsedMs(run.started_at_ms, run.ended_at_ms, Date.now());
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
        <div><span class="k">GPU-hours</span>{formatGpuHours(run.gpu_hours)}</div>
      </div>
    </div>
  );
}

function Lineage({ run }: { run: Run }) {
  const children = useResource<Run[]>(`children:${run.id}`, () => listChildren(run.id), 10000);
  const kids = children.data ?? [];
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
      ]} />
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

export function RunView({ id }: { id: number }) {
  const run = useRunWatch(id);
  if (!run) return <Empty>Loading run {id}…</Empty>;
  const retryable = run.stages.some((s) => isRetryable(s.status));
  const params = Object.entries(run.params).sort(([a], [b]) => a.localeCompare(b));
  return (
    <div>
      <RunHeader run={run} />
      <div class="toolbar">
        <a class="button primary" href={href.pivot(run.id)} data-testid="pivot-link">Pivot…</a>
        {run.parent_run_id > 0 && <a class="button" href={href.compare([run.parent_run_id, run.id])}>Compare with parent</a>}
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
      <Section title="Stages">
        <DagView runId={id} stages={run.stages} />
        <StageTable runId={id} stages={run.stages} />
      </Section>
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
