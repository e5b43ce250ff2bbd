// One store for what the page shows: results of API reads kept by key, refreshed by polling,
// and read by components on each (throttled) render. A finished fetch asks for a render; it
// never renders by itself, so the page re-renders at most once a second (the first data under
// a key excepted: it is drawn at once).
import { useEffect } from "preact/hooks";
import { ApiError } from "../api/client";
import { renderNow, requestRender } from "./scheduler";

interface Entry {
  data: unknown;
  error: ApiError | null;
  inflight: boolean;
}

const cache = new Map<string, Entry>();

/** Loads key once (none while a load of it is under way); exported for tests. */
export async function refresh<T>(key: string, load: () => Promise<T>): Promise<void> {
  let e = cache.get(key);
  if (!e) {
    e = { data: null, error: null, inflight: false };
    cache.set(key, e);
  }
  if (e.inflight) return;
  e.inflight = true;
  const first = e.data === null;
  try {
    e.data = await load();
    e.error = null;
  } catch (err) {
    e.error = err instanceof ApiError ? err : new ApiError(String(err), 0, "UNKNOWN");
  } finally {
    e.inflight = false;
    // The first data under a key is what the page waits for: drawn at once, not throttled.
    if (first && e.data !== null) renderNow();
    else requestRender();
  }
}

export interface ResourceState<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * The result of load(), kept under key; fetched when key changes and every pollMs after
 * (0: once). key null: nothing. A failed poll keeps the last data and carries the error.
 */
export function useResource<T>(key: string | null, load: () => Promise<T>,
                               pollMs = 0): ResourceState<T> {
  useEffect(() => {
    if (key === null) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      await refresh(key, load);
      if (!stopped && pollMs > 0) timer = setTimeout(tick, pollMs);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [key, pollMs]);
  const e = key === null ? undefined : cache.get(key);
  return {
    data: (e?.data as T) ?? null,
    error: e?.error ?? null,
    loading: !e || (e.data === null && e.error === null),
    reload: () => (key === null ? Promise.resolve() : refresh(key, load)),
  };
}

/** Drops cached results whose key starts with prefix (after a mutation). */
export function invalidate(prefix: string): void {
  for (const k of [...cache.keys()]) if (k.startsWith(prefix)) cache.delete(k);
}
