// The UI in a real browser: Debian's chromium driven by playwright-core, against a real
// longhauld and agent (temp state dir, ports 0) running real runs of small /bin/sh workflows
// and the local EAGLE-3 campaign. Every wait has a deadline; nothing sleeps a fixed time.
//
//   LONGHAUL_BIN_DIR=build/bin node tests/web/ui_test.mjs
//
// Env: LONGHAUL_BIN_DIR (required), LONGHAUL_SOURCE_DIR (default: two folders up),
// LONGHAUL_UI_DIR (serve this dist with --ui-dir instead of the embedded UI),
// LONGHAUL_UI_SCREENSHOTS (where to save a PNG of each view), CHROMIUM (default
// /usr/bin/chromium), LONGHAUL_UI_ONLY (comma list of case names to run), LONGHAUL_FAKE_NVML
// (the fake NVML library, tests/agent/fake_nvml: the gpu_* cases run a second longhauld whose
// agent samples two fake GPUs through it).
// Exit 77 (ctest: skipped) without chromium.
import { createHash, randomBytes } from "node:crypto";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Cluster, waitFor } from "./cluster.mjs";
import { workflows } from "./workflows.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = process.env.LONGHAUL_SOURCE_DIR || path.resolve(here, "../..");
const BIN = process.env.LONGHAUL_BIN_DIR;
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.LONGHAUL_UI_SCREENSHOTS || "";
const ONLY = (process.env.LONGHAUL_UI_ONLY || "").split(",").filter(Boolean);
const T = 60_000; // the deadline of one wait in the browser
const FAKE_NVML = process.env.LONGHAUL_FAKE_NVML || "";

if (!BIN) {
  console.error("LONGHAUL_BIN_DIR is not set");
  process.exit(2);
}
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: no chromium at ${CHROMIUM} (deploy/install-deps.sh --with-browser)`);
  process.exit(77);
}
const require = createRequire(path.join(SRC, "web/package.json"));
const { chromium } = require("playwright-core");

const tmp = mkdtempSync(path.join(tmpdir(), "longhaul-ui-"));
const wf = workflows(tmp);
const cluster = new Cluster({ bin: BIN, state: path.join(tmp, "state"), uiDir: process.env.LONGHAUL_UI_DIR });
if (SHOTS) mkdirSync(SHOTS, { recursive: true });

let browser;
let page;
const dialogs = [];
const results = [];
const cspViolations = []; // what the page reported breaking the server's Content-Security-Policy

async function shot(name) {
  if (!SHOTS) return;
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
}

async function open(hash) {
  await page.goto(`${cluster.httpUrl}/#${hash}`);
}

/** Waits until the element's text matches re (Playwright re-checks it until the deadline). */
async function textMatches(locator, re, timeout = T) {
  const hit = locator.filter({ hasText: re }).first();
  try {
    await hit.waitFor({ timeout });
  } catch (e) {
    const now = await locator.first().textContent({ timeout: 1000 }).catch(() => "(absent)");
    throw new Error(`"${now}" never matched ${re} within ${timeout} ms`);
  }
  return (await hit.textContent()) ?? "";
}

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Waits until the element's text is no longer exactly `before`; returns the new text. */
async function textChanges(locator, before, timeout = T) {
  const hit = locator.filter({ hasNotText: new RegExp(`^${escapeRe(before)}$`) }).first();
  try {
    await hit.waitFor({ timeout });
  } catch (e) {
    throw new Error(`text stayed "${before}" for ${timeout} ms`);
  }
  return (await hit.textContent()) ?? "";
}

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// The gpu_* cases' cluster: its agent "gpunode" reads two fake GPUs (fake_nvml_state.h's
// format) every 100 ms; a test changes what they report by rewriting the state file. Its
// longhauld has tokens: the page carries admin ada's, or viewer vera's to be refused.
const nvmlState = path.join(tmp, "nvml.json");
const fakeGpus = [0, 1].map((i) => ({
  uuid: `GPU-fake-000${i}`, name: "NVIDIA H200", sm_util: 80, mem_util: 30,
  mem_used: 40 * 2 ** 30, mem_total: 150_754_820_096, power_mw: 300_000, temp_c: 55,
  sm_clock_mhz: 1400, throttle_reasons: 0, ecc_corrected: 0, ecc_uncorrected: 0,
  remapped_correctable: 0, remapped_uncorrectable: 0, remap_pending: false, remap_failed: false,
  pcie_replays: 0, xids: [], lost: false,
}));
function writeNvmlState() {
  writeFileSync(`${nvmlState}.tmp`, JSON.stringify({ init_error: 0, gpus: fakeGpus }));
  renameSync(`${nvmlState}.tmp`, nvmlState); // by rename: the library sees a new file
}
const gpuTokens = { ada: `lh_${randomBytes(32).toString("hex")}`, vera: `lh_${randomBytes(32).toString("hex")}` };
let gpuCluster = null;
/** The page's requests to the GPU cluster carry `who`'s token (the cookie POST /login sets). */
async function signInAs(who) {
  await page.context().clearCookies();
  await page.context().addCookies([{
    name: "longhaul_token", value: gpuTokens[who], url: gpuCluster.httpUrl, httpOnly: true,
    sameSite: "Strict",
  }]);
}
async function gpuNode() {
  if (!gpuCluster) {
    check(FAKE_NVML && existsSync(FAKE_NVML), `no fake NVML library at '${FAKE_NVML}' (LONGHAUL_FAKE_NVML)`);
    writeNvmlState();
    const sha = (t) => createHash("sha256").update(t).digest("hex");
    const tokens = path.join(tmp, "tokens");
    writeFileSync(tokens, `admin ada sha256:${sha(gpuTokens.ada)}\nviewer vera sha256:${sha(gpuTokens.vera)}\n`);
    gpuCluster = new Cluster({
      bin: BIN, state: path.join(tmp, "gpu-state"), uiDir: process.env.LONGHAUL_UI_DIR,
      agentId: "gpunode", agentArgs: ["--nvml-library", FAKE_NVML, "--gpu-sample", "100ms"],
      agentEnv: { LONGHAUL_FAKE_NVML_STATE: nvmlState }, daemonArgs: ["--tokens", tokens],
      token: gpuTokens.ada,
    });
    await gpuCluster.start();
  }
  await signInAs("ada");
  return gpuCluster;
}
async function openOn(c, hash) {
  await page.goto(`${c.httpUrl}/#${hash}`);
}

const cases = {
  // The runs page lists the runs, and paging (3 a page) reaches the oldest.
  async runs_paging() {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(cluster.submit(wf.quick, ["--set", `n=${i}`]));
    await cluster.waitRun(ids[ids.length - 1], /SUCCEEDED/);
    const all = (await cluster.api("/runs?limit=500")).runs.map((r) => Number(r.id));
    const oldest = Math.min(...all);
    await open("/runs?limit=3");
    const table = page.locator('[data-testid="runs-table"]');
    await table.locator(`tr[data-run="${Math.max(...all)}"]`).waitFor({ timeout: T });
    await shot("runs");
    for (let pageNo = 1; ; pageNo++) {
      check(pageNo <= Math.ceil(all.length / 3) + 1, "paging did not end");
      if (await table.locator(`tr[data-run="${oldest}"]`).count()) break;
      const older = page.locator('[data-testid="older"]');
      check(await older.isEnabled(), `no older page before run ${oldest}`);
      const first = await table.locator("tbody tr").first().getAttribute("data-run");
      await older.click();
      // A locator, not waitForFunction: that evaluates a string in the page, which the
      // server's Content-Security-Policy (no 'unsafe-eval') rightly refuses.
      await table.locator(`tbody tr:first-child[data-run]:not([data-run="${first}"])`)
        .waitFor({ timeout: T });
    }
    await page.locator('[data-testid="older"]:disabled').waitFor({ timeout: T });
  },

  // A running stage's progress and ETA advance without a reload; the log viewer follows.
  async live_progress() {
    const id = cluster.submit(wf.slow);
    cases.slowRun = id;
    await open(`/runs/${id}`);
    const row = page.locator('[data-testid="stage-table"] tr[data-stage="count"]');
    const done = row.locator('[data-col="done"]');
    const first = await textMatches(done, /\d+\/200 items/);
    const eta = await textMatches(row.locator('[data-col="eta"]'), /\d+s|\dm/);
    await textChanges(done, first);
    await textChanges(row.locator('[data-col="eta"]'), eta);
    await shot("run");
    await page.locator('svg.dag g[data-stage="count"]').click();
    await page.waitForURL(/stages\/count/, { timeout: T });
    const log = page.locator('[data-testid="log-text"]');
    const text = await textMatches(log, /tick \d+/);
    const lastTick = Number(text.match(/tick (\d+)(?![\s\S]*tick)/)[1]);
    await textMatches(log, new RegExp(`tick ${lastTick + 3}\\b`));
    // \r progress lines show only their last state.
    check(!/spin 1%\r?spin/.test(await log.textContent()), "\\r line not collapsed");
    await page.locator('[data-testid="metric-charts"] figure[data-metric="loss"]').waitFor({ timeout: T });
    await shot("stage");
  },

  // Cancel ends the running run and its stage's process group (the pid is gone on the node).
  async cancel() {
    const id = cases.slowRun ?? cluster.submit(wf.slow);
    await cluster.waitRun(id, /RUNNING/);
    const pid = await cluster.waitPid(id, "count");
    check(cluster.alive(pid), `stage pid ${pid} is not running before the cancel`);
    await open(`/runs/${id}`);
    await page.locator('[data-testid="cancel-run"]').click();
    await page.locator('[data-testid="cancel-run-confirm"]').click();
    await textMatches(page.locator("h1 .badge"), /cancelled/);
    await waitFor(() => !cluster.alive(pid), T, `stage pid ${pid} still alive after cancel`);
  },

  // Retry on a failed stage: attempt 2 runs, then succeeds.
  async retry() {
    const id = cluster.submit(wf.flaky);
    await cluster.waitRun(id, /FAILED/);
    await open(`/runs/${id}/stages/flaky`);
    await textMatches(page.locator('[data-testid="stage-status"]'), /failed/);
    await page.locator('[data-testid="retry-stage"]').click();
    await page.locator('[data-testid="retry-stage-confirm"]').click();
    await textMatches(page.locator('[data-testid="stage-status"]'), /running.*attempt 2|attempt 2[\s\S]*running/);
    await page.locator('[data-testid="attempts"] tr[data-attempt="2"]').waitFor({ timeout: T });
    writeFileSync(wf.flakyRelease, "go\n"); // attempt 2 finishes once this exists
    await textMatches(page.locator('[data-testid="stage-status"]'), /succeeded/);
    await textMatches(page.locator('[data-testid="attempts"] tr[data-attempt="1"]'), /exit 3/);
  },

  // Stage text that looks like markup stays text: no dialog, the literal text is visible.
  async markup_is_text() {
    const id = cluster.submit(wf.markup);
    await cluster.waitRun(id, /SUCCEEDED/);
    const evil = "<img src=x onerror=alert(1)>";
    await open(`/runs/${id}`);
    await page.getByText(evil, { exact: false }).first().waitFor({ timeout: T });
    await open(`/runs/${id}/stages/b_img_onerror_alert`);
    await textMatches(page.locator('[data-testid="log-text"]'), /<img src=x onerror=alert\(1\)>/);
    await page.getByText(`${evil} as output`).first().waitFor({ timeout: T });
    check((await page.locator("img[src=x]").count()) === 0, "an <img> from stage text was created");
    check(dialogs.length === 0, `a dialog fired: ${dialogs.join(", ")}`);
  },

  // The pivot page shows the plan (reuse and why, what it saves); submitting opens the new run.
  async pivot() {
    const first = cluster.submit(wf.pivotable);
    await cluster.waitRun(first, /SUCCEEDED/);
    await open(`/runs/${first}/pivot`);
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="prep"]'), /reuse/);
    await page.locator('input[data-param="greeting"]').fill("bonjour");
    await page.locator('[data-testid="update-plan"]').click();
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="greet"]'), /run.*greeting/);
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="prep"]'), new RegExp(`reuse[\\s\\S]*run ${first}`));
    await textMatches(page.locator('[data-testid="plan-summary"]'), /1 to run, 1 reused/);
    await shot("pivot");
    await page.locator('[data-testid="submit-pivot"]').click();
    await page.waitForURL((u) => /#\/runs\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${first}`), { timeout: T });
    const pivot = Number(new URL(page.url()).hash.split("/").pop());
    check(pivot > first, `landed on run ${pivot}`);
    const prep = page.locator('[data-testid="stage-table"] tr[data-stage="prep"]');
    await textMatches(prep, /cached/);
    await textMatches(prep, new RegExp(`from run ${first}`));
    await cluster.waitRun(pivot, /SUCCEEDED/);
    const run = await cluster.api(`/runs/${pivot}`);
    check(run.params.greeting === "bonjour" && Number(run.parent_run_id) === first, "the pivot's params or parent");
  },

  // Provenance: a run submitted from a git work tree shows its commit and uncommitted diff and
  // each stage's executable; Compare lists the difference first, above the params.
  async provenance() {
    const repo = path.join(tmp, "prov-repo");
    mkdirSync(repo, { recursive: true });
    const git = (...args) => execFileSync("git", ["-C", repo, ...args], {
      encoding: "utf8",
      env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@x", GIT_COMMITTER_NAME: "t",
        GIT_COMMITTER_EMAIL: "t@x", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
    git("init", "-q", "-b", "main");
    writeFileSync(path.join(repo, "wf.yaml"), readFileSync(wf.pivotable, "utf8"));
    writeFileSync(path.join(repo, "notes.txt"), "first\n");
    git("add", "-A");
    git("commit", "-q", "-m", "first");
    const clean = cluster.submit(path.join(repo, "wf.yaml"));
    await cluster.waitRun(clean, /SUCCEEDED/);
    writeFileSync(path.join(repo, "notes.txt"), "changed\n");
    const dirty = cluster.submit(path.join(repo, "wf.yaml"), ["--no-cache"]);
    await cluster.waitRun(dirty, /SUCCEEDED/);
    await open(`/runs/${dirty}`);
    await textMatches(page.locator('[data-testid="run-source"]'), /\(main, dirty: diff [0-9a-f]{12}/);
    await textMatches(page.locator('[data-testid="run-environment"] tr[data-stage="greet"]'), /\/bin\/sh[\s\S]*[0-9a-f]{12}/);
    await open(`/compare?runs=${clean},${dirty}`);
    const row = page.locator('[data-testid="compare-provenance"] tr[data-what="uncommitted changes"]');
    await textMatches(row, /clean[\s\S]*dirty, diff [0-9a-f]{12}/);
    const sections = await page.locator("h2").allTextContents();
    check(sections.indexOf("What differs besides params") >= 0 &&
      sections.indexOf("What differs besides params") < sections.findIndex((t) => /Params/.test(t)),
      `provenance is not listed before the params: ${sections.join(" | ")}`);
    await shot("compare-provenance");
  },

  // Compare shows the acceptance of the local campaign and of its pivot to a correct engine.
  async compare_campaign() {
    const first = cluster.submit(path.join(SRC, "workflows/eagle3-local.yaml"));
    await cluster.waitRun(first, /SUCCEEDED|FAILED|CANCELLED/, 420_000);
    check(/SUCCEEDED/.test((await cluster.api(`/runs/${first}`)).status), `campaign run ${first} did not succeed`);
    const pivot = Number(cluster.cli(["pivot", String(first), "--set", "spec_engine=refengine"]).split(/\s+/).pop());
    await cluster.waitRun(pivot, /SUCCEEDED|FAILED|CANCELLED/, 300_000);
    await open(`/compare?runs=${first},${pivot}`);
    const campaign = page.locator('[data-testid="campaign"]');
    for (const m of ["bench_spec.accept_rate", "bench_spec.accept_length", "bench_spec.output_throughput",
      "bench_baseline.output_throughput", "bench_spec.speedup_output_throughput"]) {
      await textMatches(campaign.locator(`tr[data-metric="${m}"] td.big`).nth(1), /\d/);
    }
    const before = Number(await cluster.metric(first, "bench_spec", "accept_rate"));
    const after = Number(await cluster.metric(pivot, "bench_spec", "accept_rate"));
    check(after > before, `accept rate did not rise: ${before} -> ${after}`);
    await textMatches(page.locator('[data-testid="compare-stages"] tr[data-stage="datagen"]'), new RegExp(`from run ${first}`));
    await shot("compare");
    await open(`/runs/${first}`);
    await page.locator('[data-testid="stage-table"] tr[data-stage="inspect"]').waitFor({ timeout: T });
    await shot("run-campaign");
    await open("/runs?metric=bench_spec.accept_rate,bench_spec.accept_length,bench_spec.speedup_output_throughput");
    await textMatches(page.locator(`tr[data-run="${pivot}"]`), /\d\.\d/);
    await shot("runs");
  },

  // Killing longhauld shows "disconnected"; restarting it (same state, same ports) brings
  // the page back without a reload.
  async reconnect() {
    const id = cluster.submit(wf.slow, ["--set", "total=400"]);
    await open(`/runs/${id}`);
    const conn = page.locator('[data-testid="connection"]');
    await textMatches(conn, /live/);
    const done = page.locator('[data-testid="stage-table"] tr[data-stage="count"] [data-col="done"]');
    await textMatches(done, /\d+\/400/);
    await page.evaluate(() => { window.__noReload = true; });
    await cluster.killDaemon();
    await textMatches(conn, /disconnected/);
    await cluster.startDaemon();
    await textMatches(conn, /live/, 90_000);
    const after = await done.textContent();
    await textChanges(done, after);
    check(await page.evaluate(() => window.__noReload === true), "the page was reloaded");
    await cluster.cancel(id);
  },

  // A submit over HTTP (as the UI's own calls go) is in the audit trail: who, what, from where,
  // how it ended, with a link to the run; a refused cancel shows its error code.
  async audit() {
    const yaml = readFileSync(wf.quick, "utf8");
    const { run } = await cluster.api("/runs", { workflow_text: yaml, workflow_path: "quick.yaml", params: { n: "audit" } });
    const id = Number(run.id);
    await cluster.waitRun(id, /SUCCEEDED/);
    const refused = await fetch(`${cluster.httpUrl}/api/v1/runs/${id}/cancel`, { method: "POST", body: "{}" });
    check(refused.status === 409, `cancel of an ended run answered ${refused.status}`);
    await open("/audit");
    const table = page.locator('[data-testid="audit-table"]');
    const submit = table.locator('tr[data-action="SubmitRun"]').filter({ hasText: `run ${id}` });
    await submit.waitFor({ timeout: T });
    await textMatches(submit.locator('[data-col="who"]'), /^local$/);
    await textMatches(submit.locator('[data-col="subject"]'), /workflow quick\.yaml.*params n=audit/);
    await textMatches(submit.locator('[data-col="outcome"]'), /ok/);
    await textMatches(submit, /127\.0\.0\.1:\d+/);
    const cancel = table.locator('tr[data-action="CancelRun"]').filter({ hasText: `run ${id}` });
    await textMatches(cancel.locator('[data-col="outcome"]'), /failed_precondition/);
    const first = await table.locator("tbody tr").first().getAttribute("data-action");
    check(first === "CancelRun", `newest entry is ${first}, not the cancel`);
    await shot("audit");
    await submit.locator(`a[href="#/runs/${id}"]`).click();
    await page.waitForURL(new RegExp(`#/runs/${id}$`), { timeout: T });
  },

  async agents() {
    await open("/agents");
    await textMatches(page.locator('[data-agent="local"] .badge'), /connected/);
    await shot("agents");
  },

  // A stage that held a GPU for two attempts: the stage page draws a chart per GPU with SM
  // utilisation and memory, the second attempt's start marked, and the stage's summary.
  async gpu_telemetry() {
    const c = await gpuNode();
    const id = c.submit(wf.gpu);
    await c.waitRun(id, /SUCCEEDED|FAILED|CANCELLED/);
    check(/SUCCEEDED/.test((await c.api(`/runs/${id}`)).status), `GPU run ${id} did not succeed`);
    const g = await c.api(`/runs/${id}/stages/train/gpus`);
    check(g.series.length === 2 && g.series.map((x) => x.attempt).join() === "1,2",
      `series of attempts ${g.series.map((x) => x.attempt)}`);
    check(g.series.every((x) => x.points.length >= 3), `points: ${g.series.map((x) => x.points.length)}`);
    await openOn(c, `/runs/${id}/stages/train`);
    const charts = page.locator("figure.gpu-chart");
    await charts.first().waitFor({ timeout: T });
    const lines = charts.locator("polyline.line.sm");
    check(await lines.count() >= 1, "no SM utilisation line");
    const pts = (await lines.first().getAttribute("points")).trim().split(/\s+/).length;
    check(pts >= 3, `the SM line has ${pts} points`);
    check(await charts.locator("polyline.line.mem").count() >= 1, "no memory line");
    await charts.locator('.attempt-start[data-attempt="2"]').first().waitFor({ timeout: T });
    const summary = page.locator('[data-testid="gpu-summary"]');
    await textMatches(summary, /mean SM util\s*80 %/);
    await textMatches(summary, /peak memory\s*40\.0 GiB of 140 GiB/);
    await textMatches(summary, /energy\s*[\d.]+ Wh/);
    await textMatches(page.locator('[data-testid="gpu-series"] tbody tr').first(), /^1\s*\d/);
    await summary.scrollIntoViewIfNeeded();
    await shot("stage-gpus");
  },

  // The most a stage can show: 8 GPUs of 600 points each (a 5-day attempt's bound), stored as
  // longhauld stores them (rows of gpu_series, written here with sqlite3 into its database),
  // drawn as 8 charts of 600-point lines; prints how long the page took.
  async gpu_many_points() {
    const c = await gpuNode();
    const id = c.submit(wf.quick, ["--set", "n=gpus"]);
    await c.waitRun(id, /SUCCEEDED/);
    const { attempts } = await c.api(`/runs/${id}/stages/hello/attempts`);
    const attemptId = Number(attempts[0].id);
    const t0 = Date.now() - 5 * 86_400_000;
    const rows = [];
    for (let g = 0; g < 8; g++) {
      const pts = [];
      for (let i = 0; i < 600; i++) {
        const span = i < 120 ? 5_000 : 900_000;
        const t = i < 120 ? t0 + i * 5_000 : t0 + 600_000 + (i - 120) * 900_000;
        const sm = 50 + 45 * Math.sin((i + g * 10) / 20);
        pts.push([t, span, sm, 30, (20 + g) * 2 ** 30, 150_754_820_096, 400, 60, sm < 5 ? span : 0]);
      }
      const json = JSON.stringify({ v: 1, last: pts[599][0] + 900_000, head: pts.slice(0, 120), tail: pts.slice(120) });
      rows.push(`INSERT INTO gpu_series(attempt_id, gpu_index, uuid, series_json) VALUES (${attemptId}, ${g}, 'GPU-big-${g}', '${json}');`);
    }
    execFileSync("sqlite3", [path.join(c.state, "longhaul.db")], { input: `PRAGMA busy_timeout=10000;\n${rows.join("\n")}\n` });
    const started = Date.now();
    await openOn(c, `/runs/${id}/stages/hello`);
    await page.locator('[data-testid="attempts"]').waitFor({ timeout: T });
    const pageMs = Date.now() - started;
    const charts = page.locator("figure.gpu-chart");
    await charts.nth(7).locator("polyline.line.sm").waitFor({ timeout: T });
    const ms = Date.now() - started;
    check(await charts.count() === 8, `${await charts.count()} charts`);
    for (let g = 0; g < 8; g++) {
      const pts = (await charts.nth(g).locator("polyline.line.sm").first().getAttribute("points")).trim().split(/\s+/).length;
      check(pts === 600, `chart ${g}: ${pts} points`);
    }
    const asked = Date.now();
    const res = await fetch(`${c.httpUrl}/api/v1/runs/${id}/stages/hello/gpus`,
      { headers: { Authorization: `Bearer ${gpuTokens.ada}` } });
    const body = await res.text();
    const apiMs = Date.now() - asked;
    check(res.ok && JSON.parse(body).series.length === 8, `GET .../gpus: ${res.status}`);
    console.log(`       8 GPUs x 600 points: GET .../gpus answered ${(body.length / 1024).toFixed(0)} KiB ` +
      `in ${apiMs} ms; the stage page showed its attempts ${pageMs} ms and drew the charts ${ms} ms after it was opened`);
    await page.locator('[data-testid="gpu-summary"]').scrollIntoViewIfNeeded();
    await shot("stage-gpus-8x600");
  },

  // A hardware XID on GPU 1 quarantines it: the agents page says so, with the XID.
  async gpu_quarantine() {
    const c = await gpuNode();
    fakeGpus[1].xids = [79];
    writeNvmlState();
    await openOn(c, "/agents");
    const row = page.locator('[data-agent="gpunode"] tr[data-gpu="1"]');
    await textMatches(row.locator('[data-testid="gpu-health"]'), /quarantined[\s\S]*XID 79[\s\S]*since/);
    check(await row.getAttribute("data-health") === "quarantined", "GPU 1 is not marked quarantined");
    await textMatches(page.locator('[data-agent="gpunode"] tr[data-gpu="0"] [data-testid="gpu-health"]'), /^ok$/);
    await textMatches(page.locator('[data-agent="gpunode"] tr[data-gpu="0"]'), /80 %[\s\S]*40\.0 GiB \/ 140 GiB[\s\S]*300 W[\s\S]*55 °C/);
    await shot("agents-gpus");
  },

  // Drain on GPU 0 with a reason drains it (shown, and in the audit trail under the caller);
  // Undrain brings it back.
  async gpu_drain() {
    const c = await gpuNode();
    await openOn(c, "/agents");
    const row = page.locator('[data-agent="gpunode"] tr[data-gpu="0"]');
    await row.locator('[data-testid="gpu-drain"]').click();
    await row.locator('[data-testid="gpu-drain-reason"]').fill("fan noise");
    await row.locator('[data-testid="gpu-drain-confirm"]').click();
    await textMatches(row.locator('[data-testid="gpu-health"]'), /drained[\s\S]*fan noise/);
    const g0 = (await c.api("/agents")).agents.find((a) => a.id === "gpunode").gpus[0];
    check(g0.health === "drained", `GPU 0 is ${g0.health} after Drain`);
    await openOn(c, "/audit");
    const entry = page.locator('[data-testid="audit-table"] tr[data-action="DrainGpu"]').first();
    await textMatches(entry.locator('[data-col="who"]'), /^ada$/);
    await textMatches(entry.locator('[data-col="subject"]'), /agent gpunode GPU 0.*drain: fan noise/);
    await textMatches(entry.locator('[data-col="outcome"]'), /ok/);
    await openOn(c, "/agents");
    await row.locator('[data-testid="gpu-undrain"]').click();
    await textMatches(row.locator('[data-testid="gpu-health"]'), /^ok$/);
  },

  // A viewer's Drain is refused: the page shows longhauld's refusal beside the button, and
  // the GPU stays in service.
  async gpu_refused() {
    const c = await gpuNode();
    await signInAs("vera");
    await openOn(c, "/agents");
    const row = page.locator('[data-agent="gpunode"] tr[data-gpu="0"]');
    await row.locator('[data-testid="gpu-drain"]').click();
    await row.locator('[data-testid="gpu-drain-reason"]').fill("not mine to drain");
    await row.locator('[data-testid="gpu-drain-confirm"]').click();
    await textMatches(row.locator('[data-testid="gpu-error"]'), /vera \(viewer\) may not drain GPUs: that needs the admin role/);
    check(await row.locator('[data-testid="gpu-error"]').isVisible(), "the refusal is not visible");
    await shot("agents-gpu-refused");
    const g0 = (await c.api("/agents")).agents.find((a) => a.id === "gpunode").gpus[0];
    check(g0.health === "ok", `GPU 0 is ${g0.health} after a refused drain`);
    await page.context().clearCookies();
  },

  // The UI runs under the server's Content-Security-Policy without breaking it: every view the
  // cases above opened (and this one) reported no violation, in events or on the console.
  async no_csp_violation() {
    const res = await page.goto(`${cluster.httpUrl}/`); // a new document, not a hash change
    const csp = (await res.allHeaders())["content-security-policy"] ?? "";
    check(/script-src 'self'/.test(csp) && /frame-ancestors 'none'/.test(csp), `CSP header: "${csp}"`);
    await textMatches(page.locator('[data-testid="connection"]'), /live/);
    check(cspViolations.length === 0, `CSP violations: ${cspViolations.join("; ")}`);
  },
};

async function main() {
  await cluster.start();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1360, height: 860 } });
  page.on("dialog", (d) => { dialogs.push(d.message()); void d.dismiss(); });
  page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.exposeFunction("__cspViolation", (v) => cspViolations.push(v));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) =>
      window.__cspViolation(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} (${e.sourceFile}:${e.lineNumber})`));
  });
  const order = ["runs_paging", "live_progress", "cancel", "retry", "markup_is_text", "agents",
    "audit", "pivot", "reconnect", "gpu_telemetry", "gpu_many_points", "gpu_quarantine", "gpu_drain", "gpu_refused",
    "provenance",
    "compare_campaign", "no_csp_violation"];
  for (const name of order) {
    if (ONLY.length && !ONLY.includes(name)) continue;
    const t0 = Date.now();
    try {
      await cases[name]();
      results.push([name, true]);
      console.log(`[ OK ] ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (e) {
      results.push([name, false]);
      console.log(`[FAIL] ${name}: ${e.stack || e}`);
      if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `failed-${name}.png`) }).catch(() => {});
    }
  }
}

let code = 1;
try {
  await main();
  const failed = results.filter(([, ok]) => !ok).length;
  console.log(`${results.length - failed} passed, ${failed} failed`);
  code = failed === 0 && results.length > 0 ? 0 : 1;
} catch (e) {
  console.log(`setup failed: ${e.stack || e}`);
  cluster.dumpLogs();
  gpuCluster?.dumpLogs();
} finally {
  await browser?.close().catch(() => {});
  await cluster.stop();
  await gpuCluster?.stop();
  if (code === 0) rmSync(tmp, { recursive: true, force: true });
  else console.log(`state kept in ${tmp}`);
}
process.exit(code);
