// The table `longhaul watch` prints: per stage its state, progress bar, done/total and unit,
// rate, ETA (counting down), elapsed, attempt, reason and last message, "updated 2 min ago",
// and what it cost (wall time, GPU-hours).
import { useEffect, useRef } from "preact/hooks";
import type { Stage } from "../api/types";
import {
  elapsedMs, formatAgo, formatDone, formatDuration, formatEta, formatGpuHours, formatRate,
} from "../lib/format";
import { href } from "../lib/router";
import { isTerminalStage, messageLevel } from "../lib/status";
import { rowWindow } from "../lib/virtual";
import { Badge, ProgressBar, useScrollTop } from "./common";

/** Why the stage is where it is: reuse, a retry's backoff, the failure reason. */
export function stageNote(s: Stage, now: number): string {
  if (s.status === "STAGE_CACHED" && s.cached_from_run_id) {
    return `from run ${s.cached_from_run_id}${s.cached_from_stage && s.cached_from_stage !== s.name ? ` (${s.cached_from_stage})` : ""}`;
  }
  if (s.next_retry_at_ms > now && !isTerminalStage(s.status)) {
    return `retry in ${formatDuration((s.next_retry_at_ms - now) / 1000)}`;
  }
  return s.reason;
}

function Message({ s, now }: { s: Stage; now: number }) {
  const note = stageNote(s, now);
  const updated = s.progress?.updated_at_ms ?? 0;
  const level = messageLevel(s.status, s.last_message_level, s.attempt_count);
  return (
    <span class="msg">
      {note && <span class="note" title={note}>{note}</span>}
      {s.last_message && (
        <span class={`last level-${level}`} data-testid="stage-message"
              title={level === "earlier" ? `${s.last_message}\n(from an earlier attempt that failed)` : s.last_message}>
          {s.last_message}
        </span>
      )}
      {s.malformed_events > 0 && (
        <span class="note warn">{`${s.malformed_events} malformed event line(s): ${s.last_malformed}`}</span>
      )}
      {updated > 0 && !isTerminalStage(s.status) && (
        <span class="updated">updated {formatAgo(updated, now)}</span>
      )}
    </span>
  );
}

/** The height of a row of the virtualised table (its CSS keeps every row to it). */
export const ROW_HEIGHT = 40;
/** The virtualised table's scroll container: this tall at most. */
const VIEW_HEIGHT = 640;

function Row({ runId, s, now, focused }: { runId: number; s: Stage; now: number; focused: boolean }) {
  const p = s.progress;
  const live = !isTerminalStage(s.status);
  const hasProgress = !!p && (p.done > 0 || p.total > 0);
  const el = elapsedMs(s.started_at_ms, s.ended_at_ms, now);
  return (
    <tr key={s.name} data-stage={s.name} class={focused ? "sel" : undefined}>
      <td class="name"><a href={href.stage(runId, s.name)}>{s.name}</a>
        {s.kind === "service" && <span class="tag">service</span>}</td>
      <td><Badge state={s.status} /></td>
      <td>{hasProgress ? <ProgressBar p={p} state={s.status} /> : null}</td>
      <td class="num" data-col="done">{hasProgress ? formatDone(p!.done, p!.total, p!.unit) : ""}</td>
      <td class="num" data-col="rate">{hasProgress && live ? formatRate(p!.rate, p!.unit) : ""}</td>
      <td class="num" data-col="eta">{hasProgress && live && p!.total > 0 ? formatEta(p!.eta_seconds, p!.updated_at_ms, now) : ""}</td>
      <td class="num">{el >= 0 ? formatDuration(el / 1000) : ""}</td>
      <td class="num" data-col="attempt">{s.attempt_count || ""}</td>
      <td class="num">{s.wall_seconds > 0 ? formatDuration(s.wall_seconds) : ""}</td>
      <td class="num">{s.gpu_hours > 0 ? formatGpuHours(s.gpu_hours) : ""}</td>
      <td class="message" data-col="message"><Message s={s} now={now} /></td>
    </tr>
  );
}

const HEAD = (
  <thead>
    <tr>
      <th>Stage</th><th>Status</th><th>Progress</th><th class="num">Done</th>
      <th class="num">Rate</th><th class="num">ETA</th><th class="num">Elapsed</th>
      <th class="num">Attempt</th><th class="num">Wall</th><th class="num">GPU-h</th><th class="message">Message</th>
    </tr>
  </thead>
);

/**
 * The stage table. `virtual`: in a scroll container of its own, only the rows in view are in
 * the page (each ROW_HEIGHT px, one line of message), for runs of thousands of stages.
 * `focused`: a stage to highlight and scroll to.
 */
export function StageTable({ runId, stages, virtual = false, focused }:
    { runId: number; stages: Stage[]; virtual?: boolean; focused?: string }) {
  const now = Date.now();
  if (!virtual) return <PlainTable runId={runId} stages={stages} now={now} focused={focused} />;
  return <VirtualTable runId={runId} stages={stages} now={now} focused={focused} />;
}

function PlainTable({ runId, stages, now, focused }:
    { runId: number; stages: Stage[]; now: number; focused?: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!focused) return;
    box.current?.querySelector(`tr[data-stage="${CSS.escape(focused)}"]`)?.scrollIntoView({ block: "nearest" });
  }, [focused]);
  return (
    <div class="table-scroll" ref={box}>
      <table class="grid stages" data-testid="stage-table">
        {HEAD}
        <tbody>{stages.map((s) => <Row key={s.name} runId={runId} s={s} now={now} focused={s.name === focused} />)}</tbody>
      </table>
    </div>
  );
}

function VirtualTable({ runId, stages, now, focused }:
    { runId: number; stages: Stage[]; now: number; focused?: string }) {
  const { box, scrollTop, setScrollTop, onScroll } = useScrollTop();
  // The focused stage is scrolled into the middle of the view.
  useEffect(() => {
    if (!focused || !box.current) return;
    const i = stages.findIndex((s) => s.name === focused);
    if (i < 0) return;
    const top = i * ROW_HEIGHT;
    const el = box.current;
    if (top < el.scrollTop || top + ROW_HEIGHT > el.scrollTop + el.clientHeight - ROW_HEIGHT) {
      el.scrollTop = Math.max(0, top - el.clientHeight / 2);
      setScrollTop(el.scrollTop);
    }
  }, [focused]);
  const height = Math.min(VIEW_HEIGHT, (stages.length + 1) * ROW_HEIGHT + 2);
  const w = rowWindow(stages.length, ROW_HEIGHT, scrollTop, height);
  return (
    <div class="table-scroll virtual" ref={box} onScroll={onScroll} style={{ height: `${height}px` }}
         data-testid="stage-table-scroll">
      <table class="grid stages virtual" data-testid="stage-table" data-rows={stages.length}>
        {HEAD}
        <tbody>
          {w.padTop > 0 && <tr class="pad" style={{ height: `${w.padTop}px` }} aria-hidden="true" />}
          {stages.slice(w.first, w.last).map((s) => (
            <Row key={s.name} runId={runId} s={s} now={now} focused={s.name === focused} />
          ))}
          {w.padBottom > 0 && <tr class="pad" style={{ height: `${w.padBottom}px` }} aria-hidden="true" />}
        </tbody>
      </table>
    </div>
  );
}
