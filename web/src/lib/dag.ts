// Layout of a run's DAG for the SVG view: each stage's column is the length of the longest
// path of `needs` that leads to it (stages without needs in column 0), rows within a column
// follow the average row of the stage's needs (fewer crossings), ties in the given order.

export interface DagInput {
  name: string;
  needs: string[];
}

export interface NodeBox {
  name: string;
  col: number;
  row: number;
  x: number;
  y: number;
}

export interface Edge {
  from: string;
  to: string;
  path: string; // an SVG path, a cubic curve from the right of `from` to the left of `to`
}

export interface DagLayout {
  nodes: NodeBox[];
  edges: Edge[];
  width: number;
  height: number;
}

export interface DagGeometry {
  nodeWidth: number;
  nodeHeight: number;
  colGap: number;
  rowGap: number;
  pad: number;
}

export const DEFAULT_GEOMETRY: DagGeometry = {
  nodeWidth: 150, nodeHeight: 46, colGap: 34, rowGap: 14, pad: 8,
};

/**
 * The column of each stage: longest path over needs. Unknown needs are ignored; a cycle (not
 * possible in a valid run) is broken where it is found, so this always terminates. Iterative
 * (an explicit stack), so that a chain of 100,000 stages does not overflow the call stack.
 */
export function columns(stages: DagInput[]): Map<string, number> {
  const byName = new Map(stages.map((s) => [s.name, s]));
  const col = new Map<string, number>();
  const visiting = new Set<string>();
  for (const root of stages) {
    if (col.has(root.name)) continue;
    // Each frame: the stage and the index of the next need to look at.
    const stack: [DagInput, number][] = [[root, 0]];
    visiting.add(root.name);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const [s, i] = top;
      if (i < s.needs.length) {
        top[1] = i + 1;
        const n = byName.get(s.needs[i]);
        if (n && !col.has(n.name) && !visiting.has(n.name)) {
          visiting.add(n.name);
          stack.push([n, 0]);
        }
        continue;
      }
      let c = 0;
      for (const n of s.needs) {
        const k = col.get(n);
        if (k !== undefined) c = Math.max(c, k + 1);
      }
      col.set(s.name, c);
      visiting.delete(s.name);
      stack.pop();
    }
  }
  return col;
}

export function layoutDag(stages: DagInput[], g: DagGeometry = DEFAULT_GEOMETRY): DagLayout {
  const col = columns(stages);
  let ncols = 0;
  for (const c of col.values()) ncols = Math.max(ncols, c + 1);
  const byCol: DagInput[][] = Array.from({ length: ncols }, () => []);
  stages.forEach((s) => byCol[col.get(s.name)!].push(s));
  const row = new Map<string, number>();
  const order = new Map(stages.map((s, i) => [s.name, i]));
  for (const list of byCol) {
    const key = (s: DagInput) => {
      const rows = s.needs.map((n) => row.get(n)).filter((r): r is number => r !== undefined);
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : -1;
    };
    const keyed = list.map((s) => ({ s, k: key(s) }));
    keyed.sort((a, b) => a.k - b.k || order.get(a.s.name)! - order.get(b.s.name)!);
    keyed.forEach(({ s }, i) => row.set(s.name, i));
  }
  const maxRows = byCol.reduce((m, l) => Math.max(m, l.length), 0);
  const height = maxRows ? 2 * g.pad + maxRows * g.nodeHeight + (maxRows - 1) * g.rowGap : 0;
  const nodes: NodeBox[] = stages.map((s) => {
    const c = col.get(s.name)!;
    const r = row.get(s.name)!;
    // Each column is centred vertically.
    const n = byCol[c].length;
    const colHeight = n * g.nodeHeight + (n - 1) * g.rowGap;
    const top = g.pad + (height - 2 * g.pad - colHeight) / 2;
    return {
      name: s.name, col: c, row: r,
      x: g.pad + c * (g.nodeWidth + g.colGap),
      y: top + r * (g.nodeHeight + g.rowGap),
    };
  });
  const pos = new Map(nodes.map((n) => [n.name, n]));
  const edges: Edge[] = [];
  for (const s of stages) {
    const to = pos.get(s.name)!;
    for (const need of s.needs) {
      const from = pos.get(need);
      if (!from) continue;
      const x1 = from.x + g.nodeWidth;
      const y1 = from.y + g.nodeHeight / 2;
      const x2 = to.x;
      const y2 = to.y + g.nodeHeight / 2;
      const dx = Math.max(16, (x2 - x1) / 2);
      edges.push({
        from: need, to: s.name,
        path: `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`,
      });
    }
  }
  const width = ncols ? 2 * g.pad + ncols * g.nodeWidth + (ncols - 1) * g.colGap : 0;
  return { nodes, edges, width, height };
}
