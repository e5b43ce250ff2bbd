// Audit: every mutation (submit, pivot, cancel, retry, over gRPC or HTTP), newest first: when,
// who and with which role, what and on which run, from where, and how it ended. Paged by entry
// id (a stack of "before" ids for "newer"), polled every 5 s. Admin only: anyone else sees
// the server's refusal.
import { useState } from "preact/hooks";
import { listAudit } from "../api/client";
import type { AuditEntry } from "../api/types";
import { auditOutcome, parseAuditTarget } from "../lib/audit";
import { href } from "../lib/router";
import { useResource } from "../store/resource";
import { Badge, Clock, Empty, ErrorBox, Pager } from "./common";

const PAGE = 50;

function Subject({ e }: { e: AuditEntry }) {
  const t = parseAuditTarget(e.target);
  const link = t && (t.stage
    ? <a href={href.stage(t.run, t.stage)}>{e.target}</a>
    : <a href={href.run(t.run)}>{e.target}</a>);
  return (
    <td data-col="subject">
      {link ?? (e.target || <span class="muted">no run</span>)}
      {e.detail && <div class="small muted">{e.detail}</div>}
    </td>
  );
}

function AuditRow({ e }: { e: AuditEntry }) {
  const out = auditOutcome(e.result);
  return (
    <tr data-audit={e.id} data-action={e.action}>
      <td><Clock ms={e.ts_ms} /></td>
      <td data-col="who">{e.principal}</td>
      <td>{e.role}</td>
      <td data-col="action">{e.action}</td>
      <Subject e={e} />
      <td class="small">{e.peer}</td>
      <td data-col="outcome" title={out.message}>
        <Badge state={out.ok ? "succeeded" : "failed"} label={out.ok ? "ok" : out.code.toLowerCase()} />
        {out.message && <div class="small muted">{out.message}</div>}
      </td>
    </tr>
  );
}

export function AuditView() {
  // The "before" ids of the pages before this one; the last is this page's (0: the newest).
  const [befores, setBefores] = useState<number[]>([0]);
  const before = befores[befores.length - 1];
  const res = useResource<AuditEntry[]>(`audit:${before}`, () => listAudit(PAGE, before), 5000);
  const entries = res.data ?? [];
  const oldest = entries.length === PAGE ? entries[entries.length - 1].id : 0;
  return (
    <div>
      <div class="page-head"><h1>Audit</h1></div>
      <ErrorBox error={res.error} />
      <div class="card flush">
        <table class="grid audit" data-testid="audit-table">
          <thead>
            <tr><th>Time</th><th>Who</th><th>Role</th><th>Action</th><th>Subject</th>
              <th>From</th><th>Outcome</th></tr>
          </thead>
          <tbody>{entries.map((e) => <AuditRow key={e.id} e={e} />)}</tbody>
        </table>
        {!res.loading && !res.error && entries.length === 0 && <Empty>Nothing changed yet.</Empty>}
        {res.loading && <Empty>Loading…</Empty>}
      </div>
      <Pager page={befores.length} prefix="audit-"
             newer={befores.length > 1 ? () => setBefores(befores.slice(0, -1)) : null}
             older={oldest ? () => setBefores([...befores, oldest]) : null} />
    </div>
  );
}
