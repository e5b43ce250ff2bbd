// What the pivot page submits and what its plan says, as pure functions: the request a plan
// was made for (Submit sends exactly that one), and whether the pivot would repeat a run (every
// stage reused, or a run of the workflow with exactly its params).
import type { PivotRequest, PlanEntry, Run } from "../api/types";

/** Only the params whose value differs from the run's (what the pivot changes). */
export function changedParams(run: Record<string, string>, form: Record<string, string>) {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(form)) if (run[k] !== v) out[k] = v;
  return out;
}

/** The dry-run request for the form's state; its key is the same for the same request. */
export function pivotRequest(run: Record<string, string>, form: Record<string, string>,
                             fromStage: string, noCache: boolean): PivotRequest {
  return { params: changedParams(run, form), from_stage: fromStage, dry_run: true, no_cache: noCache };
}

export function requestKey(req: PivotRequest): string {
  const params = Object.keys(req.params).sort().map((k) => [k, req.params[k]]);
  return JSON.stringify([params, req.from_stage, req.no_cache]);
}

/** The runs every stage would be reused from, oldest first; null when some stage would run. */
export function allReusedFrom(parent: number, plan: PlanEntry[]): number[] | null {
  if (plan.length === 0 || plan.some((p) => p.action !== "reuse")) return null;
  return [...new Set(plan.map((p) => p.reuse_run_id || parent))].sort((a, b) => a - b);
}

/** The params the pivot's run would have: the run's, with the pivot's changes. */
export function pivotParams(run: Record<string, string>, req: PivotRequest): Record<string, string> {
  return { ...run, ...req.params };
}

/** The runs of `workflow` whose params are exactly `params` (the list may hold others). */
export function sameParamsRuns(runs: Run[], workflow: string, params: Record<string, string>): number[] {
  const want = Object.keys(params).sort();
  return runs.filter((r) => {
    if (r.workflow_name !== workflow) return false;
    const have = Object.keys(r.params).sort();
    return have.length === want.length && have.every((k, i) => k === want[i] && r.params[k] === params[k]);
  }).map((r) => r.id).sort((a, b) => a - b);
}
