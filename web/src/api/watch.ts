// The live view of one run: GET /runs/{id}/watch as Server-Sent Events. EventSource
// reconnects by itself after a network error and sends Last-Event-ID, so the server replays
// only what followed (or a fresh snapshot). When the server refuses the stream (503 past the
// cap) EventSource gives up; then this reads the run once and opens a new stream later. When
// that read says there is no such run (404), the stream is not tried again: the page says the
// run does not exist (runMissing), and the connection is not "disconnected" for it.
import { useEffect } from "preact/hooks";
import { API, ApiError, getRun } from "./client";
import { applyUpdate, lacksCachedFrom, toRunUpdate, withCachedFrom } from "./convert";
import { noteStream } from "./connection";
import type { Run } from "./types";
import { renderNow, requestRender } from "../store/scheduler";

const runs = new Map<number, Run>();
const ended = new Set<number>();
const missing = new Map<number, string>(); // run id -> the server's "no run N"
const generations = new Map<number, number>();
const RETRY_MS = 3000;

function open(id: number): () => void {
  let es: EventSource | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;
  let askedCachedFrom = false;
  let streamed = false; // the stream's first data has come

  const connect = () => {
    noteStream("connecting");
    es = new EventSource(`${API}/runs/${id}/watch`);
    const onData = (ev: MessageEvent) => {
      let urgent = false;
      try {
        const j = JSON.parse(ev.data);
        // The page waits for the run's first data and for the last piece of a big snapshot.
        urgent = !streamed || j.snapshot_complete === true;
        streamed = true;
        runs.set(id, applyUpdate(runs.get(id) ?? null, toRunUpdate(j)));
      } catch {
        return; // a malformed frame changes nothing
      }
      noteStream("live");
      if (urgent) renderNow();
      else requestRender();
      // The stream may not say where a reused stage came from; the stored run does.
      if (!askedCachedFrom && lacksCachedFrom(runs.get(id)!)) {
        askedCachedFrom = true;
        getRun(id).then((stored) => {
          const live = runs.get(id);
          if (live) runs.set(id, withCachedFrom(live, stored));
          requestRender();
        }).catch(() => { askedCachedFrom = false; });
      }
    };
    es.addEventListener("snapshot", onData as EventListener);
    es.addEventListener("update", onData as EventListener);
    es.addEventListener("end", () => {
      ended.add(id);
      es?.close();
      noteStream(null);
      requestRender();
    });
    es.onopen = () => noteStream("live");
    es.onerror = () => {
      if (closed) return;
      if (!es || es.readyState !== EventSource.CLOSED) {
        noteStream("disconnected"); // a network error: EventSource tries again by itself
        return;
      }
      // Refused (not a network error): read the run once to learn why, then maybe try again.
      noteStream("connecting");
      getRun(id).then((r) => {
        missing.delete(id);
        runs.set(id, r);
        requestRender();
        if (!closed) timer = setTimeout(connect, RETRY_MS);
      }).catch((e) => {
        if (closed) return;
        if (e instanceof ApiError && e.status === 404) {
          missing.set(id, e.message);
          noteStream(null); // an answer, not a lost connection
          requestRender();
          return;
        }
        // longhauld answered (its own error body): not a lost connection.
        const answered = e instanceof ApiError && e.status > 0 && (e.status < 500 || e.code !== "");
        noteStream(answered ? "connecting" : "disconnected");
        requestRender();
        timer = setTimeout(connect, RETRY_MS);
      });
    };
  };
  connect();
  // A big run's stream starts after longhauld has read all of its stages (seconds for
  // 100,000); its first page (GET /runs/{id}: stage_counts and 1,000 stages) comes at once and
  // is shown until the stream's first data.
  if (!runs.has(id)) {
    getRun(id).then((r) => {
      if (closed || streamed || runs.has(id)) return;
      runs.set(id, r);
      renderNow();
    }).catch(() => {});
  }
  return () => {
    closed = true;
    clearTimeout(timer);
    es?.close();
    noteStream(null);
  };
}

/** The run as the live stream last described it (null until the first snapshot). */
export function useRunWatch(id: number): Run | null {
  const gen = generations.get(id) ?? 0;
  useEffect(() => {
    ended.delete(id);
    missing.delete(id); // asked again: it may exist by now
    return open(id);
  }, [id, gen]);
  return runs.get(id) ?? null;
}

/** The server's answer when run id does not exist ("no run 999"); null otherwise. */
export function runMissing(id: number): string | null {
  return missing.get(id) ?? null;
}

/** Whether the stream of run id has ended (the run is terminal). */
export function streamEnded(id: number): boolean {
  return ended.has(id);
}

/** Opens the stream of run id again (after Retry made a finished run live again). */
export function restartWatch(id: number): void {
  generations.set(id, (generations.get(id) ?? 0) + 1);
  requestRender();
}
