// The log viewer: a window of at most MAX_LINES lines of one stream, read 64 KiB at a time at
// any byte offset. It opens at the tail and follows while the attempt runs; Start, End and
// "go to byte" jump anywhere in one read (a 30 MB log's first line is one click away); "load
// earlier" / "load later" widen the window. Search asks longhauld to search the whole file and
// lists the matching lines with their offsets; a match opens the window there, its line
// marked. Colours (SGR) show as styled spans; every other escape is left out (ansi.ts). Where
// it is (attempt, stream, offset, search) lives in the URL hash (router.ts), so a link shows
// the same lines. It says why when the log cannot be read ("agent X not connected").
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, logDownloadUrl, logSize, readLog } from "../api/client";
import { LogText, chooseStream, firstLineStart } from "../lib/logtext";
import { formatBytes, formatNumber } from "../lib/format";
import type { LogLocation } from "../lib/router";
import { requestRender } from "../store/scheduler";
import { LogLines } from "./LogLines";
import { LogSearch } from "./LogSearch";

const WINDOW = 64 * 1024; // one read
const BEFORE = 16 * 1024; // a jump shows this much before its offset
const MAX_LINES = 5000;
const FOLLOW_MS = 1000;
const RETRY_MS = 3000;
const SIZES_MS = 5000;
const STREAMS = ["stdout", "stderr"];

interface LogState {
  text: LogText;
  version: number; // bumped on every change of text
  live: boolean; // the window reaches the log's end: what is written next is appended
  finished: boolean;
  attempt: number;
  error: string;
  loaded: boolean;
  highlight: number; // the byte offset to mark, -1: none
  note: string; // why the window is not where it was asked to be
  poll: () => void; // reads on from the window's end (while live)
}

let logVersions = 0; // LogState.version: unique across windows, so a new window always renders

function fresh(): LogState {
  return {
    text: new LogText(MAX_LINES), version: ++logVersions, live: true, finished: false, attempt: 0, error: "",
    loaded: false, highlight: -1, note: "", poll: () => {},
  };
}

const message = (e: unknown) => (e instanceof ApiError ? e.message : String(e));

/** Each stream's length (null until known; a stream that cannot be read is left out). */
function useLogSizes(runId: number, stage: string, attempt: number, generation: number,
                     live: boolean): Record<string, number> | null {
  const [sizes, setSizes] = useState<Record<string, number> | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      const got: Record<string, number> = {};
      await Promise.all(STREAMS.map(async (x) => {
        try {
          got[x] = await logSize(runId, stage, attempt, x);
        } catch {
          /* unknown: the viewer says why when it reads */
        }
      }));
      if (stopped) return;
      setSizes(got);
      if (live) timer = setTimeout(load, SIZES_MS);
    };
    void load();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [runId, stage, attempt, generation, live]);
  return sizes;
}

export function LogViewer({ runId, stage, generation, failed, active, loc, onLocation }: {
  runId: number; stage: string;
  /** Changes when the stage gets a new attempt, so "latest" (0) reads it from the start. */
  generation: number;
  /** The attempt shown ended in failure: open stderr when it holds something. */
  failed: boolean;
  /** The stage still runs: stream sizes are refreshed. */
  active: boolean;
  loc: LogLocation;
  onLocation: (loc: LogLocation) => void;
}) {
  const attempt = loc.attempt ?? 0;
  const sizes = useLogSizes(runId, stage, attempt, generation, active);
  // A failed attempt's error is on stderr: wait for the sizes to choose, unless the link did.
  const stream = chooseStream(loc.stream, failed, sizes);
  const [follow, setFollow] = useState(loc.at === undefined);
  const [jump, setJump] = useState(0); // bumped to read again at the same place
  const st = useRef<LogState>(fresh());
  const pre = useRef<HTMLPreElement>(null);
  const scrolled = useRef(false); // the highlighted line was scrolled into view
  // What the user asked for (a window opened, a jump, earlier or later) renders at once;
  // following a growing log goes through the page's once-a-second render.
  const [, setShown] = useState(0);
  const renderNow = () => setShown((n) => n + 1);

  useEffect(() => {
    if (!stream) return;
    const s = fresh();
    st.current = s;
    const at = loc.at;
    s.highlight = at ?? -1;
    scrolled.current = false;
    setFollow(at === undefined);
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const later = (f: () => void, ms: number) => { if (!stopped) timer = setTimeout(f, ms); };
    const changed = () => { s.version = ++logVersions; s.error = ""; requestRender(); };
    const failedRead = (e: unknown, retry: () => void) => {
      if (stopped) return;
      s.error = message(e);
      requestRender();
      later(retry, RETRY_MS);
    };
    s.poll = async () => {
      clearTimeout(timer);
      try {
        const c = await readLog(runId, stage, s.attempt || attempt, stream, s.text.end, WINDOW);
        if (stopped || !s.live) return;
        s.text.append(c.text);
        s.finished = c.finished;
        changed();
        if (!c.finished) later(s.poll, c.text.length >= WINDOW ? 0 : FOLLOW_MS);
      } catch (e) {
        failedRead(e, s.poll);
      }
    };
    const open = async () => {
      try {
        const start = at === undefined ? -WINDOW : Math.max(0, at - BEFORE);
        let c = await readLog(runId, stage, attempt, stream, start, WINDOW);
        if (stopped) return;
        if (at !== undefined && at > 0 && c.text.length === 0) {
          // Past the end: show the end, and say so.
          c = await readLog(runId, stage, attempt, stream, -WINDOW, WINDOW);
          if (stopped) return;
          s.note = `byte ${formatNumber(at)} is past the end (${formatBytes(c.next_offset)})`;
          s.highlight = -1;
        }
        const cut = c.offset > 0 ? firstLineStart(c.text) : 0;
        s.text = new LogText(MAX_LINES, c.offset + cut);
        s.text.append(c.text.subarray(cut));
        s.attempt = c.attempt;
        s.finished = c.finished;
        s.live = at === undefined || s.note !== "" || c.text.length < WINDOW; // short: at the end
        s.loaded = true;
        s.version = ++logVersions;
        s.error = "";
        renderNow();
        if (s.live && !c.finished) later(s.poll, FOLLOW_MS);
      } catch (e) {
        failedRead(e, open);
      }
    };
    void open();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [runId, stage, attempt, stream, generation, loc.at, jump]);

  const s = st.current;
  const lines = s.text.display();
  const hl = s.highlight >= 0 ? s.text.lineAt(s.highlight) : -1;
  useLayoutEffect(() => {
    const el = pre.current;
    if (!el) return;
    if (hl >= 0 && !scrolled.current) {
      const line = el.querySelector<HTMLElement>("[data-hl]");
      if (line) {
        el.scrollTop = line.offsetTop - el.offsetTop - el.clientHeight / 3;
        scrolled.current = true;
      }
    } else if (follow && s.live) {
      el.scrollTop = el.scrollHeight;
    }
  });

  /** Shows `to`: through the hash, or by reading again when its offset is the one shown. */
  const go = (to: LogLocation) => {
    if (to.at === loc.at) setJump((n) => n + 1);
    onLocation({ ...to, attempt: loc.attempt });
  };
  const here = { stream: stream || undefined, q: loc.q };

  const loadEarlier = async () => {
    const cur = st.current;
    const first = cur.text.first;
    if (first <= 0) return;
    const start = Math.max(0, first - WINDOW);
    try {
      const c = await readLog(runId, stage, cur.attempt || attempt, stream, start, first - start);
      const cut = start > 0 ? firstLineStart(c.text) : 0;
      cur.text.prepend(c.text.subarray(cut));
      cur.version = ++logVersions;
    } catch (e) {
      cur.error = message(e);
    }
    setFollow(false);
    renderNow();
  };

  const loadLater = async () => {
    const cur = st.current;
    try {
      const c = await readLog(runId, stage, cur.attempt || attempt, stream, cur.text.end, WINDOW);
      cur.text.append(c.text);
      cur.finished = c.finished;
      cur.version = ++logVersions;
      if (c.text.length < WINDOW) {
        cur.live = true;
        if (!c.finished) cur.poll();
      }
    } catch (e) {
      cur.error = message(e);
    }
    renderNow();
  };

  const onScroll = () => {
    const el = pre.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atBottom !== follow) setFollow(atBottom);
  };

  const [goto, setGoto] = useState("");
  const gotoOffset = () => {
    const t = goto.replace(/[\s,_]/g, ""); // "1,048,576" as the bar shows it
    if (/^\d{1,15}$/.test(t)) go({ ...here, at: Number(t) });
  };

  const sizeOf = (x: string) => {
    const known = sizes?.[x];
    if (x === stream && s.loaded && s.live) return Math.max(known ?? 0, s.text.end);
    return known;
  };

  return (
    <div class="log" data-testid="log-viewer">
      <div class="log-bar">
        <div class="seg-buttons">
          {STREAMS.map((x) => {
            const n = sizeOf(x);
            return (
              <button key={x} class={stream === x ? "on" : ""} data-testid={`log-tab-${x}`}
                      data-bytes={n ?? ""} onClick={() => onLocation({ attempt: loc.attempt, stream: x, q: loc.q })}>
                {x}{n === undefined ? "" : n === 0 ? " · empty" : ` · ${formatBytes(n)}`}
              </button>
            );
          })}
        </div>
        <button data-testid="log-start" disabled={!s.loaded} onClick={() => go({ ...here, at: 0 })}>
          Start
        </button>
        <button disabled={s.text.first <= 0} onClick={loadEarlier} data-testid="load-earlier">
          Load earlier{s.text.first > 0 ? ` (${formatBytes(s.text.first)} before)` : ""}
        </button>
        {s.loaded && !s.live && (
          <button onClick={loadLater} data-testid="load-later">Load later</button>
        )}
        <button data-testid="log-end" disabled={!s.loaded} onClick={() => go(here)}>End</button>
        <form class="log-goto" onSubmit={(e) => { e.preventDefault(); gotoOffset(); }}>
          <input type="text" inputMode="numeric" placeholder="byte offset" value={goto} size={11}
                 data-testid="log-goto-input" onInput={(e) => setGoto((e.target as HTMLInputElement).value)} />
          <button type="submit" data-testid="log-goto">Go</button>
        </form>
        <span class="muted" data-testid="log-state">
          {`bytes ${formatNumber(s.text.first)}–${formatNumber(s.text.end)} · `}
          {!s.live ? "window — Load later or End to follow"
            : s.finished ? "complete" : follow ? "following" : "paused — scroll to the end to follow"}
          {s.text.dropped > 0 ? ` · ${s.text.dropped} older lines dropped from view` : ""}
          {s.note ? ` · ${s.note}` : ""}
        </span>
        <a class="button" href={logDownloadUrl(runId, stage, s.attempt || attempt, stream || "stdout")}
           download>Raw</a>
      </div>
      {stream && (
        <LogSearch runId={runId} stage={stage} attempt={attempt} stream={stream}
                   query={loc.q ?? ""} generation={generation}
                   onQuery={(q) => onLocation({ ...loc, stream, q: q || undefined })}
                   onPick={(offset) => go({ ...here, at: offset })} />
      )}
      {s.error && !s.loaded
        ? <div class="log-error" role="alert" data-testid="log-error">{s.error}</div>
        : (
          <>
            {s.error && <div class="log-error small" role="alert">{s.error}</div>}
            <pre ref={pre} class="log-pane" onScroll={onScroll} data-testid="log-text">
              {lines.length
                ? <LogLines lines={lines} version={s.version} highlight={hl} />
                : !s.loaded ? "loading…" : s.finished ? "(no output)" : "(no output yet)"}
            </pre>
          </>
        )}
    </div>
  );
}
