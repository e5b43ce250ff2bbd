// State names as the CLI prints them, and the colour class each one is drawn with.
import type { AgentState, AttemptState, RunStatus, StageStatus } from "../api/types";

/** "STAGE_CACHED" -> "cached", "RUN_RUNNING" -> "running", "cached" -> "cached",
 *  "STAGE_STOPPED_EARLY" -> "stopped early". */
export function stateName(s: string): string {
  return s.replace(/^(RUN|STAGE|ATTEMPT|AGENT)_/, "").toLowerCase().replace(/_/g, " ");
}

const TONE: Record<string, string> = {
  pending: "idle", waiting: "idle", ready: "idle", skipped: "muted", unspecified: "muted",
  running: "run", starting: "start", serving: "serve",
  succeeded: "ok", exited: "ok", connected: "ok",
  failed: "bad", killed: "bad", lost: "bad",
  cancelled: "warn", unreachable: "warn", unknown: "warn", disconnected: "warn",
  cached: "cached", stopped: "muted",
  // A sweep item its early_stop rule stopped (docs/sweeps.md): neither failed nor cancelled.
  "stopped early": "early",
  // GPU service states (docs/gpus.md).
  ok: "ok", quarantined: "bad", drained: "warn",
};

/** The colour class of a state: idle, run, start, serve, ok, bad, warn, cached, early,
 *  muted. */
export function tone(s: string): string {
  return TONE[stateName(s)] ?? "muted";
}

export function isTerminalRun(s: RunStatus): boolean {
  return s === "RUN_SUCCEEDED" || s === "RUN_FAILED" || s === "RUN_CANCELLED";
}

export function isTerminalStage(s: StageStatus): boolean {
  return ["STAGE_SUCCEEDED", "STAGE_FAILED", "STAGE_CANCELLED", "STAGE_CACHED", "STAGE_SKIPPED",
    "STAGE_STOPPED", "STAGE_STOPPED_EARLY"].includes(s);
}

export function isActiveStage(s: StageStatus): boolean {
  return s === "STAGE_RUNNING" || s === "STAGE_STARTING" || s === "STAGE_SERVING";
}

export function isRetryable(s: StageStatus): boolean {
  return s === "STAGE_FAILED" || s === "STAGE_CANCELLED" || s === "STAGE_SKIPPED";
}

export function attemptEnded(s: AttemptState): boolean {
  return s === "ATTEMPT_EXITED" || s === "ATTEMPT_KILLED" || s === "ATTEMPT_LOST";
}

export type { AgentState };

/** Order of the stage-count bar's segments. */
export const COUNT_ORDER = [
  "succeeded", "cached", "serving", "running", "starting", "ready", "waiting", "stopped",
  "stopped early", "failed", "cancelled", "skipped",
];

/**
 * The level a stage's last message is drawn with: its own, except that an error on a stage
 * that succeeded after more than one attempt came from an attempt that failed, and is drawn as
 * "earlier" (not red): the stage is fine now.
 */
export function messageLevel(status: string, level: string, attempts: number): string {
  if (level === "error" && attempts > 1 && (status === "STAGE_SUCCEEDED" || status === "STAGE_CACHED")) {
    return "earlier";
  }
  return level || "info";
}
