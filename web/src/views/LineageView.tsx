// A stage's result, where it came from and where it went (docs/ui.md, "A stage's lineage"): the
// attempt that made it (here, or in the run it was reused from), the stages it needs with where
// theirs came from, and the stages that used it: this run's, and later runs of the workflow that
// reused it, each with the stages it made from it. An indented list, every run and stage a link (a
// stage's "lineage" link walks on). The same answer `longhaul lineage` prints (GET
// /runs/{id}/stages/{stage}/lineage).
import { getLineage } from "../api/client";
import type { Lineage, LineageOrigin } from "../api/types";
import { href } from "../lib/router";
import { useResource } from "../store/resource";
import { Badge, Empty, ErrorBox, NotFound, Section } from "./common";

function StageLink({ run, stage }: { run: number; stage: string }) {
  return (
    <span class="lineage-node">
      <a href={href.run(run)}>run {run}</a> stage{" "}
      <a class="mono" href={href.stage(run, stage)}>{stage}</a>{" "}
      <a class="small" href={href.lineage(run, stage)} data-lineage-link={`${run}/${stage}`}>lineage</a>
    </span>
  );
}

function Origin({ o }: { o: LineageOrigin }) {
  return (
    <span>
      <StageLink run={o.run_id} stage={o.stage} />
      {o.attempt > 0 && <span class="muted"> attempt {o.attempt}</span>}{" "}
      <span class={`tag ${o.how}`}>{o.how}</span>
    </span>
  );
}

export function LineageView({ runId, stage }: { runId: number; stage: string }) {
  const res = useResource<Lineage>(`lineage:${runId}/${stage}`, () => getLineage(runId, stage), 5000);
  if (res.error && !res.data) {
    return <NotFound title={`Lineage of ${stage}`} message={res.error.message} back={href.run(runId)}
                     backLabel={`back to run ${runId}`} />;
  }
  const l = res.data;
  if (!l) return <Empty>Loading…</Empty>;
  const here = l.used_by.filter((u) => u.run_id === l.run_id);
  const later = l.used_by.filter((u) => u.run_id !== l.run_id);
  return (
    <div data-testid="lineage-view">
      <div class="page-head">
        <h1>Lineage of <span class="mono">{l.stage}</span> in <a href={href.run(l.run_id)}>run {l.run_id}</a></h1>
        <Badge state={l.status} />
      </div>
      <ErrorBox error={res.error} />
      <Section title="Made by">
        <ul class="lineage">
          <li data-testid="lineage-made-by" data-run={l.made_by.run_id} data-how={l.made_by.how}>
            <Origin o={l.made_by} />
            {l.made_by.how === "reused" && <span class="muted small"> (reused in run {l.run_id})</span>}
            {l.inputs.length > 0 && (
              <ul data-testid="lineage-inputs">
                {l.inputs.map((i) => (
                  <li key={i.needs} data-input={i.needs} data-run={i.made_by.run_id} data-how={i.made_by.how}>
                    from <span class="mono">{i.needs}</span>: <Origin o={i.made_by} />
                  </li>
                ))}
              </ul>
            )}
            {l.inputs.length === 0 && <div class="muted small">it needs no stage</div>}
          </li>
        </ul>
      </Section>
      <Section title="Used by">
        {l.used_by.length === 0 && <Empty>Nothing used it yet.</Empty>}
        <ul class="lineage" data-testid="lineage-used-by">
          {here.map((u) => (
            <li key={`${u.run_id}/${u.stage}`} data-use={`${u.run_id}/${u.stage}`} data-how={u.how}>
              <StageLink run={u.run_id} stage={u.stage} /> <Badge state={u.status} />{" "}
              <span class="muted">{u.how}</span>
            </li>
          ))}
          {later.map((u) => (
            <li key={`${u.run_id}/${u.stage}`} data-use={`${u.run_id}/${u.stage}`} data-how={u.how}>
              <StageLink run={u.run_id} stage={u.stage} /> <Badge state={u.status} />{" "}
              <span class="muted">{u.how}</span>
              {u.produced.length > 0 && (
                <ul>
                  {u.produced.map((p) => (
                    <li key={p} data-produced={`${u.run_id}/${p}`}>
                      made <StageLink run={u.run_id} stage={p} />
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
        {l.more_runs && (
          <p class="muted small">Only the newest {l.runs_looked_at} runs of workflow {l.workflow_name} were looked at.</p>
        )}
      </Section>
    </div>
  );
}
