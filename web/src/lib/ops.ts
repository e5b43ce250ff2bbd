// Pure helpers of the shared-cluster controls (docs/ui.md): a run's class, an agent's
// maintenance window, and the budgets of teams and workflows. No DOM, no fetch: tested alone.
import type { Zone } from "./format";
import { formatClock, formatGpuHours } from "./format";

/** The priority classes, highest first (docs/scheduling.md, "Priority classes"). */
export const PRIORITY_CLASSES = ["high", "normal", "low"] as const;

const pad2 = (n: number) => String(n).padStart(2, "0");

/**
 * The value of an `<input type="datetime-local">` ("2026-12-05T18:00", seconds optional) as
 * Unix milliseconds, read in `zone` (the page's "times: local/UTC" setting); null when it is
 * not such a time (empty included).
 */
export function datetimeInputToMs(value: string, zone: Zone): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((x) => Number(x ?? 0));
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const ms = zone === "utc" ? Date.UTC(y, mo - 1, d, h, mi, s)
                            : new Date(y, mo - 1, d, h, mi, s).getTime();
  // 31 February and the like roll over into the next month: not the time that was typed.
  const back = new Date(ms);
  const day = zone === "utc" ? back.getUTCDate() : back.getDate();
  return Number.isFinite(ms) && day === d ? ms : null;
}

/** Unix milliseconds as a datetime-local input's value ("2026-12-05T18:00") in `zone`. */
export function msToDatetimeInput(ms: number, zone: Zone): string {
  const d = new Date(ms);
  const [y, mo, day, h, mi] = zone === "utc"
    ? [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()]
    : [d.getFullYear(), d.getMonth(), d.getDate(), d.getHours(), d.getMinutes()];
  return `${y}-${pad2(mo + 1)}-${pad2(day)}T${pad2(h)}:${pad2(mi)}`;
}

/**
 * What an agent's drain means for the scheduler, said for the Agents page: before its time,
 * only attempts that can end by then start there; from then on none, and what still runs is
 * stopped (docs/scheduling.md, "Maintenance").
 */
export function drainMeaning(atMs: number, nowMs: number, zone: Zone): string {
  const at = formatClock(atMs, nowMs, zone);
  if (atMs > nowMs) {
    return `from ${at}: no new attempt that could not finish by then (its timeout and grace must ` +
      "end before it; a stage without a timeout never fits); what still runs then is stopped " +
      "and goes back to the queue, no retry spent";
  }
  return `since ${at}: no new attempts start here; its stages run on other agents until the undrain`;
}

/** A period in milliseconds as the CLI writes it: "30d", "7d", "12h", "90m". */
export function formatPeriod(ms: number): string {
  const minute = 60_000;
  const hour = 60 * minute;
  const day = 24 * hour;
  if (ms <= 0) return "–";
  if (ms % day === 0) return `${ms / day}d`;
  if (ms % hour === 0) return `${ms / hour}h`;
  return `${Math.round(ms / minute)}m`;
}

/**
 * A period as typed in the budget form ("30d", "12h", "90m", "2w"; empty: keep the budget's
 * own, 0) in milliseconds; null when it is not one. longhauld checks the rest (at least an hour).
 */
export function parsePeriod(text: string): number | null {
  const t = text.trim();
  if (t === "") return 0;
  const m = /^(\d+(?:\.\d+)?)\s*([mhdw])$/.exec(t);
  if (!m) return null;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as "m" | "h" | "d" | "w"];
  const ms = Math.round(Number(m[1]) * unit);
  return ms > 0 ? ms : null;
}

/** How much of a budget is used, 0..1 for the bar (a reached budget's bar is full). */
export function budgetFraction(used: number, limit: number): number {
  if (!(limit > 0)) return 0;
  return Math.min(1, Math.max(0, used / limit));
}

/** "12.5 / 80 GPU-h (16 %)", as the budgets table's use column says it. */
export function budgetUseText(used: number, limit: number): string {
  const pct = limit > 0 ? Math.floor((used / limit) * 100) : 0;
  return `${formatGpuHours(used)} / ${formatGpuHours(limit)} GPU-h (${pct} %)`;
}

/** The GPU-hours typed in a budget form as a number; null when not a positive number. */
export function parseGpuHours(text: string): number | null {
  const t = text.trim();
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(t)) return null;
  const v = Number(t);
  return v > 0 ? v : null;
}
