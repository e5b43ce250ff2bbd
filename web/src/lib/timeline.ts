// The run's timeline (Gantt): one bar per attempt, queued time (ready -> started) apart from
// running time, rows in the run's order with each service's consumers under it and foreach
// items grouped as the graph groups them, the critical path, and the time axis's ticks. Pure
// functions over the API's stages; the view (views/TimelineView.tsx) draws what they return.
import type { Attempt, Stage } from "../api/types";
import { formatDuration, type Zone } from "./format";
import { sweepGroups } from "./sweep";

/** How an attempt's bar is coloured: running (or queued), succeeded, failed, cancelled. */
export type BarOutcome = "run" | "ok" | "bad" | "warn" | "serve";

/** One attempt on the time axis. Times in ms since the epoch; end 0: it has not ended. */
export interface Bar {
  stage: string;
  attempt: number;
  /** When it became ready to run (its queued part is ready..start); never after start. */
  ready: number;
  /** 0: not started yet (queued until now). */
  start: number;
  end: number;
  outcome: BarOutcome;
  reason: string;
  agent: string;
  gpus: number[];
  /** ready came from the attempt itself (false: worked out from its needs or its previous attempt). */
  readyRecorded: boolean;
}

function outcomeOf(s: Stage, a: Attempt, last: boolean): BarOutcome {
  if (!a.ended_at_ms && !(last && s.ended_at_ms && terminal(s))) return s.kind === "service" ? "serve" : "run";
  if (/^cancel/.test(a.reason)) return "warn";
  if (s.kind === "service" && last && (s.status === "STAGE_STOPPED" || s.status === "STAGE_SUCCEEDED")) {
    return "serve";
  }
  const clean = a.state === "ATTEMPT_EXITED" && a.exit_code === 0 && a.signal === 0;
  if (clean && !a.reason) return "ok";
  if (last && s.status === "STAGE_SUCCEEDED") return "ok";
  if (last && s.status === "STAGE_STOPPED_EARLY") return "warn";
  return "bad";
}

function terminal(s: Stage): boolean {
  return ["STAGE_SUCCEEDED", "STAGE_FAILED", "STAGE_CANCELLED", "STAGE_CACHED", "STAGE_SKIPPED",
    "STAGE_STOPPED", "STAGE_STOPPED_EARLY"].includes(s.status);
}

/** When the stage's needs let it run: the latest end (a service: start) of its needs, else the run's start. */
export function neededBy(s: Stage, byName: ReadonlyMap<string, Stage>, runStart: number): number {
  let t = runStart;
  for (const n of s.needs) {
    const d = byName.get(n);
    if (!d) continue;
    const at = d.kind === "service" ? d.started_at_ms : d.ended_at_ms;
    if (at > t) t = at;
  }
  return t;
}

/**
 * The bars of a stage: one per attempt, oldest first. An attempt's ready time is the one it
 * recorded (Attempt.ready_at_ms); without it, the first attempt's is when its needs were done
 * and a retry's when the attempt before it ended. A stage that is ready with no attempt yet is
 * one queued bar (attempt 0). An attempt still open whose stage has ended ends with the stage
 * (the live stream says so before the attempts are read again); a stage the stream says has
 * started while its attempts read have none yet is drawn from the stream's times as attempt 1.
 */
export function stageBars(s: Stage, attempts: readonly Attempt[], byName: ReadonlyMap<string, Stage>,
                          runStart: number): Bar[] {
  const bars: Bar[] = [];
  let prevEnd = 0;
  attempts.forEach((a, i) => {
    const last = i === attempts.length - 1;
    let end = a.ended_at_ms;
    if (!end && last && terminal(s) && s.ended_at_ms) end = s.ended_at_ms;
    const start = a.started_at_ms;
    const derived = i === 0 ? neededBy(s, byName, runStart) : prevEnd;
    let ready = a.ready_at_ms || derived || a.created_at_ms || start;
    const bound = start || a.created_at_ms || end;
    if (bound && ready > bound) ready = bound;
    if (!ready) ready = bound;
    bars.push({
      stage: s.name, attempt: a.number, ready, start, end, outcome: outcomeOf(s, a, last),
      reason: a.reason, agent: a.agent_id, gpus: a.gpus, readyRecorded: a.ready_at_ms > 0,
    });
    prevEnd = end || prevEnd;
  });
  if (!attempts.length && s.started_at_ms > 0 && s.status !== "STAGE_CACHED") {
    const fromStream: Attempt = {
      id: 0, number: 1, agent_id: s.agent_id, state: s.ended_at_ms ? "ATTEMPT_EXITED" : "ATTEMPT_RUNNING",
      reason: s.reason, exit_code: s.status === "STAGE_SUCCEEDED" ? 0 : 1, signal: 0, created_at_ms: 0,
      started_at_ms: s.started_at_ms, ended_at_ms: s.ended_at_ms, output_dir: "", events: 0,
      malformed_events: 0, checkpoint: "", checkpoint_step: 0, pid: 0, argv: [], environment: null,
      ready_at_ms: 0, gpus: [],
    };
    return stageBars(s, [fromStream], byName, runStart);
  }
  if (!attempts.length && s.status === "STAGE_READY") {
    const ready = s.next_retry_at_ms || neededBy(s, byName, runStart);
    if (ready) {
      bars.push({ stage: s.name, attempt: 0, ready, start: 0, end: 0, outcome: "run", reason: s.reason,
        agent: "", gpus: [], readyRecorded: false });
    }
  }
  return bars;
}

/** A row of the timeline: a stage (its bars), or the header of a foreach group. */
export interface TimelineRow {
  key: string;
  kind: "stage" | "group";
  /** The stage's name, or the group's base (`bench_spec`). */
  name: string;
  /** 0, or 1 under a service (a consumer) / a group (an item), 2 for both. */
  depth: number;
  stage?: Stage;
  /** The group's id (`bench_spec-*`) and size, on a group's header and its items. */
  group?: string;
  size?: number;
}

/**
 * The stages in the order the timeline lists them: the run's order (needs first), except that
 * the stages that need a service follow it, one level in. Returns each stage with its depth.
 */
export function serviceOrder(stages: readonly Stage[]): { stage: Stage; depth: number }[] {
  const services = new Set(stages.filter((s) => s.kind === "service").map((s) => s.name));
  const under = new Map<string, Stage[]>(); // service -> its consumers, in run order
  const placed = new Set<string>();
  for (const s of stages) {
    if (s.kind === "service") continue;
    const svc = s.needs.find((n) => services.has(n));
    if (svc === undefined) continue;
    if (!under.has(svc)) under.set(svc, []);
    under.get(svc)!.push(s);
    placed.add(s.name);
  }
  const out: { stage: Stage; depth: number }[] = [];
  for (const s of stages) {
    if (placed.has(s.name)) continue;
    out.push({ stage: s, depth: 0 });
    for (const c of under.get(s.name) ?? []) out.push({ stage: c, depth: 1 });
  }
  return out;
}

/**
 * The rows: serviceOrder's, each foreach group (sweep.ts, as the graph finds them) under a
 * header row; the items of a group in `collapsed` are left out (the header draws them all).
 */
export function timelineRows(stages: readonly Stage[], collapsed: ReadonlySet<string>): TimelineRow[] {
  const ordered = serviceOrder(stages);
  const groups = sweepGroups(ordered.map((o) => o.stage));
  const groupAt = new Map<string, { id: string; base: string; size: number }>();
  for (const g of groups) groupAt.set(g.members[0], { id: g.id, base: g.base, size: g.members.length });
  const rows: TimelineRow[] = [];
  for (let i = 0; i < ordered.length; i++) {
    const { stage, depth } = ordered[i];
    const g = groupAt.get(stage.name);
    if (g) {
      rows.push({ key: g.id, kind: "group", name: g.base, depth, group: g.id, size: g.size });
      if (!collapsed.has(g.id)) {
        for (let j = i; j < i + g.size; j++) {
          const m = ordered[j];
          rows.push({ key: m.stage.name, kind: "stage", name: m.stage.name, depth: m.depth + 1,
            stage: m.stage, group: g.id });
        }
      }
      i += g.size - 1;
      continue;
    }
    rows.push({ key: stage.name, kind: "stage", name: stage.name, depth, stage });
  }
  return rows;
}

/** The members of each group, by id (for a collapsed header, which draws all their bars). */
export function groupMembers(stages: readonly Stage[]): Map<string, string[]> {
  const ordered = serviceOrder(stages).map((o) => o.stage);
  return new Map(sweepGroups(ordered).map((g) => [g.id, g.members]));
}

/** One stage of the critical path, the time it took on it, and how long it queued first. */
export interface PathStep { name: string; ms: number; queuedMs: number }

/**
 * The chain of stages that decided the run's wall time: from the task that ended last (or,
 * while the run is live, is still going), back through the need that was done last before it
 * could run (a service counts when it started), to a stage with no such need. Reused stages
 * and stages that never started are not on it. Each step's time is from the stage's first
 * start to its end, or, for a step before the last, to when the next one became ready if that
 * was earlier (a service's start-up); its queued time is from when it became ready (readyOf:
 * its first attempt's) to its first start. Empty when nothing ran.
 */
export function criticalPath(stages: readonly Stage[], readyOf: ReadonlyMap<string, number>,
                             now: number): PathStep[] {
  const byName = new Map(stages.map((s) => [s.name, s]));
  const ran = (s: Stage | undefined): s is Stage =>
    !!s && s.started_at_ms > 0 && s.status !== "STAGE_CACHED";
  const endOf = (s: Stage) => s.ended_at_ms || now;
  // A service stops after its consumers: the chain ends at the task that ended last (the
  // later-started on a tie), at a service only when no task ran.
  let last: Stage | undefined;
  for (const s of stages) {
    if (!ran(s)) continue;
    const better = !last || (last.kind === "service" && s.kind !== "service") ||
      ((s.kind === "service") === (last.kind === "service") &&
       (endOf(s) > endOf(last) || (endOf(s) === endOf(last) && s.started_at_ms > last.started_at_ms)));
    if (better) last = s;
  }
  const chain: Stage[] = [];
  const seen = new Set<string>();
  for (let cur = last; cur && !seen.has(cur.name); ) {
    chain.push(cur);
    seen.add(cur.name);
    let next: Stage | undefined;
    let nextAt = 0;
    for (const n of cur.needs) {
      const d = byName.get(n);
      if (!ran(d)) continue;
      const at = d.kind === "service" ? d.started_at_ms : endOf(d);
      if (at > nextAt) { next = d; nextAt = at; }
    }
    cur = next;
  }
  chain.reverse();
  return chain.map((s, i) => {
    let end = endOf(s);
    const after = chain[i + 1];
    if (after) {
      const r = readyOf.get(after.name) || after.started_at_ms;
      if (r && r < end) end = r;
    }
    const ready = readyOf.get(s.name) || s.started_at_ms;
    return { name: s.name, ms: Math.max(0, end - s.started_at_ms), queuedMs: Math.max(0, s.started_at_ms - ready) };
  });
}

/** A span of ms as the timeline says it: tenths of a second under 10 s ("0.7s"), else formatDuration's. */
export function spanText(ms: number): string {
  if (ms >= 0 && ms < 10_000) return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
  return formatDuration(ms / 1000);
}

/**
 * "critical path: datagen 5h18m → extract 41m00s → finetune 2h36m", with "(queued 12m00s)"
 * after a step that waited a second or more between ready and started.
 */
export function criticalPathText(path: readonly PathStep[]): string {
  if (!path.length) return "";
  const step = (p: PathStep) => `${p.name} ${spanText(p.ms)}` +
    (p.queuedMs >= 1000 ? ` (queued ${spanText(p.queuedMs)})` : "");
  return `critical path: ${path.map(step).join(" → ")}`;
}

/** A tick of the time axis: its time and label (the date too where the day changed). */
export interface Tick { t: number; label: string }

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const STEPS = [1, 2, 5, 10, 15, 30].map((n) => n * SEC)
  .concat([1, 2, 5, 10, 15, 30].map((n) => n * MIN))
  .concat([1, 2, 3, 6, 12].map((n) => n * HOUR))
  .concat([1, 2, 7, 14, 28].map((n) => n * DAY));
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const pad2 = (n: number) => String(n).padStart(2, "0");

/** The zone's offset from UTC at t, in ms (local: the browser's). */
function offsetMs(t: number, zone: Zone): number {
  return zone === "utc" ? 0 : -new Date(t).getTimezoneOffset() * MIN;
}

/**
 * Ticks for [t0, t1] drawn `widthPx` wide, at least `minGapPx` apart: a round step (1 s ... 28
 * days) on round times of the zone (10:00, 10:15). Labels are the time of day ("14:30", with
 * seconds under a minute's step), the date before the first tick and at each tick on a new day
 * ("Dec 6 00:00"); steps of a day or more are dates alone.
 */
export function timeTicks(t0: number, t1: number, widthPx: number, zone: Zone, minGapPx = 90): Tick[] {
  if (!(t1 > t0) || widthPx <= 0) return [];
  const span = t1 - t0;
  const want = Math.max(1, Math.floor(widthPx / minGapPx));
  const step = STEPS.find((s) => span / s <= want) ?? STEPS[STEPS.length - 1] * Math.ceil(span / want / STEPS[STEPS.length - 1]);
  const ticks: Tick[] = [];
  const off = offsetMs(t0, zone);
  let t = Math.ceil((t0 + off) / step) * step - off;
  let lastDay = "";
  for (let guard = 0; t <= t1 && guard < 1000; guard++, t += step) {
    // Round to the zone's wall clock again after a DST change (steps of an hour or more).
    const o = offsetMs(t, zone);
    const wall = new Date(t + o);
    const day = `${MONTHS[wall.getUTCMonth()]} ${wall.getUTCDate()}`;
    const time = step < MIN
      ? `${pad2(wall.getUTCHours())}:${pad2(wall.getUTCMinutes())}:${pad2(wall.getUTCSeconds())}`
      : `${pad2(wall.getUTCHours())}:${pad2(wall.getUTCMinutes())}`;
    let label = time;
    if (step >= DAY) label = day;
    else if (day !== lastDay) label = `${day} ${time}`;
    lastDay = day;
    ticks.push({ t, label });
  }
  return ticks;
}

/** A row of the timeline by node: a node's header, or one of its lanes (a GPU, or a CPU lane). */
export interface LaneRow {
  key: string;
  kind: "node" | "lane";
  label: string;
  agent: string;
  /** A lane's bars (running time only: the queue is not on the node), oldest first. */
  bars: Bar[];
}

/**
 * The attempts by where they ran: per node (agent id, sorted), a lane per GPU that an attempt
 * held (an attempt on two GPUs is in both lanes), then the attempts without GPUs packed into as
 * few CPU lanes as do not overlap. Attempts that have not started are left out; `waiting`
 * counts them.
 */
export function laneRows(bars: readonly Bar[]): { rows: LaneRow[]; waiting: number } {
  const byAgent = new Map<string, Bar[]>();
  let waiting = 0;
  for (const b of bars) {
    if (!b.start) { waiting++; continue; }
    const list = byAgent.get(b.agent) ?? [];
    list.push({ ...b, ready: b.start });
    byAgent.set(b.agent, list);
  }
  const rows: LaneRow[] = [];
  for (const agent of [...byAgent.keys()].sort()) {
    const list = byAgent.get(agent)!.sort((a, b) => a.start - b.start || a.stage.localeCompare(b.stage));
    rows.push({ key: `node:${agent}`, kind: "node", label: agent || "(node not recorded)", agent, bars: [] });
    const gpuLanes = new Map<number, Bar[]>();
    const cpuLanes: Bar[][] = [];
    const laneEnd: number[] = [];
    for (const b of list) {
      if (b.gpus.length) {
        for (const g of b.gpus) {
          const lane = gpuLanes.get(g) ?? [];
          lane.push(b);
          gpuLanes.set(g, lane);
        }
        continue;
      }
      const end = b.end || Number.MAX_SAFE_INTEGER;
      let i = laneEnd.findIndex((e) => e <= b.start);
      if (i < 0) { i = cpuLanes.length; cpuLanes.push([]); laneEnd.push(0); }
      cpuLanes[i].push(b);
      laneEnd[i] = end;
    }
    for (const g of [...gpuLanes.keys()].sort((a, b) => a - b)) {
      rows.push({ key: `${agent}:gpu${g}`, kind: "lane", label: `GPU ${g}`, agent, bars: gpuLanes.get(g)! });
    }
    cpuLanes.forEach((lane, i) => {
      rows.push({ key: `${agent}:cpu${i}`, kind: "lane", label: `CPU lane ${i + 1}`, agent, bars: lane });
    });
  }
  return { rows, waiting };
}
