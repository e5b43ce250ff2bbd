// Grouped bars: one group per metric, one bar per run, each metric scaled to its own largest
// value (metrics have different units). SVG with text labels.
import { formatMetric } from "../lib/format";

const COLORS = ["#2563eb", "#f59e0b", "#10b981", "#8b5cf6", "#ef4444", "#0ea5e9"];

export function BarChart({ runs, metrics, values }:
    { runs: number[]; metrics: string[]; values: Array<Array<number | undefined>> }) {
  const rowH = 18;
  const groupH = runs.length * rowH + 16;
  const labelW = 300;
  const barW = 360;
  const height = metrics.length * groupH + 28;
  return (
    <div class="bars-wrap">
      <svg class="bars" width={labelW + barW + 90} height={height} role="img" aria-label="metrics bar chart">
        {metrics.map((m, mi) => {
          const vals = values.map((v) => v[mi]);
          const max = Math.max(1e-12, ...vals.map((v) => Math.abs(v ?? 0)));
          const y0 = mi * groupH + 4;
          return (
            <g key={m} transform={`translate(0,${y0})`}>
              <text x={labelW - 10} y={(runs.length * rowH) / 2 + 4} text-anchor="end" class="blabel">{m}</text>
              {runs.map((r, ri) => {
                const v = vals[ri];
                const w = v === undefined ? 0 : (Math.abs(v) / max) * barW;
                return (
                  <g key={r} transform={`translate(${labelW},${ri * rowH})`}>
                    <rect width={Math.max(w, v === undefined ? 0 : 1)} height={rowH - 4} rx="2" fill={COLORS[ri % COLORS.length]} />
                    <text x={w + 6} y={rowH - 8} class="bval">{v === undefined ? "–" : formatMetric(v)}</text>
                  </g>
                );
              })}
            </g>
          );
        })}
        <g transform={`translate(${labelW},${height - 14})`}>
          {runs.map((r, i) => (
            <g key={r} transform={`translate(${i * 90},0)`}>
              <rect width="10" height="10" y="-9" fill={COLORS[i % COLORS.length]} rx="2" />
              <text x="15" y="0" class="blegend">run {r}</text>
            </g>
          ))}
        </g>
      </svg>
    </div>
  );
}
