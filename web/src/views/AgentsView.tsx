// Agents: each node with its GPUs (index, name, memory, the attempt that holds it), CPUs and
// memory in use, its state (and a full state dir) and when it was last seen. Polled every 5 s.
import { listAgents } from "../api/client";
import type { AgentInfo } from "../api/types";
import { formatBytes, formatNumber } from "../lib/format";
import { href } from "../lib/router";
import { useResource } from "../store/resource";
import { Ago, Badge, Empty, ErrorBox } from "./common";

function Usage({ used, total, fmt }: { used: number; total: number; fmt: (v: number) => string }) {
  const f = total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
  return (
    <div class="usage">
      <span class="bar"><span class="fill tone-run" style={{ width: `${(f * 100).toFixed(1)}%` }} /></span>
      <span class="small">{fmt(used)} / {fmt(total)}</span>
    </div>
  );
}

function AgentCard({ a }: { a: AgentInfo }) {
  const total = a.total ?? { cpus: 0, memory_bytes: 0, gpus: 0 };
  const free = a.free ?? total;
  const labels = Object.entries(a.labels);
  return (
    <section class="card agent" data-agent={a.id}>
      <header class="card-head">
        <h2>{a.id} <span class="sub">{a.hostname}</span></h2>
        <div class="actions">
          {a.disk_full && <Badge state="failed" label="disk full" />}
          <Badge state={a.state} />
        </div>
      </header>
      <div class="agent-grid">
        <div><span class="k">CPUs in use</span>
          <Usage used={total.cpus - free.cpus} total={total.cpus} fmt={(v) => formatNumber(v, 1)} /></div>
        <div><span class="k">memory in use</span>
          <Usage used={total.memory_bytes - free.memory_bytes} total={total.memory_bytes} fmt={formatBytes} /></div>
        <div><span class="k">attempts running</span>{a.running_attempts}</div>
        <div><span class="k">last seen</span><Ago ms={a.last_seen_ms} /></div>
        {a.disk_full && <div><span class="k">state dir</span>full: {formatBytes(a.state_free_bytes)} free</div>}
        <div><span class="k">executor</span>{a.executor || "local"}{a.version ? ` · ${a.version}` : ""}</div>
        {labels.length > 0 && <div><span class="k">labels</span>{labels.map(([k, v]) => `${k}=${v}`).join(" ")}</div>}
        {a.shared_paths.length > 0 && <div><span class="k">shared paths</span>{a.shared_paths.join(" ")}</div>}
      </div>
      {a.gpus.length > 0 ? (
        <table class="grid gpus">
          <thead><tr><th class="num">GPU</th><th>Name</th><th class="num">Memory</th><th>Held by</th></tr></thead>
          <tbody>{a.gpus.map((g) => (
            <tr key={g.index}><td class="num">{g.index}</td><td>{g.name}</td>
              <td class="num">{formatBytes(g.memory_bytes)}</td>
              <td>{g.attempt_id
                ? <a href={href.stage(g.run_id, g.stage)}>run {g.run_id} · {g.stage} (attempt id {g.attempt_id})</a>
                : <span class="muted">free</span>}</td></tr>))}
          </tbody>
        </table>
      ) : <p class="muted small pad">No GPUs.</p>}
    </section>
  );
}

export function AgentsView() {
  const res = useResource<AgentInfo[]>("agents", listAgents, 5000);
  const agents = res.data ?? [];
  return (
    <div>
      <div class="page-head"><h1>Agents</h1></div>
      <ErrorBox error={res.error} />
      {res.loading && <Empty>Loading…</Empty>}
      {!res.loading && agents.length === 0 && <Empty>No agent has connected.</Empty>}
      <div class="agents">{agents.map((a) => <AgentCard key={a.id} a={a} />)}</div>
    </div>
  );
}
