// Pivot: the run's params as a form with the current values, the dry-run plan (each stage:
// run or reuse, why, and what reusing it saves), then submit, landing on the new run. The plan
// follows every edit (a dry run 300 ms after the last one); Submit sends exactly the request
// the plan shown was made for, and is disabled while the form says something else.
import { useState } from "preact/hooks";
import { getRun, listRuns, pivot } from "../api/client";
import type { Run } from "../api/types";
import {
  allReusedFrom, changedParams, pivotParams, pivotRequest, requestKey, sameParamsRuns,
} from "../lib/pivot";
import { href, navigate } from "../lib/router";
import { useResource } from "../store/resource";
import { Badge, Empty, ErrorBox, NotFound, Section } from "./common";
import { Plan } from "./Plan";
import { usePlan } from "./usePlan";

function PivotForm({ run }: { run: Run }) {
  const [form, setForm] = useState<Record<string, string>>({ ...run.params });
  const [fromStage, setFromStage] = useState("");
  const [noCache, setNoCache] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [newKey, setNewKey] = useState("");
  const req = pivotRequest(run.params, form, fromStage, noCache);
  const key = requestKey(req);
  const { planned: made, error, inflight, current, replan, fail } =
    usePlan(req, key, (r) => pivot(run.id, r));
  const planned = made && { key: made.key, req: made.req, plan: made.resp.plan };
  const submit = async () => {
    if (!current || !planned) return;
    setSubmitting(true);
    try {
      // Exactly what the plan shown was made for.
      const r = await pivot(run.id, { ...planned.req, dry_run: false });
      if (r.run) navigate(href.run(r.run.id));
    } catch (e) {
      fail(e);
    } finally {
      setSubmitting(false);
    }
  };
  const keys = Object.keys(form).sort();
  const changed = changedParams(run.params, form);
  const reusedFrom = current && planned ? allReusedFrom(run.id, planned.plan) : null;
  // Runs of this workflow with exactly the params the pivot would have (not asked when the
  // pivot re-runs on purpose: from a stage, or without the cache).
  const wanted = planned && !planned.req.from_stage && !planned.req.no_cache
    ? pivotParams(run.params, planned.req) : null;
  const twins = useResource<Run[]>(
    wanted ? `pivot-twins:${run.id}:${planned!.key}` : null,
    async () => (await listRuns({ workflow: run.workflow_name, params: wanted!, limit: 20 })).runs);
  const same = current && wanted && twins.data ? sameParamsRuns(twins.data, run.workflow_name, wanted) : [];
  const runLinks = (ids: number[]) => ids.map((id, i) => (
    <span key={id}>{i > 0 && ", "}<a href={href.run(id)}>run {id}</a></span>));
  return (
    <>
      <Section title="Params">
        <form class="pivot-form" onSubmit={(e) => { e.preventDefault(); replan(); }}>
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
            <button type="submit" disabled={inflight} data-testid="update-plan">Update plan</button>
          </div>
        </form>
      </Section>
      <Section title="Plan" actions={
        <button class="primary" disabled={submitting || !current} onClick={submit} data-testid="submit-pivot"
                title={current ? "start this plan" : "the plan is being made for the params in the form"}>
          Submit pivot
        </button>}>
        {error && error.key === key && <ErrorBox error={error.error} />}
        {!current && (planned || error) && (
          <p class="note" data-testid="plan-stale">Planning for the params in the form…</p>)}
        {(same.length > 0 || reusedFrom) && (
          <div class="note warn" data-testid="pivot-repeats">
            {same.length > 0 && (
              <p>This pivot repeats {runLinks(same)}: {same.length > 1 ? "they have" : "it has"} exactly
                these params.</p>)}
            {reusedFrom && (
              <p>Every stage would be reused (from {runLinks(reusedFrom)}): nothing new would run.</p>)}
          </div>)}
        {planned
          ? <div class={current ? "" : "stale"}><Plan plan={planned.plan} /></div>
          : !error && <Empty>Planning…</Empty>}
      </Section>
    </>
  );
}

export function PivotView({ id }: { id: number }) {
  const res = useResource<Run>(`run:${id}`, () => getRun(id));
  const run = res.data;
  if (!run) {
    if (res.error?.status === 404) {
      return <NotFound title={`No run ${id}`} message={res.error.message} back="#/runs" backLabel="← All runs" />;
    }
    return res.error ? <ErrorBox error={res.error} /> : <Empty>Loading run {id}…</Empty>;
  }
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
