// The audit trail as the UI shows it: which run (and stage) an entry's target names, and its
// outcome split into code and message. Pure; views/AuditView.tsx draws them.

export interface AuditTarget { run: number; stage: string }

/**
 * "run 12" -> {run: 12, stage: ""}, "run 12 stage datagen" -> {run: 12, stage: "datagen"};
 * null for anything else (a dry run has no target).
 */
export function parseAuditTarget(target: string): AuditTarget | null {
  const m = /^run (\d+)(?: stage (\S+))?$/.exec(target);
  return m ? { run: Number(m[1]), stage: m[2] ?? "" } : null;
}

export interface AuditOutcome { ok: boolean; code: string; message: string }

/** "OK", or "FAILED_PRECONDITION: run 3 has ended" -> its code and message. */
export function auditOutcome(result: string): AuditOutcome {
  if (result === "OK") return { ok: true, code: "OK", message: "" };
  const i = result.indexOf(": ");
  return i < 0
    ? { ok: false, code: result, message: "" }
    : { ok: false, code: result.slice(0, i), message: result.slice(i + 2) };
}
