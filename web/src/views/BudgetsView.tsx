// Budgets: the GPU-hour budgets of teams and workflow names (GET /budgets), each with its use
// in the current period as a bar, its period, whether it is reached and the runs it pauses;
// admins set or raise one with the form below the table (POST /budgets), whose refusals (a
// bad name, 0 GPU-hours, a period under an hour) are shown as longhauld words them.
import { useState } from "preact/hooks";
import { listBudgets, setBudget } from "../api/client";
import type { ScopeBudget } from "../api/types";
import { formatClock } from "../lib/format";
import { budgetFraction, budgetUseText, formatPeriod, parseGpuHours, parsePeriod } from "../lib/ops";
import { href } from "../lib/router";
import { timeZone } from "../lib/settings";
import { useResource } from "../store/resource";
import { useInlineAction } from "./Actions";
import { Badge, Empty, ErrorBox, Section } from "./common";
import { allowed, useWhoAmI } from "./RunControls";

interface FormState { scope: string; name: string; hours: string; period: string; hard: boolean }
const EMPTY_FORM: FormState = { scope: "team", name: "", hours: "", period: "", hard: false };

function BudgetRow({ b, onRaise }: { b: ScopeBudget; onRaise?: (b: ScopeBudget) => void }) {
  const f = budgetFraction(b.used_gpu_hours, b.gpu_hours);
  const tone = b.reached ? "tone-bad" : f >= 0.8 ? "tone-warn" : "tone-run";
  return (
    <tr data-budget={`${b.scope}/${b.name}`}>
      <td>{b.scope}</td>
      <td class="mono">{b.name}</td>
      <td data-col="use"><div class="usage">
        <span class="bar"><span class={`fill ${tone}`} style={{ width: `${(f * 100).toFixed(1)}%` }} /></span>
        <span class="small">{budgetUseText(b.used_gpu_hours, b.gpu_hours)}</span></div></td>
      <td data-col="period" title="periods follow each other from when the budget was first set">
        {formatPeriod(b.period_ms)}
        <span class="muted small"> since {formatClock(b.period_start_ms, Date.now(), timeZone())}</span></td>
      <td data-col="state">
        {b.reached ? <Badge state="failed" label="reached" /> : <span class="muted">under</span>}
        {b.hard && <span class="tag" title="at 100 %, running attempts are stopped too">hard</span>}</td>
      <td data-col="paused">{b.paused_runs.length
        ? <span class="chips">{b.paused_runs.map((id) => (
            <a key={id} class="chip" href={href.run(id)}>run {id}</a>))}</span>
        : <span class="muted">none</span>}</td>
      <td class="small">{b.set_by}</td>
      <td>{onRaise && <button class="link" data-testid="budget-raise" onClick={() => onRaise(b)}>raise</button>}</td>
    </tr>
  );
}

function BudgetForm({ form, setForm, onDone }: {
  form: FormState; setForm: (f: FormState) => void; onDone: () => void;
}) {
  const act = useInlineAction();
  const [done, setDone] = useState("");
  const hours = parseGpuHours(form.hours);
  const period = parsePeriod(form.period);
  const local = form.hours.trim() !== "" && hours === null ? "GPU-hours: not a positive number"
    : period === null ? `period: '${form.period}' is not a length such as 30d, 7d or 12h` : "";
  const submit = (e: Event) => {
    e.preventDefault();
    setDone("");
    void act.run(async () => {
      const b = await setBudget({ scope: form.scope, name: form.name.trim(), gpu_hours: hours!,
                                  period_ms: period ?? 0, hard: form.hard });
      setDone(`${b.scope} ${b.name}: ${budgetUseText(b.used_gpu_hours, b.gpu_hours)} for ${formatPeriod(b.period_ms)}`);
      setForm(EMPTY_FORM);
      onDone();
    });
  };
  const set = (k: keyof FormState) => (e: Event) => {
    const t = e.target as HTMLInputElement;
    setForm({ ...form, [k]: t.type === "checkbox" ? t.checked : t.value });
  };
  return (
    <form class="budget-form" data-testid="budget-form" onSubmit={submit}>
      <div class="form-row">
        <label>scope<select value={form.scope} data-testid="budget-scope" onChange={set("scope")}>
          <option value="team">team</option><option value="workflow">workflow</option></select></label>
        <label>name<input type="text" value={form.name} data-testid="budget-name" onInput={set("name")}
          placeholder={form.scope === "team" ? "vision" : "eagle3"} /></label>
        <label>GPU-hours<input type="text" inputMode="decimal" size={8} value={form.hours}
          data-testid="budget-hours" onInput={set("hours")} placeholder="500" /></label>
        <label>period<input type="text" size={6} value={form.period} data-testid="budget-period"
          onInput={set("period")} placeholder="keep (30d new)" /></label>
        <label class="check"><span><input type="checkbox" checked={form.hard} data-testid="budget-hard"
          onChange={set("hard")} /> hard</span></label>
        <button class="primary" type="submit" data-testid="budget-set" disabled={act.busy || local !== "" || hours === null}>Set budget</button>
      </div>
      <p class="small muted">Each set is the whole budget: the limit, hard (stop running attempts at
        100 %) and, when given, the period's length; the period's start stays. The runs it paused
        continue once it is above their use.</p>
      {local && <div class="inline-error" data-testid="budget-local-error">{local}</div>}
      {act.error && <div class="error" role="alert" data-testid="budget-error">{act.error}</div>}
      {done && <div class="small ok-text" data-testid="budget-done">set: {done}</div>}
    </form>
  );
}

export function BudgetsView() {
  const res = useResource<ScopeBudget[]>("budgets", listBudgets, 10000);
  const who = useWhoAmI();
  const [form, setForm] = useState<FormState>(EMPTY_FORM);
  const admin = allowed(who, "can_admin");
  const budgets = res.data ?? [];
  const raise = (b: ScopeBudget) => setForm({
    scope: b.scope, name: b.name, hours: String(b.gpu_hours), period: "", hard: b.hard,
  });
  return (
    <div>
      <div class="page-head"><h1>Budgets</h1></div>
      <ErrorBox error={res.error} />
      <Section title="Teams and workflows">
        {res.loading && <Empty>Loading…</Empty>}
        {!res.loading && budgets.length === 0 && <Empty>No team or workflow has a budget.</Empty>}
        {budgets.length > 0 && (
          <div class="scroll-x"><table class="grid" data-testid="budgets-table">
            <thead><tr><th>Scope</th><th>Name</th><th>Used this period</th><th>Period</th>
              <th>State</th><th>Paused runs</th><th>Set by</th><th /></tr></thead>
            <tbody>{budgets.map((b) => (
              <BudgetRow key={`${b.scope}/${b.name}`} b={b} onRaise={admin ? raise : undefined} />))}
            </tbody>
          </table></div>
        )}
      </Section>
      {who === undefined ? null : admin
        ? <Section title="Set a budget"><BudgetForm form={form} setForm={setForm} onDone={() => void res.reload()} /></Section>
        : <p class="muted small" data-testid="budget-read-only">Setting a budget needs the admin role
            {who ? ` (your token "${who.name}" has the ${who.role} role)` : ""}.</p>}
    </div>
  );
}
