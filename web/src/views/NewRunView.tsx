// New run: a workflow (one longhauld has seen, as its newest run submitted it, or pasted or
// uploaded YAML), its declared params as a form (defaults shown, each value checked against
// the kind its default has), the dry-run plan (what would be reused from the cache and why),
// then Submit, landing on the new run. The plan follows every edit, as the pivot page's does
// (usePlan); the server's validation errors are listed beside the YAML with the file:line:col
// they carry, and a click on one puts the caret there. A caller whose role may not submit
// (a viewer's token) sees the page disabled, with the reason.
import { useRef, useState } from "preact/hooks";
import { getRunWorkflow, listRuns, submitRun, whoAmI } from "../api/client";
import type { DeclaredParam, Run, SubmitRequest, WhoAmI } from "../api/types";
import { href, navigate } from "../lib/router";
import {
  formErrors, KIND_LABEL, locatedErrors, newSubmissionId, offsetOf, overrides, paramKind,
  seenWorkflows, submitKey, submitRequest, type LocatedError,
} from "../lib/submit";
import { useResource } from "../store/resource";
import { Empty, ErrorBox, Section } from "./common";
import { Plan } from "./Plan";
import { usePlan } from "./usePlan";

const SEEN_RUNS = 500; // the workflows offered: those of the newest this many runs

function ParamField({ p, value, error, onChange }: {
  p: DeclaredParam; value: string | undefined; error: string; onChange: (v: string) => void;
}) {
  const kind = paramKind(p.default_value);
  const id = `np-${p.name}`;
  const shown = value ?? p.default_value;
  return (
    <tr class={value !== undefined && value.trim() !== p.default_value ? "changed" : ""}>
      <th><label for={id}>{p.name}</label></th>
      <td>
        {kind === "bool"
          ? <select id={id} data-param={p.name} value={shown.toLowerCase()}
                    onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
              <option value="true">true</option><option value="false">false</option>
            </select>
          : <input id={id} data-param={p.name} value={shown} inputMode={kind === "text" ? "text" : "decimal"}
                   aria-invalid={error ? "true" : undefined}
                   onInput={(e) => onChange((e.target as HTMLInputElement).value)} />}
        {error && <span class="inline-error" role="alert" data-testid={`param-error-${p.name}`}>{error}</span>}
      </td>
      <td class="muted small">{KIND_LABEL[kind]}; default <code>{p.default_value || "(empty)"}</code> (line {p.line})</td>
    </tr>
  );
}

function Problems({ errors, onPick }: { errors: LocatedError[]; onPick: (e: LocatedError) => void }) {
  return (
    <div class="yaml-errors" role="alert" data-testid="submit-errors">
      <p><b>{errors.length === 1 ? "1 problem" : `${errors.length} problems`}</b> in the workflow:</p>
      <ul>
        {errors.map((e, i) => (
          <li key={i} data-line={e.line || undefined}>
            {e.line > 0
              ? <button type="button" class="link" data-testid="error-location" onClick={() => onPick(e)}
                        title="show this place in the YAML">{e.path}:{e.line}:{e.col}</button>
              : null}
            {e.line > 0 ? ": " : ""}{e.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Why the caller may not submit, or "" when it may. */
function refusal(who: WhoAmI): string {
  if (who.can_submit) return "";
  return `Your token "${who.name}" has the ${who.role} role; submitting a run (and planning one) ` +
    "needs the operator role (docs/security.md). Ask an admin for an operator token " +
    "(longhaul token new operator NAME).";
}

function NewRunForm({ who }: { who: WhoAmI }) {
  const [source, setSource] = useState(""); // "" pasted or uploaded, else the run it came from
  const [text, setText] = useState("");
  const [path, setPath] = useState("pasted.yaml");
  const [form, setForm] = useState<Record<string, string>>({});
  const [declared, setDeclared] = useState<DeclaredParam[]>([]);
  const [noCache, setNoCache] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [loadError, setLoadError] = useState<Error | null>(null);
  const editor = useRef<HTMLTextAreaElement>(null);
  const refused = refusal(who);
  const runs = useResource<Run[]>(refused ? null : "newrun-seen",
    async () => (await listRuns({ limit: SEEN_RUNS })).runs);
  const seen = seenWorkflows(runs.data ?? []);
  const bad = formErrors(declared, form);
  const req: SubmitRequest = submitRequest(text, path, overrides(declared, form), noCache);
  // No plan while there is nothing to plan, the caller may not, or a param is not valid.
  const key = refused || !text.trim() || Object.keys(bad).length > 0 ? null : submitKey(req);
  const { planned, error, inflight, current, fail } = usePlan(req, key, async (r) => {
    const resp = await submitRun(r);
    setDeclared(resp.declared_params);
    return resp;
  });
  const problems = error && error.key === key ? locatedErrors(error.error.message) : [];
  const located = problems.some((p) => p.line > 0);

  const choose = async (value: string) => {
    setSource(value);
    setLoadError(null);
    if (!value) return;
    try {
      const w = await getRunWorkflow(Number(value));
      setText(w.text);
      setPath(w.path || `run${value}.yaml`);
      setForm({});
    } catch (e) {
      setLoadError(e as Error);
    }
  };
  const upload = async (file: File | undefined) => {
    if (!file) return;
    setSource("");
    setText(await file.text());
    setPath(file.name);
    setForm({});
  };
  // Puts the caret on the place an error names and scrolls the editor to it.
  const pick = (e: LocatedError) => {
    const ta = editor.current;
    if (!ta) return;
    const at = offsetOf(ta.value, e.line, e.col);
    const eol = ta.value.indexOf("\n", at);
    ta.focus();
    ta.setSelectionRange(at, eol < 0 ? ta.value.length : eol);
    const lh = parseFloat(getComputedStyle(ta).lineHeight) || 18;
    ta.scrollTop = Math.max(0, (e.line - 4) * lh);
  };
  const submit = async () => {
    if (!current || !planned) return;
    setSubmitting(true);
    try {
      // Exactly what the plan shown was made for, once (a retried call makes no second run).
      const r = await submitRun({ ...planned.req, dry_run: false, submission_id: newSubmissionId() });
      if (r.run) navigate(href.run(r.run.id));
    } catch (e) {
      fail(e);
    } finally {
      setSubmitting(false);
    }
  };
  const plan = planned?.resp.plan ?? [];
  return (
    <>
      {refused && <div class="note warn refused" role="alert" data-testid="submit-refused">{refused}</div>}
      <fieldset class="plain" disabled={!!refused} data-testid="new-run-form">
        <Section title="Workflow">
          <div class="form-row">
            <label>Workflow longhauld has seen
              <select value={source} data-testid="workflow-choice"
                      onChange={(e) => void choose((e.target as HTMLSelectElement).value)}>
                <option value="">(paste or upload YAML)</option>
                {seen.map((w) => (
                  <option key={w.run} value={String(w.run)}>
                    {w.name} — as run {w.run} submitted it{w.path ? ` (${w.path})` : ""}
                  </option>))}
              </select>
            </label>
            <label>Upload a file
              <input type="file" accept=".yaml,.yml,text/yaml" data-testid="workflow-file"
                     onChange={(e) => void upload((e.target as HTMLInputElement).files?.[0])} />
            </label>
            <label>File name (for messages)
              <input value={path} size={24} data-testid="workflow-path"
                     onInput={(e) => setPath((e.target as HTMLInputElement).value)} />
            </label>
          </div>
          <ErrorBox error={loadError} />
          <div class={`yaml-pane${located ? " with-errors" : ""}`}>
            <textarea ref={editor} class="yaml-editor" spellcheck={false} rows={22} value={text}
                      aria-label="workflow YAML" data-testid="workflow-yaml"
                      placeholder={"name: my-workflow\nparams:\n  lr: 0.1\nstages:\n  train:\n    run: [python, train.py, --lr, \"${params.lr}\"]"}
                      onInput={(e) => { setText((e.target as HTMLTextAreaElement).value); setSource(""); }} />
            {located && <Problems errors={problems} onPick={pick} />}
          </div>
        </Section>
        <Section title="Params">
          {declared.length === 0
            ? <Empty>{text.trim() ? "This workflow declares no params." : "The params appear once the workflow parses."}</Empty>
            : <table class="grid params-form" data-testid="param-form">
                <tbody>
                  {declared.map((p) => (
                    <ParamField key={p.name} p={p} value={form[p.name]} error={bad[p.name] ?? ""}
                                onChange={(v) => setForm({ ...form, [p.name]: v })} />))}
                </tbody>
              </table>}
          <div class="form-row">
            <label class="check"><input type="checkbox" checked={noCache}
              onChange={(e) => setNoCache((e.target as HTMLInputElement).checked)} /> no cache (run everything)</label>
          </div>
        </Section>
      </fieldset>
      <Section title="Plan" actions={
        <button class="primary" disabled={!!refused || submitting || !current} onClick={submit}
                data-testid="submit-run"
                title={refused || (current ? "start this plan" : "the plan is being made for what the form says")}>
          Submit run
        </button>}>
        {error && error.key === key && !located && <ErrorBox error={error.error} />}
        {located && <p class="note warn" data-testid="plan-blocked">The workflow does not validate: see the problems beside the YAML.</p>}
        {Object.keys(bad).length > 0 && <p class="note warn" data-testid="plan-blocked">Fix the params marked above to see the plan.</p>}
        {!refused && key !== null && !current && (planned || error) && !located && (
          <p class="note" data-testid="plan-stale">Planning for what the form says…</p>)}
        {planned
          ? <div class={current ? "" : "stale"}>
              <p class="muted small" data-testid="plan-workflow">Workflow <b>{planned.resp.workflow_name}</b>{inflight ? " (planning…)" : ""}</p>
              <Plan plan={plan} />
            </div>
          : !error && <Empty>{refused ? "Planning needs the operator role." : text.trim() ? "Planning…" : "Choose, paste or upload a workflow."}</Empty>}
      </Section>
    </>
  );
}

export function NewRunView() {
  const me = useResource<WhoAmI>("whoami", whoAmI);
  return (
    <div>
      <div class="page-head">
        <div>
          <div class="crumbs"><a href="#/runs">Runs</a> / new run</div>
          <h1>New run</h1>
          <p class="desc">Choose a workflow, set its params, check the plan (what is reused from
            earlier runs and why), then submit — as <code>longhaul submit FILE --set NAME=VALUE</code> does.</p>
        </div>
      </div>
      {me.data ? <NewRunForm who={me.data} />
        : me.error ? <ErrorBox error={me.error} /> : <Empty>Loading…</Empty>}
    </div>
  );
}
