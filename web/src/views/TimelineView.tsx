// The run's timeline (Gantt): a row per stage (foreach items under their group, a service's
// consumers under it), a bar per attempt with its queued part lighter, the critical path named
// above and outlined, a time axis in the page's zone; rows virtualised (only those in view are
// in the page). The attempts come from GET /runs/{id}/stages?attempts=1, read again (at most
// every few seconds) when the live stream says a stage's attempts or state changed.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { listStagesWithAttempts } from "../api/client";
import type { Attempt, Run, Stage } from "../api/types";
import { formatClock, formatIso } from "../lib/format";
import { href } from "../lib/router";
import { timeZone } from "../lib/settings";
import { isTerminalRun } from "../lib/status";
import {
  criticalPath, criticalPathText, groupMembers, laneRows, spanText, stageBars, timelineRows, timeTicks,
  type Bar, type LaneRow, type TimelineRow,
} from "../lib/timeline";
import { rowWindow } from "../lib/virtual";
import { ErrorBox } from "./common";

/** A row's height in px (the CSS keeps every row to it). */
const TL_ROW = 26;
/** The scroll frame: this tall at most. */
const TL_VIEW = 620;
/** The label column's width in px. */
const TL_LABEL = 240;

/** What changes when a stage gets an attempt or changes state: the attempts are read again. */
function attemptSignature(stages: readonly Stage[]): string {
  let attempts = 0;
  let hash = 0;
  for (const s of stages) {
    attempts += s.attempt_count;
    for (let i = 0; i < s.status.length; i++) hash = (hash * 31 + s.status.charCodeAt(i)) | 0;
  }
  return `${stages.length}:${attempts}:${hash}`;
}

/**
 * The attempts of each stage, by name: read when the view opens and again when the stream's
 * signature changes, at most once every `gapMs` (a fetch in flight is not started twice). The
 * first read shows each page as it comes (the top rows are drawn after the first 1,000 stages).
 * readMs: how long the first page took.
 */
function useStageAttempts(run: Run): { byName: Map<string, Attempt[]> | null; error: Error | null; readMs: number } {
  const [byName, setByName] = useState<Map<string, Attempt[]> | null>(null);
  const readMs = useRef(0);
  const [error, setError] = useState<Error | null>(null);
  // Once a second for up to 1,000 stages; past that every 5 s per 2,000 (at most 30 s): the
  // stream's own times draw what started or ended meanwhile.
  const n = run.stages.length;
  const gapMs = n <= 1000 ? 1000 : Math.min(30_000, 5000 * Math.ceil(n / 2000));
  // A stage the stream says runs whose last attempt read has not started (read between the two):
  // read again every gapMs until it has.
  const behind = byName !== null && run.stages.some((s) => {
    if (s.status !== "STAGE_RUNNING" && s.status !== "STAGE_SERVING") return false;
    const a = byName.get(s.name);
    return !a || !a.length || !a[a.length - 1].started_at_ms;
  });
  const sig = attemptSignature(run.stages) + (behind ? `:${Math.floor(Date.now() / gapMs)}` : "");
  const st = useRef({ wanted: "", fetched: "", busy: false, lastAt: 0, timer: 0 as any, alive: true });
  useEffect(() => {
    const s = st.current;
    s.alive = true;
    return () => {
      s.alive = false;
      clearTimeout(s.timer);
      s.timer = 0;
    };
  }, []);
  useEffect(() => {
    const s = st.current;
    s.wanted = sig;
    const kick = () => {
      if (!s.alive || s.busy || s.timer || s.fetched === s.wanted) return;
      const wait = Math.max(0, s.lastAt + gapMs - Date.now());
      s.timer = setTimeout(async () => {
        s.timer = 0;
        s.busy = true;
        const want = s.wanted;
        const asked = performance.now();
        const show = (stages: Stage[]) => {
          if (!s.alive) return;
          if (!readMs.current) readMs.current = performance.now() - asked;
          setByName(new Map(stages.map((x) => [x.name, x.attempts])));
        };
        try {
          const stages = await listStagesWithAttempts(run.id, s.fetched ? undefined : show);
          show(stages);
          if (!s.alive) return;
          setError(null);
        } catch (e) {
          if (s.alive) setError(e as Error);
        } finally {
          s.fetched = want;
          s.busy = false;
          s.lastAt = Date.now();
          kick();
        }
      }, wait);
    };
    kick();
  }, [run.id, sig, gapMs]);
  return { byName, error, readMs: readMs.current };
}

/** The bar under the pointer (by stage and attempt: its times are redrawn as they change). */
interface Hover { stage: string; attempt: number; x: number; y: number }

function BarTip({ h, bar, now }: { h: Hover; bar: Bar; now: number }) {
  const z = timeZone();
  const clock = (ms: number) => (ms ? formatClock(ms, now, z) : "–");
  const queued = (bar.start || now) - bar.ready;
  const ran = bar.start ? (bar.end || now) - bar.start : -1;
  const outcome = { run: bar.start ? "running" : "queued", ok: "succeeded", bad: "failed",
    warn: "cancelled", serve: "service" }[bar.outcome];
  return (
    <div class="tl-tip" data-testid="timeline-tip" role="tooltip"
         style={{ left: `${Math.min(h.x + 14, window.innerWidth - 330)}px`, top: `${h.y + 14}px` }}>
      <div class="tl-tip-head">{bar.stage} · {bar.attempt ? `attempt ${bar.attempt}` : "no attempt yet"} · {outcome}</div>
      {bar.reason && <div class="tl-tip-reason">{bar.reason}</div>}
      <table><tbody>
        <tr><th>ready</th><td title={formatIso(bar.ready, z)}>{clock(bar.ready)}{bar.readyRecorded ? "" : " (from its needs)"}</td></tr>
        <tr><th>started</th><td title={formatIso(bar.start, z)}>{clock(bar.start)}</td></tr>
        <tr><th>ended</th><td title={formatIso(bar.end, z)}>{bar.end ? clock(bar.end) : bar.start ? "running" : "–"}</td></tr>
        <tr><th>queued</th><td>{spanText(queued)}</td></tr>
        <tr><th>ran</th><td>{ran >= 0 ? spanText(ran) : "–"}</td></tr>
        <tr><th>node</th><td>{bar.agent || "–"}</td></tr>
        <tr><th>GPUs</th><td>{bar.gpus.length ? bar.gpus.join(", ") : "none"}</td></tr>
      </tbody></table>
    </div>
  );
}

/** The bars of one row: each attempt's queued part (light) and running part. */
function BarsOf({ bars, runId, pos, crit, onHover }: {
  bars: Bar[]; runId: number; pos: (t: number) => number; crit: (b: Bar) => boolean;
  onHover: (h: Hover | null) => void;
}) {
  return (
    <>
      {bars.map((b) => {
        const left = pos(b.ready);
        const startX = b.start ? pos(b.start) : null;
        const right = pos(b.end || Date.now());
        const queuedEnd = startX ?? right;
        return (
          <a key={`${b.stage}#${b.attempt}`} class={`tl-bar o-${b.outcome}${crit(b) ? " crit" : ""}`}
             data-stage={b.stage}
             href={href.stage(runId, b.stage, b.attempt ? { attempt: b.attempt } : undefined)}
             data-attempt={b.attempt} data-outcome={b.outcome} aria-label={`${b.stage} attempt ${b.attempt}`}
             style={{ left: `${left}%`, width: `${Math.max(0, right - left)}%` }}
             onMouseEnter={(e) => onHover({ stage: b.stage, attempt: b.attempt, x: e.clientX, y: e.clientY })}
             onMouseMove={(e) => onHover({ stage: b.stage, attempt: b.attempt, x: e.clientX, y: e.clientY })}
             onMouseLeave={() => onHover(null)}>
            {queuedEnd > left && (
              <span class="tl-queued" style={{ width: `${((queuedEnd - left) / Math.max(1e-9, right - left)) * 100}%` }} />
            )}
            {startX !== null && <span class="tl-running" style={{ left: `${((startX - left) / Math.max(1e-9, right - left)) * 100}%` }} />}
          </a>
        );
      })}
    </>
  );
}

/** The span of a group's items: from the first ready to the last end (or now). */
function groupBar(members: string[], bars: Map<string, Bar[]>): { from: number; to: number; outcome: string; text: string } | null {
  let from = Infinity;
  let to = 0;
  let running = 0;
  let failed = 0;
  let done = 0;
  for (const m of members) {
    const bs = bars.get(m) ?? [];
    if (!bs.length) continue;
    for (const b of bs) {
      from = Math.min(from, b.ready);
      to = Math.max(to, b.end || Date.now());
    }
    const last = bs[bs.length - 1];
    if (!last.end) running++;
    else if (last.outcome === "bad") failed++;
    else done++;
  }
  if (!Number.isFinite(from)) return null;
  const outcome = running ? "run" : failed ? "bad" : "ok";
  const parts = [running && `${running} running`, done && `${done} done`, failed && `${failed} failed`].filter(Boolean);
  return { from, to, outcome, text: parts.join(" · ") };
}

export function TimelineView({ run, stages }: { run: Run; stages: Stage[] }) {
  const mounted = useRef(performance.now());
  const drawnAt = useRef(0);
  const { byName: attempts, error, readMs } = useStageAttempts(run);
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set());
  // Rows by stage (the run's order), or by node: a lane per GPU and CPU lanes per agent.
  const [byNode, setByNode] = useState(false);
  const [hover, setHover] = useState<Hover | null>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [width, setWidth] = useState(900);
  const box = useRef<HTMLDivElement>(null);
  const frame = useRef(0);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(200, el.clientWidth - TL_LABEL));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => { ro.disconnect(); cancelAnimationFrame(frame.current); };
  }, [attempts !== null]);
  const now = Date.now();
  const live = !isTerminalRun(run.status);

  // Bars per stage: the stream's stages (newest state) with the attempts read from the store.
  const byStage = useMemo(() => new Map(run.stages.map((s) => [s.name, s])), [run.stages]);
  const bars = new Map<string, Bar[]>();
  if (attempts) {
    for (const s of run.stages) bars.set(s.name, stageBars(s, attempts.get(s.name) ?? [], byStage, run.started_at_ms));
  }
  const readyOf = new Map<string, number>();
  for (const [name, bs] of bars) if (bs.length) readyOf.set(name, bs[0].ready);
  const path = attempts ? criticalPath(run.stages, readyOf, now) : [];
  const onPath = new Set(path.map((p) => p.name));
  const rows: TimelineRow[] = useMemo(() => timelineRows(stages, collapsed), [stages, collapsed]);
  const members = useMemo(() => groupMembers(stages), [stages]);

  // The time span: the run's start (or the first ready) to its end, or now while it is live.
  let t0 = run.started_at_ms || Infinity;
  let t1 = live ? now : run.ended_at_ms;
  for (const bs of bars.values()) {
    for (const b of bs) {
      t0 = Math.min(t0, b.ready);
      t1 = Math.max(t1, b.end || (live ? now : 0));
    }
  }
  if (!Number.isFinite(t0)) t0 = run.created_at_ms || now;
  if (!(t1 > t0)) t1 = t0 + 1000;
  const pos = (t: number) => ((Math.min(Math.max(t, t0), t1) - t0) / (t1 - t0)) * 100;
  const ticks = timeTicks(t0, t1, width, timeZone());

  useEffect(() => {
    if (attempts && !drawnAt.current) drawnAt.current = performance.now() - mounted.current;
  });

  if (error && !attempts) return <ErrorBox error={error} />;
  if (!attempts) return <div class="muted" data-testid="timeline-loading">Reading the attempts…</div>;

  const lanes = byNode ? laneRows([...bars.values()].flat()) : null;
  const count = lanes ? lanes.rows.length : rows.length;
  const height = Math.min(TL_VIEW, (count + 1) * TL_ROW + 2);
  const w = rowWindow(count, TL_ROW, scrollTop, height - TL_ROW);
  const onScroll = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (box.current) setScrollTop(box.current.scrollTop);
    });
  };
  const toggle = (id: string) => {
    const next = new Set(collapsed);
    if (next.has(id)) next.delete(id); else next.add(id);
    setCollapsed(next);
  };
  const groups = [...members.keys()];
  const hovered = hover && (bars.get(hover.stage) ?? []).find((b) => b.attempt === hover.attempt);
  return (
    <div class="timeline" data-testid="timeline" data-rows={count} data-mode={byNode ? "nodes" : "stages"}
         data-first-draw-ms={drawnAt.current ? drawnAt.current.toFixed(0) : undefined}
         data-read-ms={readMs ? readMs.toFixed(0) : undefined}>
      <div class="tl-head">
        <span class="tl-path" data-testid="critical-path">{criticalPathText(path) || "critical path: nothing has run yet"}</span>
        <span class="tl-legend muted small">
          <span class="tl-key o-run q" /> queued <span class="tl-key o-run" /> running
          <span class="tl-key o-ok" /> succeeded <span class="tl-key o-bad" /> failed
          <span class="tl-key o-serve" /> service <span class="tl-key crit" /> critical path
          {" · "}{timeZone() === "utc" ? "UTC" : "local time"}
        </span>
        <button type="button" class="small" data-testid="timeline-mode" onClick={() => setByNode(!byNode)}
                title="a row per stage, or the attempts by where they ran: a lane per GPU and CPU lanes per node">
          {byNode ? "rows by stage" : "rows by node and GPU"}
        </button>
        {lanes && lanes.waiting > 0 && <span class="muted small">{lanes.waiting} not started (not on a node yet)</span>}
        {!byNode && groups.length > 0 && (
          <button type="button" class="small" data-testid="timeline-groups"
                  onClick={() => setCollapsed(collapsed.size ? new Set() : new Set(groups))}>
            {collapsed.size ? "expand all groups" : "collapse all groups"}
          </button>
        )}
      </div>
      {error && <ErrorBox error={error} />}
      <div class="tl-scroll" ref={box} onScroll={onScroll} style={{ height: `${height}px` }}
           data-testid="timeline-scroll">
        <div class="tl-axis" style={{ height: `${TL_ROW}px` }}>
          <div class="tl-label" style={{ width: `${TL_LABEL}px` }}>{count.toLocaleString("en-US")} rows</div>
          <div class="tl-track">
            {ticks.map((t) => (
              <span key={t.t} class="tl-tick" style={{ left: `${pos(t.t)}%` }} title={formatIso(t.t, timeZone())}>{t.label}</span>
            ))}
          </div>
        </div>
        <div style={{ height: `${w.padTop}px` }} aria-hidden="true" />
        {lanes && lanes.rows.slice(w.first, w.last).map((r: LaneRow) => (
          <div key={r.key} class={`tl-row${r.kind === "node" ? " group" : ""}`} data-lane={r.key}
               style={{ height: `${TL_ROW}px` }}>
            <div class="tl-label" style={{ width: `${TL_LABEL}px`, paddingLeft: `${6 + (r.kind === "lane" ? 14 : 0)}px` }}>
              {r.kind === "node" ? <a href={href.agents()} title="the agents page">{r.label}</a> : r.label}
            </div>
            <div class="tl-track">
              <BarsOf bars={r.bars} runId={run.id} pos={pos} crit={(b) => onPath.has(b.stage)} onHover={setHover} />
            </div>
          </div>
        ))}
        {!lanes && rows.slice(w.first, w.last).map((r) => {
          if (r.kind === "group") {
            const g = groupBar(members.get(r.group!) ?? [], bars);
            const open = !collapsed.has(r.group!);
            return (
              <div key={r.key} class="tl-row group" data-group={r.group} style={{ height: `${TL_ROW}px` }}>
                <div class="tl-label" style={{ width: `${TL_LABEL}px`, paddingLeft: `${6 + r.depth * 14}px` }}>
                  <button type="button" class="tl-toggle" aria-expanded={open} onClick={() => toggle(r.group!)}>
                    {open ? "▾" : "▸"} {r.name} ×{r.size}
                  </button>
                </div>
                <div class="tl-track">
                  {g && <span class={`tl-span o-${g.outcome}`} title={g.text}
                              style={{ left: `${pos(g.from)}%`, width: `${Math.max(0, pos(g.to) - pos(g.from))}%` }}>
                    <span class="tl-span-text">{g.text}</span></span>}
                </div>
              </div>
            );
          }
          const s = r.stage!;
          const crit = onPath.has(s.name);
          const label = s.status === "STAGE_CACHED"
            ? `reused${s.cached_from_run_id ? ` from run ${s.cached_from_run_id}` : ""}` : "";
          return (
            <div key={r.key} class={`tl-row${crit ? " crit" : ""}`} data-stage={s.name}
                 data-critical={crit ? "1" : undefined} style={{ height: `${TL_ROW}px` }}>
              <div class="tl-label" style={{ width: `${TL_LABEL}px`, paddingLeft: `${6 + r.depth * 14}px` }}>
                <a href={href.stage(run.id, s.name)} title={s.name}>{s.name}</a>
                {s.kind === "service" && <span class="tag">service</span>}
              </div>
              <div class="tl-track">
                <BarsOf bars={bars.get(s.name) ?? []} runId={run.id} pos={pos} crit={() => crit} onHover={setHover} />
                {label && <span class="tl-note muted small">{label}</span>}
              </div>
            </div>
          );
        })}
        <div style={{ height: `${w.padBottom}px` }} aria-hidden="true" />
      </div>
      {hovered && <BarTip h={hover!} bar={hovered} now={now} />}
    </div>
  );
}
