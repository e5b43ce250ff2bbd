// The dry-run plan that follows a form: a dry run 300 ms after the last edit (at once for the
// first), answers to older requests dropped, and whether the plan shown is the one for what
// the form says now (`current`): Submit sends exactly the request that plan was made for. The
// pivot and "New run" pages share it.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "../api/client";
import type { SubmitRunResponse } from "../api/types";

export const PLAN_DEBOUNCE_MS = 300;

export interface Planned<R> { key: string; req: R; resp: SubmitRunResponse }

export interface PlanState<R> {
  planned: Planned<R> | null;
  /** The last plan made, kept while a later dry run fails (the form keeps its fields). */
  lastOk: Planned<R> | null;
  error: { key: string; error: ApiError } | null;
  inflight: boolean;
  /** The plan shown is for the request the form says now. */
  current: boolean;
  /** Asks for the plan of the form now (the form's Update button). */
  replan: () => void;
  /** Shows an error of a submission under the form's key. */
  fail: (e: unknown) => void;
}

const asApiError = (e: unknown) => (e instanceof ApiError ? e : new ApiError(String(e), 0, ""));

/** `req` and its `key` (the same for the same request); null key: no plan asked (yet). */
export function usePlan<R>(req: R, key: string | null,
                           dryRun: (r: R) => Promise<SubmitRunResponse>): PlanState<R> {
  const [planned, setPlanned] = useState<Planned<R> | null>(null);
  const [lastOk, setLastOk] = useState<Planned<R> | null>(null);
  const [error, setError] = useState<{ key: string; error: ApiError } | null>(null);
  const [inflight, setInflight] = useState(false);
  const latest = useRef(0); // the dry run whose answer is wanted (older answers are dropped)
  const run = async (r: R, k: string) => {
    const seq = ++latest.current;
    setInflight(true);
    try {
      const resp = await dryRun(r);
      if (seq !== latest.current) return;
      setPlanned({ key: k, req: r, resp });
      setLastOk({ key: k, req: r, resp });
      setError(null);
    } catch (e) {
      if (seq !== latest.current) return;
      setError({ key: k, error: asApiError(e) });
      setPlanned(null);
    } finally {
      if (seq === latest.current) setInflight(false);
    }
  };
  // Every edit asks for a new plan once the typing pauses.
  useEffect(() => {
    if (key === null) return;
    const t = setTimeout(() => void run(req, key), planned || error ? PLAN_DEBOUNCE_MS : 0);
    return () => clearTimeout(t);
  }, [key]);
  return {
    planned, lastOk, error, inflight,
    current: key !== null && !inflight && planned !== null && planned.key === key,
    replan: () => { if (key !== null) void run(req, key); },
    fail: (e) => { if (key !== null) setError({ key, error: asApiError(e) }); },
  };
}
