import { describe, expect, it } from "vitest";
import { layoutDag } from "./dag";
import {
  MIN_SWEEP_ITEMS, ShapeMemo, collapseDag, countByState, sameShape, stageMatches, sweepGroups,
} from "./sweep";

const st = (name: string, needs: string[] = []) => ({ name, needs });

// prep -> bench-{3,5}-{vllm,sglang} -> report, with a stage whose name has a "-" of its own.
const SWEEP = [
  st("prep"),
  st("bench-3-vllm", ["prep"]), st("bench-3-sglang", ["prep"]),
  st("bench-5-vllm", ["prep"]), st("bench-5-sglang", ["prep"]),
  st("report", ["bench-3-vllm", "bench-3-sglang", "bench-5-vllm", "bench-5-sglang"]),
  st("pair-x", ["report"]),
];

describe("sweepGroups", () => {
  it("groups consecutive items of one foreach under the prefix they share", () => {
    const g = sweepGroups(SWEEP);
    expect(g).toEqual([{
      id: "bench-*", base: "bench",
      members: ["bench-3-vllm", "bench-3-sglang", "bench-5-vllm", "bench-5-sglang"],
    }]);
  });

  it("keeps a base that has a '-' of its own, and values with '-'", () => {
    const g = sweepGroups([st("spec-server-refengine"), st("spec-server-refengine-misaligned"),
      st("spec-server-other")]);
    expect(g.map((x) => x.base)).toEqual(["spec-server"]);
  });

  it("leaves fewer than MIN_SWEEP_ITEMS, non-adjacent ones and a base that is a stage alone", () => {
    const few = Array.from({ length: MIN_SWEEP_ITEMS - 1 }, (_, i) => st(`a-${i}`));
    expect(sweepGroups(few)).toEqual([]);
    expect(sweepGroups([st("a-1"), st("b"), st("a-2"), st("c"), st("a-3")])).toEqual([]);
    expect(sweepGroups([st("a"), st("a-1"), st("a-2"), st("a-3")])).toEqual([]);
  });

  it("finds 20,000 items in one pass", () => {
    const many = Array.from({ length: 20000 }, (_, i) => st(`sweep-${i}-x`, ["prep"]));
    const t0 = performance.now();
    const g = sweepGroups([st("prep"), ...many]);
    expect(performance.now() - t0).toBeLessThan(500);
    expect(g).toHaveLength(1);
    expect(g[0].members).toHaveLength(20000);
  });
});

describe("collapseDag", () => {
  it("draws a collapsed group as one node with its edges once", () => {
    const groups = sweepGroups(SWEEP);
    const c = collapseDag(SWEEP, groups, new Set());
    expect(c).toEqual([
      st("prep"), st("bench-*", ["prep"]), st("report", ["bench-*"]), st("pair-x", ["report"]),
    ]);
    const l = layoutDag(c);
    expect(l.nodes.map((n) => [n.name, n.col])).toEqual([
      ["prep", 0], ["bench-*", 1], ["report", 2], ["pair-x", 3],
    ]);
    expect(l.edges).toHaveLength(3);
  });

  it("leaves an expanded group's items as they are", () => {
    const groups = sweepGroups(SWEEP);
    expect(collapseDag(SWEEP, groups, new Set(["bench-*"]))).toBe(SWEEP);
  });

  it("keeps edges between two sweeps, item to item collapsed to group to group", () => {
    const s = [
      st("a-1"), st("a-2"), st("a-3"),
      st("b-1", ["a-1"]), st("b-2", ["a-2"]), st("b-3", ["a-3"]),
    ];
    const g = sweepGroups(s);
    expect(g.map((x) => x.id)).toEqual(["a-*", "b-*"]);
    expect(collapseDag(s, g, new Set())).toEqual([st("a-*"), st("b-*", ["a-*"])]);
    expect(collapseDag(s, g, new Set(["a-*"]))).toEqual([
      st("a-1"), st("a-2"), st("a-3"), st("b-*", ["a-1", "a-2", "a-3"]),
    ]);
  });
});

describe("ShapeMemo", () => {
  it("recomputes only when names, needs or the key change", () => {
    const memo = new ShapeMemo((s) => layoutDag([...s]));
    const first = memo.get(SWEEP);
    // A status update: every stage a new object, needs new arrays with the same names.
    const update = SWEEP.map((s) => ({ ...s, needs: [...s.needs], status: "STAGE_RUNNING" }));
    expect(memo.get(update)).toBe(first);
    expect(memo.computations).toBe(1);
    expect(memo.get(update, "expanded:bench-*")).not.toBe(first);
    expect(memo.computations).toBe(2);
    const added = [...update, st("extra", ["prep"])];
    memo.get(added, "expanded:bench-*");
    expect(memo.computations).toBe(3);
    const rewired = added.map((s) => (s.name === "extra" ? st("extra", ["report"]) : s));
    memo.get(rewired, "expanded:bench-*");
    expect(memo.computations).toBe(4);
  });

  it("sameShape compares names and needs in order", () => {
    expect(sameShape([st("a", ["b"])], [st("a", ["b"])])).toBe(true);
    expect(sameShape([st("a", ["b"])], [st("a", ["c"])])).toBe(false);
    expect(sameShape([st("a")], [st("b")])).toBe(false);
    expect(sameShape([st("a")], [st("a"), st("b")])).toBe(false);
  });
});

describe("stageMatches", () => {
  const s = { name: "bench-3-vllm", status: "STAGE_FAILED", description: "Throughput at k=3" };
  it("matches every word in the name or description, any case", () => {
    expect(stageMatches(s, "", "")).toBe(true);
    expect(stageMatches(s, "VLLM", "")).toBe(true);
    expect(stageMatches(s, "bench throughput", "")).toBe(true);
    expect(stageMatches(s, "bench sglang", "")).toBe(false);
  });
  it("filters by state as the CLI spells it", () => {
    expect(stageMatches(s, "", "failed")).toBe(true);
    expect(stageMatches(s, "", "running")).toBe(false);
    expect(stageMatches(s, "vllm", "failed")).toBe(true);
  });
});

describe("countByState", () => {
  it("counts members by state name, skipping unknown ones", () => {
    const status: Record<string, string> = { a: "STAGE_RUNNING", b: "STAGE_RUNNING", c: "STAGE_FAILED" };
    expect(countByState(["a", "b", "c", "ghost"], (n) => status[n])).toEqual({ running: 2, failed: 1 });
  });
});
