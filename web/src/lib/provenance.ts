// What runs ran on (docs/cli.md, "show" and "compare"): the workflow file's repository at
// submission and each stage's attempt environment, and what of it differs between runs. The
// CLI's compare (cli/provenance_view.cc) lists the same rows in the same order.
import type { AttemptEnvironment, Run, SourceState, Stage } from "../api/types";

const short = (sha: string) => (sha ? sha.slice(0, 12) : "–");

/** "abc123def456 (main, dirty: diff 3f2a…)" or why nothing is known. */
export function sourceText(s: SourceState | null): string {
  if (!s || !s.kind) return "not recorded";
  if (s.kind === "not_a_repository") return "not in a git repository";
  if (s.kind === "no_git") return "not recorded: git is not installed";
  if (s.kind !== "git") return `unknown (${s.note})`;
  const head = s.commit ? short(s.commit) : "no commit yet";
  const state = s.dirty ? `dirty: diff ${short(s.diff_sha256)}, ${s.diff_bytes} bytes` : "clean";
  return `${head} (${s.branch || "detached"}, ${state})`;
}

/** The environment of the stage's last attempt that recorded one. */
export function lastEnvironment(stage: Stage): AttemptEnvironment | null {
  for (let i = stage.attempts.length - 1; i >= 0; i--) {
    const e = stage.attempts[i].environment;
    if (e) return e;
  }
  return null;
}

export interface ProvenanceRow { what: string; values: string[] }

const diffText = (s: SourceState) => (s.dirty ? `dirty, diff ${short(s.diff_sha256)}` : "clean");

/**
 * What differs between the runs besides params: source commit, branch, uncommitted changes,
 * then per stage the engine version and the executable's hash, then the agents' versions.
 * Only rows where the values are not all the same; a stage without a recorded environment in
 * some run (reused there) is left out.
 */
export function provenanceRows(runs: Run[]): ProvenanceRow[] {
  const rows: ProvenanceRow[] = [];
  const add = (what: string, values: string[]) => {
    if (new Set(values).size > 1) rows.push({ what, values });
  };
  const sources = runs.map((r) => r.source);
  if (sources.every((s) => s?.kind === "git")) {
    const ss = sources as SourceState[];
    add("source commit", ss.map((s) => short(s.commit)));
    add("source branch", ss.map((s) => s.branch || "(detached)"));
    add("uncommitted changes", ss.map(diffText));
  } else {
    add("source", sources.map((s) => (s?.kind ? s.kind : "not recorded")));
  }
  const order: string[] = [];
  for (const r of runs) for (const s of r.stages) if (lastEnvironment(s) && !order.includes(s.name)) order.push(s.name);
  for (const name of order) {
    const envs = runs.map((r) => {
      const s = r.stages.find((x) => x.name === name);
      return s ? lastEnvironment(s) : null;
    });
    if (envs.some((e) => !e)) continue;
    const es = envs as AttemptEnvironment[];
    if (es.some((e) => e.engine_profile)) {
      add(`engine version (${name})`, es.map((e) => `${e.engine_profile} ${e.engine_version}`));
    }
    add(`executable ${es[0].executable} (${name})`, es.map((e) => short(e.executable_sha256)));
  }
  const agents = runs.map((r) => {
    const v = new Set<string>();
    for (const s of r.stages) for (const a of s.attempts) if (a.environment?.agent_version) v.add(a.environment.agent_version);
    return [...v].sort().join(", ");
  });
  if (agents.every((a) => a)) add("agent version", agents);
  return rows;
}
