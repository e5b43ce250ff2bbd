// Stage: its live state (from the run's stream), attempts, the log viewer, metric charts,
// GPU telemetry, outputs and artifacts, and Retry this stage.
import { listAttempts, retry } from "../api/client";
import type { Attempt, Stage } from "../api/types";
import { useRunWatch } from "../api/watch";
import {
  elapsedMs, formatBytes, formatDone, formatDuration, formatEta, formatGpuHours, formatRate,
} from "../lib/format";
import { href, navigate, type LogLocation } from "../lib/router";
import { isActiveStage, isRetryable, isTerminalStage, messageLevel, stateName } from "../lib/status";
import { runSweeps } from "../lib/sweep";
import { useResource } from "../store/resource";
import { ConfirmButton } from "./Actions";
import { Ago, Badge, Clock, Empty, KeyValues, NotFound, ProgressBar, Section } from "./common";
import { DagView } from "./DagView";
import { GpuSection } from "./GpuCharts";
import { LogViewer } from "./LogViewer";
import { MetricCharts } from "./MetricCharts";
import { RunHeader, RunNotLoaded } from "./RunView";
import { stageNote } from "./StageTable";

function endedHow(a: Attempt): string {
  if (a.state === "ATTEMPT_EXITED") return `exit ${a.exit_code}`;
  if (a.signal) return `signal ${a.signal}`;
  return "";
}

function Attempts({ attempts, selected, onSelect }:
    { attempts: Attempt[]; selected: number; onSelect: (n: number) => void }) {
  const now = Date.now();
  if (!attempts.length) return <Empty>No attempt yet.</Empty>;
  return (
    <table class="grid attempts" data-testid="attempts">
      <thead><tr><th class="num">#</th><th>State</th><th>Reason</th><th>Exit</th><th>Agent</th>
        <th class="num">pid</th><th>Started</th><th class="num">Duration</th><th>Log</th></tr></thead>
      <tbody>
        {[...attempts].sort((a, b) => b.number - a.number).map((a) => {
          const el = elapsedMs(a.started_at_ms, a.ended_at_ms, now);
          return (
            <tr key={a.id} data-attempt={a.number} class={selected === a.number ? "sel" : ""}>
              <td class="num">{a.number}</td>
              <td><Badge state={a.state === "ATTEMPT_EXITED" && a.exit_code !== 0 ? "failed" : a.state}
                         label={stateName(a.state)} /></td>
              <td>{a.reason}</td>
              <td class="mono">{endedHow(a)}</td>
              <td>{a.agent_id}</td>
              <td class="num mono">{a.pid || ""}</td>
              <td><Clock ms={a.started_at_ms || a.created_at_ms} /></td>
              <td class="num">{el >= 0 ? formatDuration(el / 1000) : ""}</td>
              <td><button class="link" onClick={() => onSelect(a.number)}>
                {selected === a.number ? "showing" : "show"}</button></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Summary({ s, runId }: { s: Stage; runId: number }) {
  const now = Date.now();
  const p = s.progress;
  const live = !isTerminalStage(s.status);
  const hasProgress = !!p && (p.done > 0 || p.total > 0);
  const el = elapsedMs(s.started_at_ms, s.ended_at_ms, now);
  const note = stageNote(s, now);
  return (
    <div class="stage-summary">
      <div class="big-progress">
        <ProgressBar p={hasProgress ? p : null} state={s.status} />
        <span data-testid="stage-done">{hasProgress ? formatDone(p!.done, p!.total, p!.unit) : ""}</span>
      </div>
      <KeyValues rows={[
        ["status", <span data-testid="stage-status"><Badge state={s.status} />{" "}
          {s.attempt_count > 0 && <span data-testid="stage-attempt">attempt {s.attempt_count}</span>}</span>],
        ["rate", hasProgress && live ? formatRate(p!.rate, p!.unit) : "–"],
        ["ETA", <span data-testid="stage-eta">{hasProgress && live && p!.total > 0 ? formatEta(p!.eta_seconds, p!.updated_at_ms, now) : "–"}</span>],
        ["elapsed", el >= 0 ? formatDuration(el / 1000) : "–"],
        ["updated", p?.updated_at_ms ? <Ago ms={p.updated_at_ms} /> : "–"],
        ["cost", `${formatDuration(s.wall_seconds)} wall · ${formatGpuHours(s.gpu_hours)} GPU-h`],
        ["agent", s.agent_id || "–"],
        ...(note ? [["note", s.cached_from_run_id
          ? <a href={href.stage(s.cached_from_run_id, s.cached_from_stage || s.name)}>{note}</a>
          : note] as [string, any]] : []),
        ...(s.last_message ? [["message", <StageMessage s={s} />] as [string, any]] : []),
        ...(s.plan_reason ? [["plan", `${s.plan_action}: ${s.plan_reason}`] as [string, any]] : []),
        ...(s.description ? [["about", s.description] as [string, any]] : []),
      ]} />
      {s.kind === "service" && <p class="muted">service · {stateName(s.status)} · run {runId}</p>}
    </div>
  );
}

/** Whether attempt `a` ended badly (a non-zero exit, a signal, lost). */
function attemptFailed(a: Attempt | undefined): boolean {
  if (!a) return false;
  if (a.state === "ATTEMPT_EXITED") return a.exit_code !== 0;
  return a.state === "ATTEMPT_KILLED" || a.state === "ATTEMPT_LOST";
}

export function StageView({ runId, stage, log }: { runId: number; stage: string; log: LogLocation }) {
  const run = useRunWatch(runId);
  const selected = log.attempt ?? 0; // 0: the latest attempt
  const showLog = (to: LogLocation) => navigate(href.stage(runId, stage, to));
  const s = run?.stages.find((x) => x.name === stage);
  const attemptsKey = s ? `attempts:${runId}:${stage}:${s.attempt_count}:${s.status}` : null;
  const attempts = useResource<Attempt[]>(attemptsKey, () => listAttempts(runId, stage),
                                          s && isActiveStage(s.status) ? 5000 : 0);
  if (!run) return <RunNotLoaded id={runId} />;
  if (!s) {
    return <NotFound title={`No stage “${stage}” in run ${runId}`}
                     message={`run ${runId} (${run.workflow_name}) has no stage '${stage}'`}
                     back={href.run(runId)} backLabel={`← Run ${runId}`} />;
  }
  const outputs = Object.entries(s.outputs);
  const sweep = runSweeps(run.stages).find((g) => g.members.includes(stage));
  return (
    <div>
      <RunHeader run={run} crumb={stage} state={s.status} />
      <div class="toolbar">
        <span class="muted">stage of run {runId} ({run.workflow_name}) · run <Badge state={run.status} /></span>
        <a href={href.lineage(runId, stage)} data-testid="lineage-link">lineage</a>
        {sweep && (
          <a href={href.sweep(runId, sweep.base)} data-testid="item-sweep-link">
            sweep {sweep.base} ({sweep.members.length} items)
          </a>
        )}
        {isRetryable(s.status) && (
          <ConfirmButton label="Retry this stage" confirm={`Retry ${stage}?`} runId={runId}
                         testId="retry-stage" onConfirm={() => retry(runId, stage)} />
        )}
      </div>
      <div class="mini-dag"><DagView runId={runId} stages={run.stages} selected={stage} maxHeight={320} /></div>
      <div class="two-col wide-left">
        <Section title="Progress"><Summary s={s} runId={runId} /></Section>
        <Section title="Outputs">
          {outputs.length
            ? <table class="grid"><tbody>{outputs.map(([k, v]) => (
                <tr key={k}><th>{k}</th><td class="mono wrap">{v}</td></tr>))}</tbody></table>
            : <Empty>No outputs.</Empty>}
        </Section>
      </div>
      <Section title="Attempts">
        <Attempts attempts={attempts.data ?? []} selected={selected || s.attempt_count}
                  onSelect={(n) => showLog({ attempt: n === s.attempt_count ? undefined : n })} />
      </Section>
      <Section title={`Log${selected ? ` — attempt ${selected}` : ""}`}>
        {s.status === "STAGE_CACHED" && !s.attempt_count
          ? <Empty>Reused from <a href={href.stage(s.cached_from_run_id, s.cached_from_stage || s.name)}>run {s.cached_from_run_id}</a>; its log is there.</Empty>
          : !s.attempt_count ? <Empty>No attempt has started yet.</Empty>
          : <LogViewer runId={runId} stage={stage} generation={s.attempt_count} loc={log}
                       onLocation={showLog} active={!isTerminalStage(s.status)}
                       failed={selected
                         ? attemptFailed(attempts.data?.find((a) => a.number === selected))
                         : s.status === "STAGE_FAILED"} />}
      </Section>
      <Section title="Metrics">
        <MetricCharts runId={runId} stage={stage} live={!isTerminalStage(s.status)} />
      </Section>
      <GpuSection runId={runId} stage={stage} live={!isTerminalStage(s.status)} />
      <Section title="Artifacts">
        {s.artifacts.length
          ? <table class="grid"><thead><tr><th>Name</th><th>Path</th><th class="num">Size</th><th>Node</th><th class="num">Attempt</th></tr></thead>
              <tbody>{s.artifacts.map((a) => (
                <tr key={`${a.name}${a.attempt}`}><td>{a.name}</td><td class="mono wrap">{a.path}</td>
                  <td class="num">{formatBytes(a.bytes)}</td><td>{a.agent_id}</td><td class="num">{a.attempt}</td></tr>))}
              </tbody></table>
          : <Empty>No artifacts.</Empty>}
      </Section>
    </div>
  );
}

/** The last message in full; an earlier failed attempt's error is not drawn as the state. */
function StageMessage({ s }: { s: Stage }) {
  const level = messageLevel(s.status, s.last_message_level, s.attempt_count);
  return (
    <span class={`full-msg level-${level}`} data-testid="stage-message">
      {s.last_message}
      {level === "earlier" && <span class="muted"> (from an earlier attempt that failed)</span>}
    </span>
  );
}
