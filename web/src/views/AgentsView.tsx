// Agents: each node with its GPUs (index, name, service state and why, last reading, the
// attempt that holds it, Drain/Undrain), CPUs and memory in use, its state (and a full state
// dir) and when it was last seen, and its maintenance window with Drain at a time / Undrain
// (admins). Polled every 5 s.
import { useState } from "preact/hooks";
import { drainAgent, drainGpu, listAgents, undrainAgent } from "../api/client";
import type { AgentInfo, GpuInfo } from "../api/types";
import { formatBytes, formatClock, formatNumber } from "../lib/format";
import { timeZone } from "../lib/settings";
import { formatPercent } from "../lib/gpu";
import { datetimeInputToMs, drainMeaning } from "../lib/ops";
import { href } from "../lib/router";
import { useResource } from "../store/resource";
import { useInlineAction } from "./Actions";
import { Ago, Badge, Empty, ErrorBox } from "./common";
import { allowed, useWhoAmI } from "./RunControls";

function Usage({ used, total, fmt }: { used: number; total: number; fmt: (v: number) => string }) {
  const f = total > 0 ? Math.min(1, Math.max(0, used / total)) : 0;
  return (
    <div class="usage">
      <span class="bar"><span class="fill tone-run" style={{ width: `${(f * 100).toFixed(1)}%` }} /></span>
      <span class="small">{fmt(used)} / {fmt(total)}</span>
    </div>
  );
}

/**
 * Drain (with a reason, asked inline) or Undrain one GPU. The buttons are shown to every role;
 * a refusal (403 for a non-admin) is shown as is.
 */
function DrainButton({ agent, g, onDone }: { agent: string; g: GpuInfo; onDone: () => void }) {
  const act = useInlineAction();
  const [reason, setReason] = useState("");
  const undrain = g.health !== "ok";
  const go = () => act.run(() => drainGpu(agent, g.index, undrain, reason), () => {
    setReason("");
    onDone();
  });
  const err = act.error && <span class="inline-error" role="alert" data-testid="gpu-error">{act.error}</span>;
  if (undrain) {
    return <span class="confirm"><button data-testid="gpu-undrain" disabled={act.busy} onClick={go}>Undrain</button>{err}</span>;
  }
  if (!act.open) {
    return <span class="confirm"><button data-testid="gpu-drain" onClick={() => act.setOpen(true)}>Drain</button>{err}</span>;
  }
  return (
    <span class="confirm asking">
      <input type="text" placeholder="reason" value={reason} data-testid="gpu-drain-reason"
             onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      <button class="primary" disabled={act.busy} data-testid="gpu-drain-confirm" onClick={go}>Drain</button>
      <button disabled={act.busy} onClick={() => act.setOpen(false)}>Cancel</button>
      {err}
    </span>
  );
}

/**
 * Drain the whole agent at a time (empty: now) with a reason, or Undrain it: admins only (the
 * caller's role from GET /whoami; while unknown, offered). What the time means is said before
 * it is confirmed; a refusal (a 400 for a bad time, a 409) is shown as longhauld words it.
 */
function AgentDrainControl({ a, onDone }: { a: AgentInfo; onDone: () => void }) {
  const who = useWhoAmI();
  const act = useInlineAction();
  const [at, setAt] = useState("");
  const [reason, setReason] = useState("");
  if (!allowed(who, "can_admin")) return null;
  const zone = timeZone();
  const atMs = at ? datetimeInputToMs(at, zone) : 0;
  const go = (f: () => Promise<unknown>) => act.run(f, () => {
    setAt("");
    setReason("");
    onDone();
  });
  const err = act.error && <span class="inline-error" role="alert" data-testid="agent-drain-error">{act.error}</span>;
  if (a.drain) {
    return <span class="confirm"><button data-testid="agent-undrain" disabled={act.busy}
      title="ends the window: the agent is offered every stage again"
      onClick={() => go(() => undrainAgent(a.id))}>Undrain</button>{err}</span>;
  }
  if (!act.open) {
    return <span class="confirm"><button data-testid="agent-drain-open" onClick={() => act.setOpen(true)}>
      Drain…</button>{err}</span>;
  }
  return (
    <div class="confirm asking agent-drain-form" data-testid="agent-drain-form">
      <label class="small">at ({zone === "utc" ? "UTC" : "local time"}; empty: now)
        <input type="datetime-local" value={at} data-testid="agent-drain-at"
               onInput={(e) => setAt((e.target as HTMLInputElement).value)} /></label>
      <button class="link small" disabled={!at} onClick={() => setAt("")}>now</button>
      <input type="text" placeholder="reason" value={reason} data-testid="agent-drain-reason"
             onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
      <button class="primary" disabled={act.busy || atMs === null} data-testid="agent-drain-confirm"
              onClick={() => go(() => drainAgent(a.id, atMs ?? 0, reason))}>Drain</button>
      <button disabled={act.busy} onClick={() => act.setOpen(false)}>Cancel</button>
      <div class="small muted" data-testid="agent-drain-preview">
        {atMs === null ? "not a time" : atMs === 0
          ? "now: no new attempts start here; what runs here is stopped and goes back to the queue"
          : drainMeaning(atMs, Date.now(), zone)}</div>
      {err}
    </div>
  );
}

function GpuTable({ a, onChange }: { a: AgentInfo; onChange: () => void }) {
  return (
    <div class="scroll-x"><table class="grid gpus">
      <thead><tr><th class="num">GPU</th><th>Name</th><th>Health</th><th class="num">Util</th>
        <th class="num">Memory</th><th class="num">Power</th><th class="num">Temp</th>
        <th>Held by</th><th /></tr></thead>
      <tbody>{a.gpus.map((g) => {
        const r = g.reading;
        const total = r?.mem_total_bytes ?? g.memory_bytes;
        return (
          <tr key={g.index} data-gpu={g.index} data-health={g.health}>
            <td class="num">{g.index}</td>
            <td class="nowrap">{g.name}<div class="small muted mono">{g.uuid}</div></td>
            <td data-testid="gpu-health"><Badge state={g.health} />
              {g.health !== "ok" && <div class="small gpu-reason">{g.health_reason}
                {g.health_since_ms > 0 && <> · since <Ago ms={g.health_since_ms} /></>}</div>}
              {r && r.lost && <div class="small level-error">lost: off the bus</div>}</td>
            <td class="num">{formatPercent(r?.sm_util_pct ?? null)}</td>
            <td class="num">{r?.mem_used_bytes != null ? formatBytes(r.mem_used_bytes) : "–"} / {formatBytes(total)}</td>
            <td class="num">{r?.power_watts != null ? `${r.power_watts.toFixed(0)} W` : "–"}</td>
            <td class="num">{r?.temperature_c != null ? `${r.temperature_c.toFixed(0)} °C` : "–"}</td>
            <td>{g.attempt_id
              ? <a href={href.stage(g.run_id, g.stage)}>run {g.run_id} · {g.stage}</a>
              : <span class="muted">free</span>}</td>
            <td><DrainButton agent={a.id} g={g} onDone={onChange} /></td>
          </tr>
        );
      })}
      </tbody>
    </table></div>
  );
}

function AgentCard({ a, onChange }: { a: AgentInfo; onChange: () => void }) {
  const total = a.total ?? { cpus: 0, memory_bytes: 0, gpus: 0 };
  const free = a.free ?? total;
  const labels = Object.entries(a.labels);
  return (
    <section class={a.gpus.length ? "card agent with-gpus" : "card agent"} data-agent={a.id}>
      <header class="card-head">
        <h2>{a.id} <span class="sub">{a.hostname}</span></h2>
        <div class="actions">
          {a.disk_full && <Badge state="failed" label="disk full" />}
          {a.drain && <Badge state="drained" label={a.drain.at_ms > Date.now() ? "drains" : "drained"} />}
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
        {a.drain && <div data-testid="agent-drain"><span class="k">maintenance</span>
          {a.drain.at_ms > Date.now() ? "drains at " : "drained since "}
          {formatClock(a.drain.at_ms, Date.now(), timeZone())}
          {a.drain.reason ? ` (${a.drain.reason})` : ""}{a.drain.by ? ` · by ${a.drain.by}` : ""}
          <div class="small muted" data-testid="agent-drain-meaning">
            {drainMeaning(a.drain.at_ms, Date.now(), timeZone())}</div></div>}
        {a.disk_full && <div><span class="k">state dir</span>full: {formatBytes(a.state_free_bytes)} free</div>}
        <div><span class="k">executor</span>{a.executor || "local"}{a.version ? ` · ${a.version}` : ""}</div>
        {labels.length > 0 && <div><span class="k">labels</span>{labels.map(([k, v]) => `${k}=${v}`).join(" ")}</div>}
        {a.shared_paths.length > 0 && <div><span class="k">shared paths</span>{a.shared_paths.join(" ")}</div>}
      </div>
      <div class="pad agent-maintenance"><AgentDrainControl a={a} onDone={onChange} /></div>
      {a.gpus.length > 0 ? <GpuTable a={a} onChange={onChange} /> : <p class="muted small pad">No GPUs.</p>}
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
      <div class="agents">{agents.map((a) => <AgentCard key={a.id} a={a} onChange={() => void res.reload()} />)}</div>
    </div>
  );
}
