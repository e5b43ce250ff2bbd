// Buttons that change a run: each asks once more inline (no browser dialogs), shows the
// server's error, and reopens the live stream afterwards (a retried run is live again).
import { useState } from "preact/hooks";
import { ApiError } from "../api/client";
import { restartWatch } from "../api/watch";
import { requestRender } from "../store/scheduler";

export function ConfirmButton({ label, confirm, onConfirm, runId, danger, testId }: {
  label: string; confirm: string; onConfirm: () => Promise<unknown>; runId: number;
  danger?: boolean; testId?: string;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const go = async () => {
    setBusy(true);
    setError("");
    try {
      await onConfirm();
      restartWatch(runId);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
      setAsking(false);
      requestRender();
    }
  };
  if (!asking) {
    return (
      <span class="confirm">
        <button class={danger ? "danger" : ""} data-testid={testId} onClick={() => setAsking(true)}>{label}</button>
        {error && <span class="inline-error" role="alert">{error}</span>}
      </span>
    );
  }
  return (
    <span class="confirm asking">
      <span>{confirm}</span>
      <button class={danger ? "danger solid" : "primary"} disabled={busy}
              data-testid={testId ? `${testId}-confirm` : undefined} onClick={go}>Yes</button>
      <button disabled={busy} onClick={() => setAsking(false)}>No</button>
    </span>
  );
}

/**
 * An inline form's state for a call to longhauld: open or not, busy while it runs, and the
 * server's refusal to show beside it (ApiError's message: longhauld's words). `run(f, after)`
 * closes the form and calls `after` when f succeeds; on failure the form stays open.
 */
export function useInlineAction() {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const run = async (f: () => Promise<unknown>, after: () => void = () => {}) => {
    setBusy(true);
    setError("");
    try {
      await f();
      setOpen(false);
      after();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
    } finally {
      setBusy(false);
      requestRender();
    }
  };
  return { open, setOpen, busy, error, setError, run };
}
