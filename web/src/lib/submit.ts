// What the "New run" page submits, as pure functions: the kind of each declared param (from
// its default as written), whether a value fits it, the request a plan was made for (Submit
// sends exactly that one), the server's validation errors split into their file:line:col, and
// the workflows longhauld has seen (the newest run of each name).
import type { DeclaredParam, Run, SubmitRequest } from "../api/types";

export type ParamKind = "bool" | "int" | "number" | "text";

const INT = /^[-+]?\d+$/;
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const BOOL = /^(true|false|True|False|TRUE|FALSE)$/;

/** The kind a param's default says it has: `8` an integer, `0.1` a number, `true` a flag. */
export function paramKind(defaultValue: string): ParamKind {
  if (BOOL.test(defaultValue)) return "bool";
  if (INT.test(defaultValue)) return "int";
  if (NUMBER.test(defaultValue)) return "number";
  return "text";
}

export const KIND_LABEL: Record<ParamKind, string> = {
  bool: "true/false", int: "integer", number: "number", text: "text",
};

/** Why `value` does not fit a param of `kind` ("" when it does). */
export function paramError(kind: ParamKind, value: string): string {
  if (kind === "int" && !INT.test(value.trim())) return `'${value}' is not an integer`;
  if (kind === "number" && !NUMBER.test(value.trim())) return `'${value}' is not a number`;
  if (kind === "bool" && !BOOL.test(value.trim())) return `'${value}' is not true or false`;
  return "";
}

/** The form's errors by param name (only the params with one). */
export function formErrors(declared: DeclaredParam[], form: Record<string, string>) {
  const out: Record<string, string> = {};
  for (const p of declared) {
    if (!(p.name in form)) continue;
    const e = paramError(paramKind(p.default_value), form[p.name]);
    if (e) out[p.name] = e;
  }
  return out;
}

/** The --set values of the form: the declared params whose value differs from the default. */
export function overrides(declared: DeclaredParam[], form: Record<string, string>) {
  const out: Record<string, string> = {};
  for (const p of declared) {
    const v = form[p.name];
    if (v !== undefined && v.trim() !== p.default_value) out[p.name] = v.trim();
  }
  return out;
}

/** The dry-run request for the page's state. */
export function submitRequest(text: string, path: string, params: Record<string, string>,
                              noCache: boolean): SubmitRequest {
  return { workflow_text: text, workflow_path: path, params, dry_run: true, no_cache: noCache };
}

/** The same for the same request (what a plan was made for). */
export function submitKey(req: SubmitRequest): string {
  const params = Object.keys(req.params).sort().map((k) => [k, req.params[k]]);
  return JSON.stringify([req.workflow_text, req.workflow_path, params, req.no_cache]);
}

/** One problem the server found: where (line and column 0 when it names none) and what. */
export interface LocatedError { path: string; line: number; col: number; message: string; text: string }

const LOCATED = /^(.*?):(\d+):(\d+): (.*)$/;

/** The server's validation message, one problem a line (`PATH:LINE:COL: message`). */
export function locatedErrors(message: string): LocatedError[] {
  return message.split("\n").map((l) => l.trimEnd()).filter((l) => l !== "").map((text) => {
    const m = LOCATED.exec(text);
    if (!m) return { path: "", line: 0, col: 0, message: text, text };
    return { path: m[1], line: Number(m[2]), col: Number(m[3]), message: m[4], text };
  });
}

/** The character offset of line:col (1-based) in text, for the editor's caret. */
export function offsetOf(text: string, line: number, col: number): number {
  let at = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) return text.length;
    at = nl + 1;
  }
  return Math.min(text.length, at + Math.max(0, col - 1));
}

/** A workflow longhauld has seen: its name and the newest run that submitted it. */
export interface SeenWorkflow { name: string; run: number; path: string; runs: number }

/** The newest run of each workflow name among `runs` (newest first), by name. */
export function seenWorkflows(runs: Run[]): SeenWorkflow[] {
  const by = new Map<string, SeenWorkflow>();
  for (const r of runs) {
    const w = by.get(r.workflow_name);
    if (w) {
      w.runs++;
      if (r.id > w.run) { w.run = r.id; w.path = r.workflow_path; }
    } else {
      by.set(r.workflow_name, { name: r.workflow_name, run: r.id, path: r.workflow_path, runs: 1 });
    }
  }
  return [...by.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** A submission id as the CLI makes one: 32 random hex digits. */
export function newSubmissionId(): string {
  const b = new Uint8Array(16);
  crypto.getRandomValues(b);
  return [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
}
