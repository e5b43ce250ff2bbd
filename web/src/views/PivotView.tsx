// Pivot: the run's params as a form with the current values, the dry-run plan (each stage:
// run or reuse, why, and what reusing it saves), then submit, landing on the new run.
import { useEffect, useState } from "preact/hooks";
import { ApiError, getRun, pivot } from "../api/client";
import type { PlanEntry, Run } from "../api/types";
import { formatDuration, formatGpuHours } from "../lib/format";
import { href, navigate } from "../lib/router";
import { useResource } from "../store/resource";
import { Badge, Empty, ErrorBox, Section } from "./common";

/** Only the params whose value differs from the run's (what the pivot changes). */
export function changedParams(run: Record<string, string>, form: Record<string, string>) {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(form)) if (run[k] !== v) out[k] = v;
  return out;
}

function Plan({ plan }: { plan: PlanEntry[] }) {
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

function PivotForm({ run }: { run: Run }) {
  const [form, setForm] = useState<Record<string, string>>({ ...run.params });
  const [fromStage, setFromStage] = useState("");
  const [noCache, setNoCache] = useState(false);
  const [plan, setPlan] = useState<PlanEntry[] | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [newKey, setNewKey] = useState("");
  const req = (dry: boolean) => ({
    params: changedParams(run.params, form), from_stage: fromStage, dry_run: dry, no_cache: noCache,
  });
  const dryRun = async () => {
    setBusy(true);
    try {
      setPlan((await pivot(run.id, req(true))).plan);
      setError(null);
    } catch (e) {
      setError(e as ApiError);
      setPlan(null);
    } finally {
      setBusy(false);
    }
  };
  const submit = async () => {
    setBusy(true);
    try {
      const r = await pivot(run.id, req(false));
      if (r.run) navigate(href.run(r.run.id));
    } catch (e) {
      setError(e as ApiError);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => { void dryRun(); }, []);
  const keys = Object.keys(form).sort();
  const changed = changedParams(run.params, form);
  return (
    <>
      <Section title="Params">
        <form class="pivot-form" onSubmit={(e) => { e.preventDefault(); void dryRun(); }}>
          <table class="grid params-form">
            <tbody>
              {keys.map((k) => (
                <tr key={k} class={k in changed ? "changed" : ""}>
                  <th><label for={`p-${k}`}>{k}</label></th>
                  <td><input id={`p-${k}`} name={k} value={form[k]} data-param={k}
                             onInput={(e) => setForm({ ...form, [k]: (e.target as HTMLInputElement).value })} /></td>
                  <td class="muted small">{k in changed ? `was ${run.params[k] || "(empty)"}` : ""}</td>
                </tr>
              ))}
              <tr>
                <th><input placeholder="new param" value={newKey} size={12}
                           onInput={(e) => setNewKey((e.target as HTMLInputElement).value)} /></th>
                <td><button type="button" disabled={!newKey.trim() || newKey in form}
                            onClick={() => { setForm({ ...form, [newKey.trim()]: "" }); setNewKey(""); }}>Add</button></td>
                <td />
              </tr>
            </tbody>
          </table>
          <div class="form-row">
            <label>Re-run from stage
              <select value={fromStage} onChange={(e) => setFromStage((e.target as HTMLSelectElement).value)}>
                <option value="">(only what changed)</option>
                {run.stages.map((s) => <option key={s.name} value={s.name}>{s.name}</option>)}
              </select>
            </label>
            <label class="check"><input type="checkbox" checked={noCache}
              onChange={(e) => setNoCache((e.target as HTMLInputElement).checked)} /> no cache (run everything)</label>
            <button type="submit" disabled={busy} data-testid="update-plan">Update plan</button>
          </div>
        </form>
      </Section>
      <Section title="Plan" actions={
        <button class="primary" disabled={busy || !plan} onClick={submit} data-testid="submit-pivot">
          Submit pivot
        </button>}>
        <ErrorBox error={error} />
        {plan ? <Plan plan={plan} /> : !error && <Empty>Planning…</Empty>}
      </Section>
    </>
  );
}

export function PivotView({ id }: { id: number }) {
  const res = useResource<Run>(`run:${id}`, () => getRun(id));
  const run = res.data;
  if (!run) return res.error ? <ErrorBox error={res.error} /> : <Empty>Loading run {id}…</Empty>;
  return (
    <div>
      <div class="page-head">
        <div>
          <div class="crumbs"><a href="#/runs">Runs</a> / <a href={href.run(id)}>run {id}</a> / pivot</div>
          <h1>Pivot run {id} <span class="sub">{run.workflow_name}</span> <Badge state={run.status} /></h1>
          <p class="desc">Change params and submit the same workflow again: every stage whose inputs
            did not change is reused from this run.</p>
        </div>
      </div>
      <PivotForm key={id} run={run} />
    </div>
  );
}
