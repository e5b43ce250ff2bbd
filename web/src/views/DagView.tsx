// The run's DAG as SVG: columns by longest path over needs, each stage coloured by its state;
// a reused stage says "from run N", a service "starting" / "serving". Names are SVG text.
import { useMemo } from "preact/hooks";
import type { Stage } from "../api/types";
import { DEFAULT_GEOMETRY as G, layoutDag } from "../lib/dag";
import { fractionDone } from "../lib/format";
import { href, navigate } from "../lib/router";
import { stateName, tone } from "../lib/status";

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

export function DagView({ runId, stages, selected }:
    { runId: number; stages: Stage[]; selected?: string }) {
  const shape = stages.map((s) => `${s.name}:${s.needs.join(",")}`).join(";");
  const layout = useMemo(() => layoutDag(stages), [shape]);
  const byName = new Map(stages.map((s) => [s.name, s]));
  return (
    <div class="dag-wrap">
      <svg class="dag" width={layout.width} height={layout.height}
           viewBox={`0 0 ${layout.width} ${layout.height}`} role="img" aria-label="stage graph">
        <defs>
          <marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7"
                  orient="auto-start-reverse">
            <path d="M0,0 L8,4 L0,8 z" class="arrowhead" />
          </marker>
        </defs>
        {layout.edges.map((e) => (
          <path key={`${e.from}>${e.to}`} d={e.path} class="edge" marker-end="url(#arrow)" />
        ))}
        {layout.nodes.map((n) => {
          const s = byName.get(n.name)!;
          const f = s.progress && s.status === "STAGE_RUNNING" ? fractionDone(s.progress.done, s.progress.total) : null;
          return (
            <g key={n.name} class={`node tone-${tone(s.status)} ${selected === n.name ? "selected" : ""}`}
               transform={`translate(${n.x},${n.y})`} data-stage={n.name}
               onClick={() => navigate(href.stage(runId, n.name))} role="link" tabIndex={0}>
              <title>{`${s.name} — ${stateName(s.status)}${s.description ? "\n" + s.description : ""}`}</title>
              <rect width={G.nodeWidth} height={G.nodeHeight} rx="7" class="box" />
              <rect width="5" height={G.nodeHeight} rx="2" class="stripe" />
              {f !== null && (
                <rect x="5" y={G.nodeHeight - 4} width={(G.nodeWidth - 5) * f} height="4" class="prog" />
              )}
              <text x="14" y="19" class="name">{clip(s.name)}</text>
              <text x="14" y="35" class="sub">{subtitle(s)}</text>
              {s.kind === "service" && <text x={G.nodeWidth - 10} y="19" class="kind" text-anchor="end">◆</text>}
            </g>
          );
        })}
      </svg>
    </div>
  );
}
