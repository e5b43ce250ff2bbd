import { describe, expect, it } from "vitest";
import { DEFAULT_GEOMETRY as G, columns, layoutDag } from "./dag";

// The shape of workflows/eagle3-local.yaml.
const EAGLE = [
  { name: "target_server", needs: [] },
  { name: "datagen", needs: ["target_server"] },
  { name: "extract", needs: ["datagen"] },
  { name: "finetune", needs: ["extract"] },
  { name: "bench_baseline", needs: ["target_server", "datagen"] },
  { name: "reference", needs: ["target_server", "bench_baseline", "datagen"] },
  { name: "spec_server", needs: ["finetune"] },
  { name: "bench_spec", needs: ["spec_server", "bench_baseline", "datagen"] },
  { name: "inspect", needs: ["spec_server", "bench_spec", "reference", "datagen", "extract", "finetune"] },
];

describe("columns", () => {
  it("puts each stage at the longest path over its needs", () => {
    const c = columns(EAGLE);
    expect(Object.fromEntries(c)).toEqual({
      target_server: 0, datagen: 1, extract: 2, bench_baseline: 2, finetune: 3, reference: 3,
      spec_server: 4, bench_spec: 5, inspect: 6,
    });
  });

  it("ignores unknown needs and survives a cycle", () => {
    const c = columns([
      { name: "a", needs: ["ghost"] },
      { name: "b", needs: ["c"] },
      { name: "c", needs: ["b"] },
    ]);
    expect(c.get("a")).toBe(0);
    expect(c.size).toBe(3);
  });
});

describe("layoutDag", () => {
  it("places columns left to right and stacks a column's stages without overlap", () => {
    const l = layoutDag(EAGLE);
    const pos = new Map(l.nodes.map((n) => [n.name, n]));
    expect(pos.get("datagen")!.x).toBeGreaterThan(pos.get("target_server")!.x);
    const col2 = l.nodes.filter((n) => n.col === 2).sort((a, b) => a.y - b.y);
    expect(col2.map((n) => n.name).sort()).toEqual(["bench_baseline", "extract"]);
    expect(col2[1].y - col2[0].y).toBeGreaterThanOrEqual(G.nodeHeight + G.rowGap);
    expect(l.width).toBe(2 * G.pad + 7 * G.nodeWidth + 6 * G.colGap);
    expect(l.height).toBe(2 * G.pad + 2 * G.nodeHeight + G.rowGap);
    for (const n of l.nodes) {
      expect(n.y).toBeGreaterThanOrEqual(G.pad);
      expect(n.y + G.nodeHeight).toBeLessThanOrEqual(l.height - G.pad);
    }
  });

  it("draws one edge per known need, from the right of the need to the left of the stage", () => {
    const l = layoutDag(EAGLE);
    expect(l.edges.length).toBe(EAGLE.reduce((a, s) => a + s.needs.length, 0));
    const e = l.edges.find((x) => x.from === "target_server" && x.to === "datagen")!;
    const from = l.nodes.find((n) => n.name === "target_server")!;
    expect(e.path.startsWith(`M${from.x + G.nodeWidth},${from.y + G.nodeHeight / 2} C`)).toBe(true);
  });

  it("orders a column by the rows of the stages' needs", () => {
    const l = layoutDag([
      { name: "r1", needs: [] },
      { name: "r2", needs: [] },
      { name: "under_r2", needs: ["r2"] },
      { name: "under_r1", needs: ["r1"] },
    ]);
    const row = (n: string) => l.nodes.find((x) => x.name === n)!.row;
    expect(row("under_r1")).toBe(0);
    expect(row("under_r2")).toBe(1);
  });

  it("lays out nothing for no stages", () => {
    expect(layoutDag([])).toEqual({ nodes: [], edges: [], width: 0, height: 0 });
  });
});

describe("columns of long and wide graphs", () => {
  it("lays out a chain of 50,000 stages without overflowing the stack", () => {
    const chain = Array.from({ length: 50000 }, (_, i) => ({ name: `s${i}`, needs: i ? [`s${i - 1}`] : [] }));
    const c = columns(chain);
    expect(c.get("s49999")).toBe(49999);
  });
  it("lays out 20,000 stages in well under a second", () => {
    const items = Array.from({ length: 20000 }, (_, i) => ({ name: `sweep-${i}`, needs: ["prep"] }));
    const t0 = performance.now();
    const l = layoutDag([{ name: "prep", needs: [] }, ...items,
      { name: "report", needs: items.map((s) => s.name) }]);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(l.nodes).toHaveLength(20002);
    expect(l.edges).toHaveLength(40000);
  });
});
