// The table `longhaul watch` prints: per stage its state, progress bar, done/total and unit,
// rate, ETA (counting down), elapsed, attempt, reason and last message, "updated 2 min ago",
// and what it cost (wall time, GPU-hours).
import type { Stage } from "../api/types";
import {
  elapsedMs, formatAgo, formatDone, formatDuration, formatEta, formatGpuHours, formatRate,
} from "../lib/format";
import { href } from "../lib/router";
import { isTerminalStage } from "../lib/status";
import { Badge, ProgressBar } from "./common";

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
  return (
    <span class="msg">
      {note && <span class="note">{note}</span>}
      {s.last_message && (
        <span class={`last level-${s.last_message_level || "info"}`}>{s.last_message}</span>
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

export function StageTable({ runId, stages }: { runId: number; stages: Stage[] }) {
  const now = Date.now();
  return (
    <table class="grid stages" data-testid="stage-table">
      <thead>
        <tr>
          <th>Stage</th><th>Status</th><th>Progress</th><th class="num">Done</th>
          <th class="num">Rate</th><th class="num">ETA</th><th class="num">Elapsed</th>
          <th class="num">Attempt</th><th class="num">Wall</th><th class="num">GPU-h</th><th>Message</th>
        </tr>
      </thead>
      <tbody>
        {stages.map((s) => {
          const p = s.progress;
          const live = !isTerminalStage(s.status);
          const hasProgress = !!p && (p.done > 0 || p.total > 0);
          const el = elapsedMs(s.started_at_ms, s.ended_at_ms, now);
          return (
            <tr key={s.name} data-stage={s.name}>
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
              <td><Message s={s} now={now} /></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
