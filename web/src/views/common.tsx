// Small building blocks shared by the views. Text is always rendered as text (JSX escapes it).
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Progress } from "../api/types";
import { COUNT_ORDER, stateName, tone } from "../lib/status";
import { formatAgo, formatClock, formatIso, fractionDone } from "../lib/format";
import { timeZone } from "../lib/settings";

export function Badge({ state, label }: { state: string; label?: string }) {
  return <span class={`badge tone-${tone(state)}`}>{label ?? stateName(state)}</span>;
}

export function ProgressBar({ p, state }: { p: Progress | null; state: string }) {
  const f = p ? fractionDone(p.done, p.total) : null;
  if (f === null) return <span class="bar empty" />;
  return (
    <span class="bar" title={`${(f * 100).toFixed(1)}%`}>
      <span class={`fill tone-${tone(state)}`} style={{ width: `${(f * 100).toFixed(2)}%` }} />
      <span class="pct">{Math.floor(f * 100)}%</span>
    </span>
  );
}

/** The stage counts of a run as one stacked bar, with the counts in its tooltip. */
export function CountsBar({ counts }: { counts: Record<string, number> }) {
  const entries = Object.entries(counts).map(([k, v]) => [stateName(k), v] as [string, number])
    .filter(([, v]) => v > 0);
  const total = entries.reduce((a, [, v]) => a + v, 0);
  if (total === 0) return <span class="counts empty" />;
  entries.sort((a, b) => COUNT_ORDER.indexOf(a[0]) - COUNT_ORDER.indexOf(b[0]));
  const title = entries.map(([k, v]) => `${v} ${k}`).join(", ");
  return (
    <span class="counts" title={title} aria-label={title}>
      {entries.map(([k, v]) => (
        <span key={k} class={`seg tone-${tone(k)}`} style={{ flexGrow: v }} />
      ))}
    </span>
  );
}

export function Ago({ ms }: { ms: number }) {
  const now = Date.now();
  return <time dateTime={formatIso(ms, "utc")} title={formatIso(ms, timeZone())}>{formatAgo(ms, now)}</time>;
}

export function Clock({ ms }: { ms: number }) {
  return <time dateTime={formatIso(ms, "utc")} title={formatIso(ms, timeZone())}>{formatClock(ms, Date.now(), timeZone())}</time>;
}

export function ErrorBox({ error }: { error: { message: string } | null }) {
  if (!error) return null;
  return <div class="error" role="alert">{error.message}</div>;
}

export function Section({ title, children, actions }:
    { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head"><h2>{title}</h2>{actions && <div class="actions">{actions}</div>}</header>
      {children}
    </section>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty-note">{children}</div>;
}

export function KeyValues({ rows }: { rows: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => [<dt key={`k${k}`}>{k}</dt>, <dd key={`v${k}`}>{v}</dd>])}
    </dl>
  );
}

/**
 * "← Newer · page N · Older →" under a keyset-paged table; a null callback disables its
 * button. `prefix` names the buttons' test ids (`${prefix}newer`, `${prefix}older`).
 */
export function Pager({ page, newer, older, prefix = "" }:
    { page: number; newer: (() => void) | null; older: (() => void) | null; prefix?: string }) {
  return (
    <div class="pager">
      <button data-testid={`${prefix}newer`} disabled={!newer} onClick={() => newer?.()}>← Newer</button>
      <span class="muted">page {page}</span>
      <button data-testid={`${prefix}older`} disabled={!older} onClick={() => older?.()}>Older →</button>
    </div>
  );
}

/**
 * A page for something that does not exist (a 404 from longhauld): what is missing, the
 * server's words, and a way back.
 */
export function NotFound({ title, message, back, backLabel }:
    { title: string; message?: string; back: string; backLabel: string }) {
  return (
    <div class="card not-found" data-testid="not-found">
      <h2>{title}</h2>
      {message && <p class="muted">longhauld: {message}</p>}
      <p><a href={back} data-testid="not-found-back">{backLabel}</a></p>
    </div>
  );
}

/**
 * The scroll position of a frame that scrolls itself (a virtualised table): `box` goes on the
 * frame, `onScroll` on its scroll event; `scrollTop` follows at most once an animation frame.
 */
export function useScrollTop() {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const frame = useRef(0);
  const onScroll = () => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (box.current) setScrollTop(box.current.scrollTop);
    });
  };
  useEffect(() => () => cancelAnimationFrame(frame.current), []);
  return { box, scrollTop, setScrollTop, onScroll };
}
