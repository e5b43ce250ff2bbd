// Formatting for display: durations, ETAs, rates, bytes, relative times, numbers. Pure
// functions; every view formats through these so the same quantity reads the same everywhere.

/** 3725 s -> "1h02m", 65 -> "1m05s", 4.2 -> "4s"; negative or NaN -> "–". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "–";
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, "0")}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, "0")}h`;
}

/** Milliseconds between start and end (or now while running); -1 when not started. */
export function elapsedMs(startMs: number, endMs: number, nowMs: number): number {
  if (!startMs) return -1;
  return Math.max(0, (endMs || nowMs) - startMs);
}

/**
 * The ETA now, counting down from what the server computed at updatedAtMs; "–" when unknown.
 */
export function formatEta(etaSeconds: number, updatedAtMs: number, nowMs: number): string {
  if (!Number.isFinite(etaSeconds) || etaSeconds < 0) return "–";
  const since = updatedAtMs > 0 ? Math.max(0, (nowMs - updatedAtMs) / 1000) : 0;
  return formatDuration(Math.max(0, etaSeconds - since));
}

/** 1234.5 -> "1,234.5"; integers without decimals; at most `digits` decimals. */
export function formatNumber(v: number, digits = 2): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "∞" : "-∞";
  if (Number.isInteger(v)) return v.toLocaleString("en-US");
  const abs = Math.abs(v);
  const d = abs >= 100 ? Math.min(digits, 1) : abs >= 1 ? digits : Math.max(digits, 3);
  return v.toLocaleString("en-US", { maximumFractionDigits: d });
}

/** A metric value: up to 4 significant digits for small values. */
export function formatMetric(v: number): string {
  if (Number.isFinite(v) && !Number.isInteger(v) && Math.abs(v) < 1) {
    return String(Number(v.toPrecision(4)));
  }
  return formatNumber(v);
}

/** 12.34 samples/s; "–" for no rate. */
export function formatRate(rate: number, unit: string): string {
  if (!Number.isFinite(rate) || rate <= 0) return "–";
  return `${formatNumber(rate, 1)} ${unit || "units"}/s`;
}

/** "1,234/10,000 samples" or "1,234 samples" when the total is unknown. */
export function formatDone(done: number, total: number, unit: string): string {
  const u = unit ? ` ${unit}` : "";
  return total > 0 ? `${formatNumber(done)}/${formatNumber(total)}${u}` : `${formatNumber(done)}${u}`;
}

/** Fraction done in [0, 1]; null when the total is unknown. */
export function fractionDone(done: number, total: number): number | null {
  if (!(total > 0)) return null;
  return Math.min(1, Math.max(0, done / total));
}

/** 1536 -> "1.5 KiB"; negative (unknown) -> "–". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "–";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let v = bytes;
  let i = -1;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${units[i]}`;
}

/** "just now", "12 s ago", "2 min ago", "3 h ago", "5 d ago"; "never" for 0. */
export function formatAgo(thenMs: number, nowMs: number): string {
  if (!thenMs) return "never";
  const s = Math.floor((nowMs - thenMs) / 1000);
  if (s < 2) return "just now";
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}

/** Where times are shown: the browser's time zone, or UTC. */
export type Zone = "local" | "utc";

interface Parts { y: number; mo: number; d: number; h: number; mi: number; s: number }

function parts(ms: number, zone: Zone): Parts {
  const d = new Date(ms);
  return zone === "utc"
    ? { y: d.getUTCFullYear(), mo: d.getUTCMonth(), d: d.getUTCDate(), h: d.getUTCHours(),
        mi: d.getUTCMinutes(), s: d.getUTCSeconds() }
    : { y: d.getFullYear(), mo: d.getMonth(), d: d.getDate(), h: d.getHours(),
        mi: d.getMinutes(), s: d.getSeconds() };
}

const pad2 = (n: number) => String(n).padStart(2, "0");
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * A wall-clock time in `zone`: "14:03:07" today, "Dec 1 14:03" on another day of this year,
 * "Dec 1 2025 14:03" before; " UTC" after it when shown in UTC.
 */
export function formatClock(ms: number, nowMs: number, zone: Zone = "local"): string {
  if (!ms) return "–";
  const t = parts(ms, zone);
  const now = parts(nowMs, zone);
  const suffix = zone === "utc" ? " UTC" : "";
  const time = `${pad2(t.h)}:${pad2(t.mi)}`;
  if (t.y === now.y && t.mo === now.mo && t.d === now.d) return `${time}:${pad2(t.s)}${suffix}`;
  const year = t.y === now.y ? "" : ` ${t.y}`;
  return `${MONTHS[t.mo]} ${t.d}${year} ${time}${suffix}`;
}

/** ISO 8601 with the zone's offset: "2026-12-05T14:03:07+01:00", or "...Z" in UTC. */
export function formatIso(ms: number, zone: Zone = "local"): string {
  if (!ms) return "";
  const t = parts(ms, zone);
  let offset = "Z";
  if (zone === "local") {
    const minutes = -new Date(ms).getTimezoneOffset();
    const a = Math.abs(minutes);
    offset = `${minutes < 0 ? "-" : "+"}${pad2(Math.floor(a / 60))}:${pad2(a % 60)}`;
  }
  return `${t.y}-${pad2(t.mo + 1)}-${pad2(t.d)}T${pad2(t.h)}:${pad2(t.mi)}:${pad2(t.s)}${offset}`;
}

/** GPU-hours: "0", "0.013", "2.5", "1,204". */
export function formatGpuHours(h: number): string {
  if (!Number.isFinite(h) || h <= 0) return "0";
  if (h < 0.01) return h.toPrecision(2);
  return formatNumber(h, h < 10 ? 2 : 1);
}

/** The signed difference of b against a, with the ratio: "+0.12 (+15.3%)". */
export function formatDelta(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return "";
  const d = b - a;
  if (d === 0) return "=";
  const sign = d > 0 ? "+" : "−";
  const abs = formatMetric(Math.abs(d));
  if (a === 0) return `${sign}${abs}`;
  const pct = (d / Math.abs(a)) * 100;
  return `${sign}${abs} (${pct > 0 ? "+" : "−"}${formatNumber(Math.abs(pct), 1)}%)`;
}

/** The signed difference of two durations in seconds: "+1m05s", "−30s", "=". */
export function formatDeltaDuration(a: number, b: number): string {
  const d = b - a;
  if (Math.abs(d) < 1) return "=";
  return `${d > 0 ? "+" : "−"}${formatDuration(Math.abs(d))}`;
}
