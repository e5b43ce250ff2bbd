// The runs page's and Compare's filters, checked: what a field holds that the server could
// not use is said next to the field, never dropped silently.
import type { Run } from "../api/types";

/** "k=v k2=v2" -> the NAME=VALUE terms, and an error for each term without a name and `=`. */
export function parseParamFilter(text: string): { params: string[]; error: string } {
  const params: string[] = [];
  const bad: string[] = [];
  for (const term of text.split(/\s+/).filter(Boolean)) {
    if (term.indexOf("=") > 0) params.push(term);
    else bad.push(term);
  }
  const error = bad.length
    ? `${bad.map((b) => `“${b}”`).join(", ")} ${bad.length > 1 ? "are" : "is"} not NAME=VALUE (e.g. lr=0.1)`
    : "";
  return { params, error };
}

/** "a.b, c" -> the metric names, and an error for each name that is not STAGE.NAME. */
export function parseMetricFilter(text: string): { metrics: string[]; error: string } {
  const metrics = text.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = metrics.filter((m) => m.indexOf(".") <= 0 || m.endsWith("."));
  const error = bad.length
    ? `${bad.map((b) => `“${b}”`).join(", ")}: a metric is STAGE.NAME (e.g. bench_spec.accept_rate)`
    : "";
  return { metrics, error };
}

/** The metrics asked for that no run listed has (their columns would be empty). */
export function metricsNoRunHas(runs: Run[], metrics: string[]): string[] {
  if (runs.length === 0) return [];
  return metrics.filter((m) => !runs.some((r) => m in r.summary_metrics));
}

/**
 * Why Compare's differences may be blank: the runs are of different workflows (their stages,
 * and so their metrics, have different names). "" when they are all of one workflow.
 */
export function workflowMismatch(runs: Run[]): string {
  const names = [...new Set(runs.map((r) => r.workflow_name))];
  if (names.length < 2) return "";
  const of = runs.map((r) => `run ${r.id} is ${r.workflow_name}`).join(", ");
  return `These runs are of different workflows (${of}): a difference (Δ) is shown only for ` +
    `a param, stage or metric both runs have.`;
}

/** "3, 4 5" -> the run ids, and an error naming each term that is not a run id. */
export function parseRunIds(text: string): { ids: number[]; error: string } {
  const terms = text.split(/[\s,]+/).filter(Boolean);
  const ids = terms.filter((t) => /^\d+$/.test(t) && Number(t) > 0).map(Number);
  const bad = terms.filter((t) => !/^\d+$/.test(t) || Number(t) <= 0);
  const error = bad.length
    ? `${bad.map((b) => `“${b}”`).join(", ")} ${bad.length > 1 ? "are not run ids" : "is not a run id"}`
    : "";
  return { ids, error };
}
