// The run page's shared-cluster controls: its priority class with a control to change it
// (operators, within longhauld's --priority-allow rule) and its GPU-hour budget with "raise"
// (admins). The page asks GET /whoami once: a control the caller's role cannot use is not
// shown; one it may try and longhauld refuses (a class the rule keeps from an operator) shows
// longhauld's message beside it, never a silent failure.
import { useState } from "preact/hooks";
import { setRunBudget, setRunPriority, whoAmI } from "../api/client";
import type { Run, WhoAmI } from "../api/types";
import { restartWatch } from "../api/watch";
import { formatGpuHours } from "../lib/format";
import { PRIORITY_CLASSES, parseGpuHours } from "../lib/ops";
import { isTerminalRun } from "../lib/status";
import { useResource } from "../store/resource";
import { useInlineAction } from "./Actions";

/**
 * Who the caller is: undefined until GET /whoami answers (no control is shown yet), null when
 * it failed (controls are offered, and longhauld's refusal says the rest).
 */
export function useWhoAmI(): WhoAmI | null | undefined {
  const res = useResource<WhoAmI>("whoami", whoAmI);
  return res.data ?? (res.error ? null : undefined);
}

/** Whether `who` may use a control that needs `can` (see useWhoAmI). */
export function allowed(who: WhoAmI | null | undefined, can: "can_submit" | "can_admin"): boolean {
  return who === null || (who !== undefined && who[can]);
}

/** The run's class, and (while it goes on, for operators) a select to change it, confirmed. */
export function ClassControl({ run }: { run: Run }) {
  const who = useWhoAmI();
  const a = useInlineAction();
  const [choice, setChoice] = useState(run.priority);
  const may = !isTerminalRun(run.status) && allowed(who, "can_submit");
  const err = a.error &&
    <span class="inline-error" role="alert" data-testid="run-class-error">{a.error}</span>;
  return (
    <div data-testid="run-class" data-role={who?.role ?? ""}><span class="k">class</span>
      <span class="run-class-line"><span class={`tag prio-${run.priority}`} data-testid="run-class-value"
            title="its priority class: the queue orders by class first (docs/scheduling.md)">{run.priority}</span>
      {may && !a.open && <span class="confirm">
        <button class="link" data-testid="run-class-change"
                onClick={() => { setChoice(run.priority); a.setError(""); a.setOpen(true); }}>change</button>{err}</span>}
      {may && a.open && <span class="confirm asking">
        <select value={choice} data-testid="run-class-select" aria-label="new class"
                onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
          {PRIORITY_CLASSES.map((c) => <option key={c} value={c}>{c}</option>)}
        </select>
        <button class="primary" data-testid="run-class-confirm" disabled={a.busy || choice === run.priority}
                title="its waiting stages take their place in the queue; running attempts go on"
                onClick={() => a.run(() => setRunPriority(run.id, choice), () => restartWatch(run.id))}>
          Set class</button>
        <button disabled={a.busy} onClick={() => a.setOpen(false)}>Cancel</button>
        {err}
      </span>}</span>
    </div>
  );
}

/** "raise" (or "set budget" without one) beside the run's GPU-hours, for admins. */
export function BudgetRaise({ run }: { run: Run }) {
  const who = useWhoAmI();
  const a = useInlineAction();
  const [text, setText] = useState("");
  if (isTerminalRun(run.status) || !allowed(who, "can_admin")) return null;
  const hours = parseGpuHours(text);
  const err = a.error &&
    <span class="inline-error" role="alert" data-testid="run-budget-error">{a.error}</span>;
  if (!a.open) {
    // The space before it only when it is shown: the cost line's text ends with its figures.
    return <>{" "}<span class="confirm">
      <button class="link" data-testid="run-budget-raise"
              onClick={() => {
                setText(run.budget ? formatGpuHours(run.budget.gpu_hours * 2).replace(/,/g, "") : "");
                a.setError("");
                a.setOpen(true);
              }}>{run.budget ? "raise" : "set budget"}</button>{err}</span></>;
  }
  return (<>{" "}
    <span class="confirm asking">
      <input type="text" inputMode="decimal" size={6} value={text} data-testid="run-budget-input"
             aria-label="GPU-hours" placeholder="GPU-h"
             onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      <span class="small">GPU-h</span>
      <button class="primary" data-testid="run-budget-confirm" disabled={a.busy || hours === null}
              title="sets the run's budget; a run its budget paused continues"
              onClick={() => a.run(() => setRunBudget(run.id, hours!), () => restartWatch(run.id))}>Set</button>
      <button disabled={a.busy} onClick={() => a.setOpen(false)}>Cancel</button>
      {text.trim() !== "" && hours === null &&
        <span class="inline-error">not a positive number of GPU-hours</span>}
      {err}
    </span>
  </>);
}
