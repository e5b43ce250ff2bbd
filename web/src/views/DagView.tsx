// The run's DAG as SVG: columns by longest path over needs, each stage coloured by its state;
// a reused stage says "from run N", a service "starting" / "serving". Names are SVG text.
//
// Big graphs: the view pans (drag) and zooms (wheel, buttons), starting fitted to the screen;
// a foreach's items are one group node with counts by state until clicked (lib/sweep.ts);
// only what is on screen is drawn, without text when zoomed far out. The layout is computed
// once per graph shape (names, needs, expanded groups), not on each status update.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { Stage } from "../api/types";
import { DEFAULT_GEOMETRY as G, type DagLayout, type NodeBox, layoutDag } from "../lib/dag";
import { fractionDone } from "../lib/format";
import { href, navigate } from "../lib/router";
import { COUNT_ORDER, stateName, tone } from "../lib/status";
import {
  type SweepGroup, ShapeMemo, collapseDag, countByState, filtering, stageMatches, sweepGroups,
} from "../lib/sweep";
import {
  type Rect, type View, ZOOM_STEP, centreOn, fitView, intersects, onScreen, panBy, visibleRect,
  zoomAt,
} from "../lib/viewport";

/** Below this zoom nodes are drawn without text (it would not be readable). */
const TEXT_ZOOM = 0.45;
/** Past this many nodes on screen, edges are left out (zoom in to see them). */
const MAX_EDGES_DRAWN = 4000;
/** A drag shorter than this (px) is a click. */
const DRAG_SLOP = 4;

function subtitle(s: Stage): string {
  if (s.status === "STAGE_CACHED") return s.cached_from_run_id ? `from run ${s.cached_from_run_id}` : "cached";
  const f = s.progress ? fractionDone(s.progress.done, s.progress.total) : null;
  const state = stateName(s.status);
  const attempt = s.attempt_count > 1 ? ` · attempt ${s.attempt_count}` : "";
  if (s.status === "STAGE_RUNNING" && f !== null) return `running ${Math.floor(f * 100)}%${attempt}`;
  return `${s.kind === "service" ? "service · " : ""}${state}${attempt}`;
}

function clip(name: string, max = 18): string {
  return name.length > max ? name.slice(0, max - 1) + "…" : name;
}

/** The state a group is drawn in: failed before running before waiting; succeeded if all did. */
function groupTone(counts: Record<string, number>): string {
  for (const k of ["failed", "running", "starting", "serving", "cancelled", "ready", "waiting"]) {
    if (counts[k]) return tone(k);
  }
  return counts.succeeded ? tone("succeeded") : tone(Object.keys(counts)[0] ?? "unspecified");
}

/** The order of a group's counts in its node: what needs a look first. */
const GROUP_COUNT_ORDER = [
  "failed", "running", "starting", "serving", "cancelled", "succeeded", "cached", "ready",
  "waiting", "skipped", "stopped",
];

function countsText(counts: Record<string, number>, order = COUNT_ORDER): string {
  const at = (k: string) => (order.indexOf(k) + order.length + 1) % (order.length + 1);
  return Object.entries(counts)
    .sort((a, b) => at(a[0]) - at(b[0]))
    .map(([k, v]) => `${v.toLocaleString("en-US")} ${k}`).join(" · ");
}

interface Shape {
  groups: SweepGroup[];
  groupOf: Map<string, SweepGroup>; // stage name -> its group
  byId: Map<string, SweepGroup>;
}

interface Drawn {
  layout: DagLayout;
  pos: Map<string, NodeBox>;
}

const rectOf = (n: NodeBox): Rect => ({ x: n.x, y: n.y, w: G.nodeWidth, h: G.nodeHeight });

export function DagView({ runId, stages, selected, query = "", state = "", maxHeight = 560 }: {
  runId: number; stages: Stage[]; selected?: string; query?: string; state?: string;
  maxHeight?: number;
}) {
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const expandedKey = [...expanded].sort().join("\n");
  const shapeMemo = useRef(new ShapeMemo<Shape>((s) => {
    const groups = sweepGroups(s);
    const groupOf = new Map<string, SweepGroup>();
    for (const g of groups) for (const m of g.members) groupOf.set(m, g);
    return { groups, groupOf, byId: new Map(groups.map((g) => [g.id, g])) };
  }));
  const shape = shapeMemo.current.get(stages);
  const drawnMemo = useRef(new ShapeMemo<Drawn>((s, key) => {
    const open = new Set(key ? key.split("\n") : []);
    const layout = layoutDag(collapseDag([...s], shapeMemo.current.get(s).groups, open));
    return { layout, pos: new Map(layout.nodes.map((n) => [n.name, n])) };
  }));
  const { layout, pos } = drawnMemo.current.get(stages, expandedKey);

  const wrap = useRef<HTMLDivElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const [width, setWidth] = useState(0);
  const height = Math.max(140, Math.min(maxHeight, layout.height + 24));
  const [view, setView] = useState<View | null>(null);
  const moved = useRef(false); // the user panned or zoomed: keep their view
  const fitted = useRef<DagLayout | null>(null);

  useLayoutEffect(() => {
    const el = wrap.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // Where the selected stage is drawn: its own node, or its collapsed group's.
  const selectedNode = selected ? pos.get(selected) ?? pos.get(shape.groupOf.get(selected)?.id ?? "") : undefined;

  // The first view: the whole graph fitted; the selected stage centred when the fit leaves it
  // small or off screen. A new shape fits again unless the user has moved the view.
  useLayoutEffect(() => {
    if (!width) return;
    if (fitted.current === layout && view) return;
    if (moved.current && view) {
      fitted.current = layout;
      return;
    }
    let v = fitView(layout.width, layout.height, width, height);
    if (selectedNode && (v.k < TEXT_ZOOM || !onScreen(v, rectOf(selectedNode), width, height))) {
      v = centreOn(v, rectOf(selectedNode), width, height, 1);
    }
    fitted.current = layout;
    setView(v);
  }, [layout, width, height]);

  // A newly selected stage is brought into view.
  useEffect(() => {
    if (!view || !selectedNode || !width) return;
    if (onScreen(view, rectOf(selectedNode), width, height) && view.k >= TEXT_ZOOM) return;
    setView(centreOn(view, rectOf(selectedNode), width, height, Math.max(view.k, 1)));
  }, [selected, selectedNode?.x, selectedNode?.y, width]);

  // Wheel zoom: a native listener, since a passive one (Preact's) cannot stop the page scroll.
  useEffect(() => {
    const el = svg.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = el.getBoundingClientRect();
      const factor = Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015));
      moved.current = true;
      setView((v) => (v ? zoomAt(v, factor, e.clientX - r.left, e.clientY - r.top) : v));
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => el.removeEventListener("wheel", onWheel);
  }, [svg.current]);

  const drag = useRef<{ x: number; y: number; v: View; id: number; on: boolean } | null>(null);
  const dragged = useRef(false);
  const onPointerDown = (e: PointerEvent) => {
    if (!view || e.button !== 0) return;
    drag.current = { x: e.clientX, y: e.clientY, v: view, id: e.pointerId, on: false };
    dragged.current = false;
  };
  const onPointerMove = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.on && Math.hypot(dx, dy) < DRAG_SLOP) return;
    if (!d.on) {
      d.on = true;
      svg.current?.setPointerCapture(d.id);
    }
    moved.current = true;
    dragged.current = true;
    setView(panBy(d.v, dx, dy));
  };
  const onPointerUp = () => {
    drag.current = null;
  };

  const zoomBy = (f: number) => {
    moved.current = true;
    setView((v) => (v ? zoomAt(v, f, width / 2, height / 2) : v));
  };
  const fit = () => {
    moved.current = false;
    setView(fitView(layout.width, layout.height, width, height));
  };
  const toggle = (id: string) => {
    const next = new Set(expanded);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setExpanded(next);
  };

  const byName = new Map(stages.map((s) => [s.name, s]));
  const filtered = filtering(query, state);
  const matches = (s: Stage) => stageMatches(s, query, state);
  const v = view ?? { x: 0, y: 0, k: 1 };
  const seen = visibleRect(v, width || 1, height, 60);
  const nodes = layout.nodes.filter((n) => intersects(seen, rectOf(n)));
  const withText = v.k >= TEXT_ZOOM;
  const edges = nodes.length > MAX_EDGES_DRAWN ? [] : layout.edges.filter((e) => {
    const a = pos.get(e.from)!;
    const b = pos.get(e.to)!;
    const y0 = Math.min(a.y, b.y);
    return intersects(seen, { x: a.x + G.nodeWidth, y: y0, w: b.x - a.x - G.nodeWidth, h: Math.max(a.y, b.y) - y0 + G.nodeHeight });
  });

  return (
    <div class="dag-view" data-testid="dag">
      <div class="dag-tools">
        <span class="seg-buttons">
          <button type="button" title="Zoom in" data-testid="dag-zoom-in" onClick={() => zoomBy(ZOOM_STEP)}>+</button>
          <button type="button" title="Zoom out" data-testid="dag-zoom-out" onClick={() => zoomBy(1 / ZOOM_STEP)}>−</button>
          <button type="button" title="Fit the graph to the screen" data-testid="dag-fit" onClick={fit}>Fit</button>
        </span>
        <span class="muted small" data-testid="dag-zoom">{Math.round(v.k * 100)}%</span>
        {expanded.size > 0 && (
          <button type="button" class="link small" data-testid="dag-collapse-all"
                  onClick={() => setExpanded(new Set())}>collapse all sweeps</button>
        )}
        {shape.groups.length > 0 && <span class="muted small">click a sweep to expand it</span>}
      </div>
      <div class="dag-wrap" ref={wrap} style={{ height: `${height}px` }}>
        <svg class={`dag ${filtered ? "filtering" : ""}`} ref={svg} width={width} height={height}
             role="img" aria-label="stage graph" data-nodes={nodes.length}
             onPointerDown={onPointerDown} onPointerMove={onPointerMove} onPointerUp={onPointerUp}
             onPointerCancel={onPointerUp}>
          <defs>
            <marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7"
                    orient="auto-start-reverse">
              <path d="M0,0 L8,4 L0,8 z" class="arrowhead" />
            </marker>
          </defs>
          <g transform={`translate(${v.x},${v.y}) scale(${v.k})`}>
            {edges.map((e) => (
              <path key={`${e.from}>${e.to}`} d={e.path} class="edge" marker-end={withText ? "url(#arrow)" : undefined} />
            ))}
            {nodes.map((n) => {
              const g = shape.byId.get(n.name);
              if (g && !expanded.has(g.id)) {
                const counts = countByState(g.members, (m) => byName.get(m)?.status);
                const hits = filtered ? g.members.filter((m) => { const s = byName.get(m); return s && matches(s); }).length : 0;
                const sel = !!selected && shape.groupOf.get(selected) === g;
                return (
                  <GroupNode key={n.name} runId={runId} n={n} g={g} counts={counts} hits={hits} filtered={filtered}
                             selected={sel} withText={withText}
                             onOpen={() => !dragged.current && toggle(g.id)} />
                );
              }
              const s = byName.get(n.name);
              if (!s) return null;
              const f = s.progress && s.status === "STAGE_RUNNING" ? fractionDone(s.progress.done, s.progress.total) : null;
              const hit = filtered && matches(s);
              const cls = `node tone-${tone(s.status)} ${selected === n.name ? "selected" : ""} ${hit ? "match" : filtered ? "dim" : ""}`;
              const open = () => { if (!dragged.current) navigate(href.stage(runId, n.name)); };
              return (
                <g key={n.name} class={cls} transform={`translate(${n.x},${n.y})`} data-stage={n.name}
                   onClick={open} onKeyDown={(e) => e.key === "Enter" && open()} role="link" tabIndex={0}>
                  <title>{`${s.name} — ${stateName(s.status)}${s.description ? "\n" + s.description : ""}`}</title>
                  <rect width={G.nodeWidth} height={G.nodeHeight} rx="7" class="box" />
                  <rect width="5" height={G.nodeHeight} rx="2" class="stripe" />
                  {f !== null && (
                    <rect x="5" y={G.nodeHeight - 4} width={(G.nodeWidth - 5) * f} height="4" class="prog" />
                  )}
                  {withText && <text x="14" y="19" class="name">{clip(s.name)}</text>}
                  {withText && <text x="14" y="35" class="sub">{subtitle(s)}</text>}
                  {withText && s.kind === "service" && <text x={G.nodeWidth - 10} y="19" class="kind" text-anchor="end">◆</text>}
                </g>
              );
            })}
          </g>
        </svg>
      </div>
    </div>
  );
}

/** A collapsed sweep: its name, item count, counts by state as text and as a stacked strip. */
function GroupNode({ runId, n, g, counts, hits, filtered, selected, withText, onOpen }: {
  runId: number; n: NodeBox; g: SweepGroup; counts: Record<string, number>; hits: number; filtered: boolean;
  selected: boolean; withText: boolean; onOpen: () => void;
}) {
  const total = g.members.length;
  let x = 5;
  const segs = Object.entries(counts)
    .sort((a, b) => COUNT_ORDER.indexOf(a[0]) - COUNT_ORDER.indexOf(b[0]))
    .map(([k, c]) => {
      const w = ((G.nodeWidth - 5) * c) / total;
      const r = <rect key={k} x={x} y={G.nodeHeight - 6} width={w} height="6" class={`seg tone-${tone(k)}`} />;
      x += w;
      return r;
    });
  const text = countsText(counts);
  const cls = `node group tone-${groupTone(counts)} ${selected ? "selected" : ""} ${filtered ? (hits ? "match" : "dim") : ""}`;
  return (
    <g class={cls} transform={`translate(${n.x},${n.y})`} data-group={g.id} data-counts={text}
       onClick={onOpen} onKeyDown={(e) => e.key === "Enter" && onOpen()} role="button" tabIndex={0}
       aria-label={`sweep ${g.base}: ${total} stages, ${text}`}>
      <title>{`${g.base}: ${total.toLocaleString("en-US")} stages (foreach)\n${text}\nclick to expand`}</title>
      <rect x="4" y="-4" width={G.nodeWidth} height={G.nodeHeight} rx="7" class="box shadow" />
      <rect width={G.nodeWidth} height={G.nodeHeight} rx="7" class="box" />
      <rect width="5" height={G.nodeHeight} rx="2" class="stripe" />
      {segs}
      {withText && <text x="14" y="17" class="name">{clip(`${g.base} ×${total.toLocaleString("en-US")}`, 16)}</text>}
      {withText && (
        <a href={href.sweep(runId, g.base)} data-sweep-link={g.base} onClick={(e) => e.stopPropagation()}
           onPointerDown={(e) => e.stopPropagation()}>
          <title>{`the items of ${g.base} as one table and chart`}</title>
          <text x={G.nodeWidth - 8} y="17" class="kind sweep-open" text-anchor="end">↗</text>
        </a>
      )}
      {withText && <text x="14" y="32" class="sub group-sub">{clip(filtered ? `${hits.toLocaleString("en-US")} match` : countsText(counts, GROUP_COUNT_ORDER), 25)}</text>}
    </g>
  );
}
