// The log viewer: opens at the tail (last 64 KiB), "load earlier" reads the 64 KiB before,
// follows while the attempt runs (polling the bytes after the last read), keeps at most
// MAX_LINES lines, collapses \r progress lines, offers the raw file, and says why when the
// log cannot be read ("agent X not connected") instead of showing an empty pane. The text is
// one text node: nothing in it is ever parsed as HTML.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError, logDownloadUrl, readLog } from "../api/client";
import { LogText, firstLineStart } from "../lib/logtext";
import { formatBytes } from "../lib/format";
import { requestRender } from "../store/scheduler";

const TAIL = 64 * 1024;
const MAX_LINES = 5000;
const FOLLOW_MS = 1000;
const RETRY_MS = 3000;

interface LogState {
  text: LogText;
  first: number; // byte offset of the first line held
  next: number; // byte offset to read from next
  finished: boolean;
  attempt: number;
  error: string;
  loaded: boolean;
}

function fresh(): LogState {
  return { text: new LogText(MAX_LINES), first: 0, next: 0, finished: false, attempt: 0, error: "", loaded: false };
}

export function LogViewer({ runId, stage, attempt, generation }: {
  runId: number; stage: string; attempt: number;
  /** Changes when the stage gets a new attempt, so "latest" (0) reads it from the start. */
  generation: number;
}) {
  const [stream, setStream] = useState("stdout");
  const [follow, setFollow] = useState(true);
  const st = useRef<LogState>(fresh());
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    const s = fresh();
    st.current = s;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const later = (f: () => void, ms: number) => { if (!stopped) timer = setTimeout(f, ms); };
    const poll = async () => {
      try {
        const initial = !s.loaded;
        const c = await readLog(runId, stage, attempt, stream, initial ? -TAIL : s.next, TAIL);
        if (stopped) return;
        let bytes = c.text;
        if (initial) {
          const cut = c.offset > 0 ? firstLineStart(bytes) : 0;
          bytes = bytes.subarray(cut);
          s.first = c.offset + cut;
          s.loaded = true;
        }
        s.text.append(bytes);
        s.next = c.next_offset;
        s.finished = c.finished;
        s.attempt = c.attempt;
        s.error = "";
        requestRender();
        if (!c.finished) later(poll, c.text.length >= TAIL ? 0 : FOLLOW_MS);
      } catch (e) {
        if (stopped) return;
        s.error = e instanceof ApiError ? e.message : String(e);
        requestRender();
        later(poll, RETRY_MS);
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [runId, stage, attempt, stream, generation]);

  const s = st.current;
  const lines = s.text.display();
  useLayoutEffect(() => {
    if (follow && pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  });

  const loadEarlier = async () => {
    const cur = st.current;
    if (cur.first <= 0) return;
    const start = Math.max(0, cur.first - TAIL);
    try {
      const c = await readLog(runId, stage, cur.attempt || attempt, stream, start, cur.first - start);
      let bytes = c.text;
      const cut = start > 0 ? firstLineStart(bytes) : 0;
      bytes = bytes.subarray(cut);
      cur.text.prepend(bytes);
      cur.first = start + cut;
    } catch (e) {
      cur.error = e instanceof ApiError ? e.message : String(e);
    }
    setFollow(false);
    requestRender();
  };

  const onScroll = () => {
    const el = pre.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
    if (atBottom !== follow) setFollow(atBottom);
  };

  return (
    <div class="log" data-testid="log-viewer">
      <div class="log-bar">
        <div class="seg-buttons">
          {["stdout", "stderr"].map((x) => (
            <button key={x} class={stream === x ? "on" : ""} onClick={() => setStream(x)}>{x}</button>
          ))}
        </div>
        <button disabled={s.first <= 0} onClick={loadEarlier} data-testid="load-earlier">
          Load earlier{s.first > 0 ? ` (${formatBytes(s.first)} before)` : ""}
        </button>
        <span class="muted">
          {s.finished ? "complete" : follow ? "following" : "paused — scroll to the end to follow"}
          {s.text.dropped > 0 ? ` · ${s.text.dropped} older lines dropped from view` : ""}
        </span>
        <a class="button" href={logDownloadUrl(runId, stage, s.attempt || attempt, stream)}
           download>Raw</a>
      </div>
      {s.error && !s.loaded
        ? <div class="log-error" role="alert" data-testid="log-error">{s.error}</div>
        : (
          <>
            {s.error && <div class="log-error small" role="alert">{s.error}</div>}
            <pre ref={pre} class="log-pane" onScroll={onScroll} data-testid="log-text">
              {lines.length ? lines.join("\n") : (s.loaded ? "(no output yet)" : "loading…")}
            </pre>
          </>
        )}
    </div>
  );
}
