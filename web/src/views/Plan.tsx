// A dry run's plan as a table: each stage, run or reuse, why, the run it would be reused from
// and what reusing it saves; above it the totals. The pivot and "New run" pages show it.
import type { PlanEntry } from "../api/types";
import { formatDuration, formatGpuHours } from "../lib/format";
import { href } from "../lib/router";

export function Plan({ plan }: { plan: PlanEntry[] }) {
  const reused = plan.filter((p) => p.action === "reuse");
  const savedWall = reused.reduce((a, p) => a + p.saved_wall_seconds, 0);
  const savedGpu = reused.reduce((a, p) => a + p.saved_gpu_hours, 0);
  return (
    <>
      <p class="plan-summary" data-testid="plan-summary">
        {plan.length - reused.length} to run, {reused.length} reused — saves{" "}
        <b>{formatDuration(savedWall)}</b> of stage time and <b>{formatGpuHours(savedGpu)}</b> GPU-hours
      </p>
      <table class="grid plan" data-testid="plan">
        <thead><tr><th>Stage</th><th>Action</th><th>Why</th><th>Reused from</th>
          <th class="num">Saves (wall)</th><th class="num">Saves (GPU-h)</th></tr></thead>
        <tbody>
          {plan.map((p) => (
            <tr key={p.stage} data-stage={p.stage} class={`action-${p.action}`}>
              <td class="name">{p.stage}</td>
              <td><span class={`badge tone-${p.action === "reuse" ? "cached" : "run"}`}>{p.action}</span></td>
              <td>{p.reason}</td>
              <td>{p.reuse_run_id ? <a href={href.stage(p.reuse_run_id, p.reuse_stage || p.stage)}>run {p.reuse_run_id}</a> : ""}</td>
              <td class="num">{p.action === "reuse" ? formatDuration(p.saved_wall_seconds) : ""}</td>
              <td class="num">{p.action === "reuse" ? formatGpuHours(p.saved_gpu_hours) : ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
