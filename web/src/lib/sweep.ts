// Sweeps in the stage graph: a `foreach` stage becomes one stage per item, named
// `STAGE-VALUE[-VALUE...]` and listed next to each other in the run (docs/workflow-format.md).
// The run does not say which stages came from one `foreach`, so they are found by name: a
// run of consecutive stages (at least MIN_SWEEP_ITEMS) whose names share a prefix that ends
// before a "-" is one group, named by the longest such prefix they all share. The graph draws
// a group as one node (its counts by state) until it is expanded.
import type { DagInput } from "./dag";

/** Fewer consecutive stages than this with one prefix are drawn one by one. */
export const MIN_SWEEP_ITEMS = 3;

export interface SweepGroup {
  /** The node's name in the collapsed graph: `BASE-*` (no stage name has a "*"). */
  id: string;
  base: string;
  members: string[];
}

/** `a-b-c` -> `a`: the part before the first "-", or null without one. */
function firstPrefix(name: string): string | null {
  const i = name.indexOf("-");
  return i > 0 ? name.slice(0, i) : null;
}

/** The longest prefix of both that ends before a "-" in each (both start with `base-`). */
function commonBase(a: string, b: string): string {
  let end = 0;
  for (let i = 0; i < a.length && i < b.length && a[i] === b[i]; i++) {
    if (a[i] === "-") end = i;
  }
  return a.slice(0, end);
}

/** The sweeps of a run's stages, in order; a stage is in at most one. */
export function sweepGroups(stages: readonly { name: string }[]): SweepGroup[] {
  const names = new Set(stages.map((s) => s.name));
  const groups: SweepGroup[] = [];
  let i = 0;
  while (i < stages.length) {
    const p = firstPrefix(stages[i].name);
    let j = i + 1;
    if (p !== null) {
      while (j < stages.length && stages[j].name.startsWith(p + "-")) j++;
    }
    if (p !== null && j - i >= MIN_SWEEP_ITEMS) {
      const members = stages.slice(i, j).map((s) => s.name);
      let base = members[0];
      for (const m of members) base = commonBase(`${base}-`, `${m}-`) || p;
      // A base that is itself a stage's name (not possible for a foreach) is not a sweep's.
      if (!names.has(base)) groups.push({ id: `${base}-*`, base, members });
    }
    i = Math.max(j, i + 1);
  }
  return groups;
}

/**
 * The graph with every group not in `expanded` drawn as one node: a member's needs and the
 * needs on a member point at its group (each edge once; none from a group to itself).
 */
export function collapseDag(stages: DagInput[], groups: SweepGroup[],
                            expanded: ReadonlySet<string>): DagInput[] {
  const groupOf = new Map<string, string>();
  for (const g of groups) {
    if (!expanded.has(g.id)) for (const m of g.members) groupOf.set(m, g.id);
  }
  if (groupOf.size === 0) return stages;
  const out: DagInput[] = [];
  const groupNeeds = new Map<string, Set<string>>();
  const mapNeeds = (self: string, needs: string[], into: Set<string>) => {
    for (const n of needs) {
      const t = groupOf.get(n) ?? n;
      if (t !== self) into.add(t);
    }
  };
  for (const s of stages) {
    const g = groupOf.get(s.name);
    if (g === undefined) {
      const needs = new Set<string>();
      mapNeeds(s.name, s.needs, needs);
      out.push({ name: s.name, needs: [...needs] });
      continue;
    }
    let needs = groupNeeds.get(g);
    if (!needs) {
      needs = new Set();
      groupNeeds.set(g, needs);
      out.push({ name: g, needs: [] }); // needs filled in below, in the group's first place
    }
    mapNeeds(g, s.needs, needs);
  }
  for (const node of out) {
    const needs = groupNeeds.get(node.name);
    if (needs) node.needs = [...needs];
  }
  return out;
}

/** Whether two stage lists have the same names and needs in the same order (the same graph). */
export function sameShape(a: readonly DagInput[], b: readonly DagInput[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x.name !== y.name) return false;
    if (x.needs === y.needs) continue;
    if (x.needs.length !== y.needs.length) return false;
    for (let k = 0; k < x.needs.length; k++) if (x.needs[k] !== y.needs[k]) return false;
  }
  return true;
}

/**
 * A value computed from a stage list and a key, recomputed only when the graph's shape (names
 * and needs) or the key changes: a status update, which replaces every stage object, reuses it.
 */
export class ShapeMemo<T> {
  private stages: readonly DagInput[] | null = null;
  private key = "";
  private value: T | undefined;
  computations = 0;

  constructor(private readonly compute: (stages: readonly DagInput[], key: string) => T) {}

  get(stages: readonly DagInput[], key = ""): T {
    if (this.stages === null || key !== this.key || !sameShape(this.stages, stages)) {
      this.value = this.compute(stages, key);
      this.computations++;
      this.key = key;
    }
    this.stages = stages;
    return this.value as T;
  }
}

/** The sweeps of a run's stages, found again only when the graph's shape changes. */
const sweepsMemo = new ShapeMemo((stages) => sweepGroups(stages));
export function runSweeps(stages: readonly DagInput[]): SweepGroup[] {
  return sweepsMemo.get(stages);
}

/** A stage as the search and status filter see it. */
export interface Searchable {
  name: string;
  status: string;
  description?: string;
}

/**
 * Whether the stage matches the search text (case-insensitive, in its name or description;
 * several words must all match) and the state filter ("" is any state; else a state name as
 * the CLI prints it, "running", "failed", ...).
 */
export function stageMatches(s: Searchable, query: string, state: string): boolean {
  if (state && s.status.replace(/^STAGE_/, "").toLowerCase() !== state) return false;
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = `${s.name}\n${s.description ?? ""}`.toLowerCase();
  return words.every((w) => hay.includes(w));
}

/** Whether a search or state filter is set at all. */
export function filtering(query: string, state: string): boolean {
  return query.trim() !== "" || state !== "";
}

/** Counts of the members of a group by state name ("running": 3, ...). */
export function countByState(members: string[], statusOf: (name: string) => string | undefined):
    Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of members) {
    const st = statusOf(m);
    if (st === undefined) continue;
    const k = st.replace(/^STAGE_/, "").toLowerCase();
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}
