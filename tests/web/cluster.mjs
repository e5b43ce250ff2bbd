// A real longhauld and one agent for the browser test: temp state dir, ports 0 on loopback,
// the daemon killable and restartable on the same ports. Waits poll with deadlines.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";

/** Polls pred (sync or async) until it is true; throws `what` after timeout ms. */
export async function waitFor(pred, timeout, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Sends sig to a child process and waits for its exit (SIGKILL after timeout ms). */
async function stopChild(p, sig, timeout) {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const gone = new Promise((r) => p.once("exit", r));
  p.kill(sig);
  const timer = setTimeout(() => p.kill("SIGKILL"), timeout);
  await gone;
  clearTimeout(timer);
}

export class Cluster {
  /**
   * agentId: the agent's --id; agentArgs: more flags for it (e.g. the fake NVML's);
   * agentEnv: more environment for it; daemonArgs: more flags for longhauld (e.g. --tokens);
   * token: the bearer token api() and cli() send (with --tokens).
   */
  constructor({
    bin, state, uiDir, agent = true, agentId = "local", agentArgs = [], agentEnv = {},
    daemonArgs = [], token = "",
  }) {
    this.withAgent = agent;
    this.daemonArgs = daemonArgs;
    this.token = token;
    this.agentId = agentId;
    this.agentArgs = agentArgs;
    this.agentEnv = agentEnv;
    this.bin = bin;
    this.state = state;
    this.uiDir = uiDir;
    this.grpcAddr = "127.0.0.1:0";
    this.httpAddr = "127.0.0.1:0";
    this.daemon = null;
    this.agent = null;
  }

  get httpUrl() {
    return `http://${this.httpAddr}`;
  }

  async start() {
    mkdirSync(path.join(this.state, "logs"), { recursive: true });
    await this.startDaemon();
    if (!this.withAgent) return;
    this.agent = spawn(path.join(this.bin, "longhaul-agent"), [
      "--coordinator", this.grpcAddr, "--state-dir", path.join(this.state, "agent"), "--id", this.agentId,
      "--log-file", path.join(this.state, "logs/agent.log"), ...this.agentArgs,
    ], { stdio: "ignore", env: { ...process.env, ...this.agentEnv } });
    await waitFor(async () => {
      const a = await this.api("/agents").catch(() => null);
      return a && (a.agents ?? []).some((x) => x.id === this.agentId && x.state === "AGENT_CONNECTED");
    }, 30_000, "the agent did not connect");
  }

  /** Starts longhauld; after the first start, on the same gRPC and HTTP ports. */
  async startDaemon() {
    const grpcFile = path.join(this.state, "coordinator.addr");
    const httpFile = path.join(this.state, "http.addr");
    rmSync(grpcFile, { force: true });
    rmSync(httpFile, { force: true });
    const args = ["--state-dir", this.state, "--listen", this.grpcAddr, "--http", this.httpAddr,
      "--log-file", path.join(this.state, "logs/longhauld.log")];
    if (this.uiDir) args.push("--ui-dir", this.uiDir);
    args.push(...this.daemonArgs);
    this.daemon = spawn(path.join(this.bin, "longhauld"), args, { stdio: "ignore" });
    let exited = null;
    this.daemon.on("exit", (c, s) => { exited = `exit ${c} signal ${s}`; });
    await waitFor(() => {
      if (exited) throw new Error(`longhauld ended at start: ${exited}\n${this.log("longhauld.log")}`);
      return existsSync(grpcFile) && existsSync(httpFile) &&
        readFileSync(grpcFile, "utf8").trim() && readFileSync(httpFile, "utf8").trim();
    }, 30_000, "longhauld did not write its addresses");
    this.grpcAddr = readFileSync(grpcFile, "utf8").trim();
    this.httpAddr = readFileSync(httpFile, "utf8").trim().replace(/^http:\/\//, "");
    await waitFor(async () => (await fetch(`${this.httpUrl}/healthz`).catch(() => null))?.ok,
      30_000, "longhauld's /healthz did not answer");
  }

  /** SIGKILL to longhauld, as a crash; waits until it is gone. */
  async killDaemon() {
    const d = this.daemon;
    this.daemon = null;
    await stopChild(d, "SIGKILL", 10_000);
  }

  async api(p, body) {
    const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    const init = body === undefined ? { headers } : {
      method: "POST", headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    };
    const res = await fetch(`${this.httpUrl}/api/v1${p}`, init);
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  cli(args) {
    const env = this.token ? { ...process.env, LONGHAUL_TOKEN: this.token } : process.env;
    return execFileSync(path.join(this.bin, "longhaul"), ["--coordinator", this.grpcAddr, ...args],
      { encoding: "utf8", timeout: 30_000, env }).trim();
  }

  /** Submits a workflow file with the CLI; returns the run id. */
  submit(file, args = []) {
    const out = this.cli(["submit", file, ...args]);
    const id = Number(out.split(/\s+/).pop());
    if (!id) throw new Error(`submit ${file}: ${out}`);
    return id;
  }

  async waitRun(id, statusRe, timeout = 120_000) {
    let last = "";
    await waitFor(async () => {
      last = (await this.api(`/runs/${id}`)).status;
      return statusRe.test(last);
    }, timeout, `run ${id} did not reach ${statusRe} (last ${last})`);
  }

  /** The pid of the stage's running attempt, once it has one. */
  async waitPid(id, stage) {
    let pid = 0;
    await waitFor(async () => {
      const { attempts } = await this.api(`/runs/${id}/stages/${stage}/attempts`);
      const a = (attempts ?? []).find((x) => x.state === "ATTEMPT_RUNNING" && Number(x.pid) > 0);
      pid = a ? Number(a.pid) : 0;
      return pid > 0;
    }, 60_000, `no running attempt of ${id}/${stage}`);
    return pid;
  }

  alive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (e) {
      return e.code !== "ESRCH";
    }
  }

  async metric(run, stage, name) {
    const r = await this.api(`/runs/${run}`);
    const s = r.stages.find((x) => x.name === stage);
    return (s?.metrics ?? []).find((m) => m.name === name)?.value;
  }

  async cancel(id) {
    await this.api(`/runs/${id}/cancel`, {});
  }

  log(name) {
    try {
      return readFileSync(path.join(this.state, "logs", name), "utf8").split("\n").slice(-30).join("\n");
    } catch {
      return "";
    }
  }

  dumpLogs() {
    console.log(`--- longhauld.log\n${this.log("longhauld.log")}\n--- agent.log\n${this.log("agent.log")}`);
  }

  /** Cancels what still runs (stages outlive the daemons), then stops agent and daemon. */
  async stop() {
    if (this.daemon) {
      const runs = await this.api("/runs?status=running&limit=500").catch(() => ({ runs: [] }));
      for (const r of runs.runs ?? []) await this.cancel(r.id).catch(() => {});
      for (const r of runs.runs ?? []) await this.waitRun(r.id, /SUCCEEDED|FAILED|CANCELLED/, 30_000).catch(() => {});
    }
    for (const p of [this.agent, this.daemon]) {
      if (p) await stopChild(p, "SIGTERM", 10_000);
    }
  }
}
