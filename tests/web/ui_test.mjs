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
import { colourfulLog } from "./colourlog.mjs";

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

/** big_run_graph's steps on its run `id` (602 stages, the gate running, the rest waiting). */
async function bigRunGraph(id) {
  await cluster.waitRun(id, /RUNNING/);
  await open(`/runs/${id}`);
  const table = page.locator('[data-testid="stage-table"]');
  await table.locator('tr[data-stage="gate"]').waitFor({ timeout: T });
  await textMatches(page.locator('[data-testid="stage-matches"]'), /^602 stages/);
  check(await page.locator('[data-testid="tab-table"][aria-selected="true"]').count() === 1, "the table is not the first view");
  check(await page.locator("svg.dag").count() === 0, "the graph is drawn under the table-first threshold");
  const drawn = await table.locator("tbody tr[data-stage]").count();
  check(drawn > 5 && drawn < 80, `${drawn} of 602 rows in the DOM (virtualised: only those in view)`);
  // Scrolling the table's own container reaches the last stage.
  await page.locator('[data-testid="stage-table-scroll"]').evaluate((el) => { el.scrollTop = el.scrollHeight; });
  await table.locator('tr[data-stage="report"]').waitFor({ timeout: T });
  check(await table.locator('tr[data-stage="gate"]').count() === 0, "the first row stayed in the DOM after scrolling away");
  await shot("big-table");

  // Search: Enter selects the match; the table scrolls it into view.
  const search = page.locator('[data-testid="stage-search"]');
  await search.fill("sweep-123-y");
  await textMatches(page.locator('[data-testid="stage-matches"]'), /^1 of 602 stages/);
  await search.press("Enter");
  await textMatches(page.locator('[data-testid="stage-matches"]'), /selected sweep-123-y/);
  const row = table.locator('tr.sel[data-stage="sweep-123-y"]');
  await row.waitFor({ timeout: T });
  check(await row.isVisible(), "the selected row is not visible");
  await search.fill("");
  await table.locator('tr[data-stage="sweep-0-x"]').waitFor({ timeout: T });

  // The graph tab: the sweep is one node with its counts; gate and report around it.
  await page.locator('[data-testid="tab-graph"]').click();
  const group = page.locator('svg.dag g[data-group="sweep-*"]');
  await group.waitFor({ timeout: T });
  check(/600 waiting/.test(await group.getAttribute("data-counts")), `group counts: ${await group.getAttribute("data-counts")}`);
  check(await page.locator("svg.dag g.node").count() === 3, "not 3 nodes (gate, sweep, report)");
  await page.locator('svg.dag g[data-stage="gate"]').waitFor({ timeout: T });
  const zoom = page.locator('[data-testid="dag-zoom"]');
  const fitted = await zoom.textContent();
  await page.locator('[data-testid="dag-zoom-out"]').click();
  const out = await textChanges(zoom, fitted);
  check(parseInt(out) < parseInt(fitted), `zoom out: ${fitted} -> ${out}`);
  // Wheel up over the graph zooms in about the cursor.
  const svg = page.locator("svg.dag");
  const box = await svg.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, -400);
  const wheeled = await textChanges(zoom, out);
  check(parseInt(wheeled) > parseInt(out), `wheel: ${out} -> ${wheeled}`);
  // A drag pans: the gate node moves with the pointer.
  const gateNode = page.locator('svg.dag g[data-stage="gate"]');
  const before = await gateNode.boundingBox();
  await page.mouse.move(box.x + 40, box.y + 40);
  await page.mouse.down();
  await page.mouse.move(box.x + 100, box.y + 70, { steps: 5 });
  await page.mouse.up();
  const after = await gateNode.boundingBox();
  check(Math.abs(after.x - before.x - 60) < 2 && Math.abs(after.y - before.y - 30) < 2,
    `drag by (60, 30) moved the node by (${after.x - before.x}, ${after.y - before.y})`);
  await page.locator('[data-testid="dag-fit"]').click();
  await textMatches(zoom, new RegExp(`^${escapeRe(fitted)}$`));

  // The state filter: the running gate is highlighted, the waiting sweep dimmed.
  await page.locator('[data-testid="stage-state"]').selectOption("running");
  await page.locator('svg.dag g.match[data-stage="gate"]').waitFor({ timeout: T });
  await page.locator('svg.dag g.dim[data-group="sweep-*"]').waitFor({ timeout: T });
  await page.locator('[data-testid="stage-state"]').selectOption("");

  // Search selects an item inside the collapsed sweep: the group is marked; expanding it
  // (a click) draws the item, panned into view.
  await search.fill("sweep-250-x");
  await search.press("Enter");
  await page.locator('svg.dag g.selected[data-group="sweep-*"]').waitFor({ timeout: T });
  await shot("big-graph");
  await group.click();
  const item = page.locator('svg.dag g.selected[data-stage="sweep-250-x"]');
  await item.waitFor({ timeout: T });
  const ib = await item.boundingBox();
  const sb = await svg.boundingBox();
  check(ib.x >= sb.x && ib.y >= sb.y && ib.x + ib.width <= sb.x + sb.width && ib.y + ib.height <= sb.y + sb.height,
    `the selected item is not inside the graph's view: ${JSON.stringify(ib)} in ${JSON.stringify(sb)}`);
  const nodes = Number(await svg.getAttribute("data-nodes"));
  check(nodes < 602, `${nodes} nodes drawn of 602: not only those in view`);
  await shot("big-graph-expanded");
  // A click on the item opens its stage; that page's graph shows it, the sweep collapsed.
  await item.click();
  await page.waitForURL(/stages\/sweep-250-x/, { timeout: T });
  await page.locator('.mini-dag svg.dag g.selected[data-group="sweep-*"]').waitFor({ timeout: T });
}

/** Writes the workflow `ui-NAME` with these stages (YAML under `stages:`) and submits it. */
function submitStages(name, stages) {
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(file, `name: ui-${name}\nstages:\n${stages}`);
  return cluster.submit(file);
}

const cases = {
  // The runs page lists the runs, and paging (3 a page) reaches the oldest.
  async runs_paging() {
    // A fresh coordinator's runs page says how to submit the first run (this case runs first).
    if ((await cluster.api("/runs?limit=1")).runs.length === 0) {
      await open("/runs");
      await textMatches(page.locator('[data-testid="no-runs-yet"]'), /longhaul submit .*New run/);
    }
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

  // A sweep whose loser stopped early: the run header says what that saved. b reports its
  // worse loss a second after a, so asha (eta 2, rung 1) stops b, and a runs its 10 steps.
  async early_stop_saving() {
    const file = path.join(tmp, "early-stop.yaml");
    const script = 'if [ "$0" = b ]; then sleep 1; v=2; else v=1; fi; for s in 1 2 3 4 5 6 7 8 9 10; ' +
      'do echo "{\\"metric\\": {\\"name\\": \\"loss\\", \\"value\\": $v, \\"step\\": $s}}" ' +
      '>> "$LONGHAUL_EVENTS"; sleep 0.1; done';
    writeFileSync(file, `name: ui-early-stop
stages:
  train:
    foreach: [a, b]
    early_stop: {metric: loss, rule: asha, rungs: [1], eta: 2}
    run: [/bin/sh, -c, ${JSON.stringify(script)}, "\${item}"]
`);
    const id = cluster.submit(file);
    await cluster.waitRun(id, /SUCCEEDED/);
    const run = await cluster.api(`/runs/${id}`);
    check(run.early_stop_saving?.stopped_items === 1, `early_stop_saving: ${JSON.stringify(run.early_stop_saving)}`);
    await open(`/runs/${id}`);
    await textMatches(page.locator('[data-testid="run-early-stop-saving"]'),
      /saved ~\S+ stage time \(\d+ % of the sweep\)/);
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
    // The XID was one event: the fake stops reporting it, so a GPU 1 that passing pre-flights
    // bring back during a later case is not quarantined again under that case's attempt.
    fakeGpus[1].xids = [];
    writeNvmlState();
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

  // Maintenance (docs/scheduling.md): a drained agent's card says when it drains, why and
  // who set it, with a badge; the undrain takes both away.
  async agent_drain() {
    const c = await gpuNode();
    await c.api("/agents/gpunode/drain", { atMs: String(Date.now() + 2 * 3600_000), reason: "kernel upgrade" });
    try {
      await openOn(c, "/agents");
      const card = page.locator('[data-agent="gpunode"]');
      await textMatches(card.locator('[data-testid="agent-drain"]'), /drains at [\s\S]*\(kernel upgrade\) · by ada/);
      await card.locator(".card-head .badge", { hasText: "drains" }).waitFor({ timeout: T });
    } finally {
      await c.api("/agents/gpunode/undrain", {});
    }
    await page.reload();
    await page.locator('[data-agent="gpunode"] .card-head .badge', { hasText: "connected" }).waitFor({ timeout: T });
    await page.locator('[data-agent="gpunode"] [data-testid="agent-drain"]').waitFor({ state: "detached", timeout: T });
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

  // ---- GPU use compared, and memory near its limit ----

  // A stage whose GPU memory nears its total says so in its message (the run page's table);
  // Compare sets that run's GPU use beside a run that held none (per run and per stage, "–"
  // where a run has none), and shows no GPU section for two runs that held none; the run
  // page's GPU-hours say how much was idle.
  async gpu_compare() {
    const c = await gpuNode();
    const release = path.join(tmp, "gpu-compare-release");
    const file = path.join(tmp, "gpu-compare.yaml");
    writeFileSync(file, `name: ui-gpu-compare
stages:
  train:
    resources: {cpus: 0.5, gpus: 1}
    run: [/bin/sh, -c, ${JSON.stringify(`while [ ! -e ${release} ]; do sleep 0.05; done`)}]
`);
    const id = c.submit(file);
    await c.waitRun(id, /RUNNING/);
    const before = fakeGpus.map((g) => g.mem_used);
    for (const g of fakeGpus) g.mem_used = 140_000 * 2 ** 20; // of 143771 MiB: 97 %
    writeNvmlState();
    try {
      await openOn(c, `/runs/${id}`);
      const row = page.locator('[data-testid="stage-table"] tr[data-stage="train"]');
      await textMatches(row.locator('[data-col="message"]'),
        /GPU \d memory at 97% \(140000 of 143771 MiB\): near the limit, a CUDA OOM may follow/);
      await shot("gpu-memory-warning");
      // Its idle time needs more than the one sample the warning came from: let the agent
      // take a few more (100 ms apart) before the stage ends.
      const t0 = Date.now();
      await waitFor(async () => {
        const node = (await c.api("/agents")).agents.find((a) => a.id === "gpunode");
        return node.gpus.every((g) => Number(g.reading?.ts_ms ?? 0) > t0 + 300);
      }, T, "no GPU samples after the warning");
    } finally {
      fakeGpus.forEach((g, i) => { g.mem_used = before[i]; });
      writeNvmlState();
      writeFileSync(release, "");
    }
    await c.waitRun(id, /SUCCEEDED/);
    const cpu = [1, 2].map((i) => c.submit(wf.quick, ["--set", `n=gpu-compare-${i}`]));
    for (const r of cpu) await c.waitRun(r, /SUCCEEDED/);

    await openOn(c, `/compare?runs=${id},${cpu[0]}`);
    const gpus = page.locator('[data-testid="compare-gpus"]');
    const cells = (sel) => gpus.locator(`${sel} td`);
    await textMatches(cells('tr[data-gpu="gpu_hours"]:not([data-stage])').nth(0), /^\d/);
    await textMatches(cells('tr[data-gpu="gpu_hours"]:not([data-stage])').nth(1), /^–$/);
    await textMatches(cells('tr[data-gpu="idle"]:not([data-stage])').nth(0), /^[\d.]+ \([\d.]+ %\)$/);
    await textMatches(cells('tr[data-gpu="mean_sm"]:not([data-stage])').nth(0), /^80 %$/);
    await textMatches(cells('tr[data-stage="train"][data-gpu="peak_mem"]').nth(0), /^137 GiB of 140 GiB$/);
    await textMatches(cells('tr[data-stage="train"][data-gpu="energy"]').nth(1), /^–$/);
    check(await gpus.locator('tr[data-stage="hello"]').count() === 0, "a stage that held no GPU has GPU rows");
    await gpus.scrollIntoViewIfNeeded();
    await shot("compare-gpus");

    await openOn(c, `/compare?runs=${cpu[0]},${cpu[1]}`);
    await page.locator('[data-testid="compare-stages"] tr[data-stage="hello"]').waitFor({ timeout: T });
    check(await gpus.count() === 0, "a GPU section for two runs that held no GPU");

    await openOn(c, `/runs/${id}`);
    await textMatches(page.locator('[data-testid="run-gpu-hours"]'), /GPU-hours[\d.]+, [\d.]+ idle \([\d.]+ %\)$/);
  },

  // ---- Pages that never fail silently ----

  // A run, stage or pivot that does not exist is a page that says so, with a way back; the
  // 404 is an answer, so the connection stays "live" (it is "disconnected" only when longhauld
  // cannot be reached).
  async not_found() {
    const conn = page.locator('[data-testid="connection"]');
    await open("/runs/999999");
    const nf = page.locator('[data-testid="not-found"]');
    await textMatches(nf.locator("h2"), /^No run 999999$/);
    await textMatches(nf, /longhauld: no run 999999/);
    await textMatches(conn, /live/);
    check(!/disconnected/.test(await conn.textContent()), "a 404 turned the connection red");
    check(await page.getByText("Loading run 999999").count() === 0, "still says Loading");
    await nf.locator('[data-testid="not-found-back"]').click();
    await page.waitForURL(/#\/runs$/, { timeout: T });
    await open("/runs/999999/pivot");
    await textMatches(page.locator('[data-testid="not-found"] h2'), /^No run 999999$/);
    const id = cluster.submit(wf.quick, ["--set", "n=nf"]);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}/stages/nosuch`);
    await textMatches(page.locator('[data-testid="not-found"] h2'), new RegExp(`No stage .nosuch. in run ${id}`));
    await page.locator(`[data-testid="not-found-back"][href="#/runs/${id}"]`).waitFor({ timeout: T });
    await textMatches(conn, /live/);
    // The CLI says the same of a run that does not exist, in its own form, exit 3.
    for (const [args, want] of [[["logs", "999999", "x"], "longhaul: no run 999999"],
      [["logs", String(id), "x"], `longhaul: run ${id} has no stage 'x'`]]) {
      let failed = null;
      try {
        cluster.cli(args);
      } catch (e) {
        failed = e;
      }
      check(failed && failed.status === 3, `longhaul ${args.join(" ")}: exit ${failed?.status ?? 0}`);
      check(String(failed.stderr).trim() === want, `longhaul ${args.join(" ")} said: ${failed.stderr}`);
    }
  },

  // The pivot plan follows every edit: Submit is disabled until the plan shown is that of the
  // params in the form, and the run it starts re-runs exactly what that plan said. A pivot that
  // would repeat a run says so, with a link to it.
  async pivot_follows_edits() {
    const first = cluster.submit(wf.pivotable, ["--set", "greeting=hi"]);
    await cluster.waitRun(first, /SUCCEEDED/);
    await open(`/runs/${first}/pivot`);
    const submit = page.locator('[data-testid="submit-pivot"]');
    const repeats = page.locator('[data-testid="pivot-repeats"]');
    await textMatches(repeats, new RegExp(`This pivot repeats run ${first}: it has exactly these params`));
    await textMatches(repeats, /Every stage would be reused .*: nothing new would run/);
    await page.locator('input[data-param="greeting"]').fill("salut");
    // No "Update plan": the plan is made again by itself; until then Submit is disabled.
    await page.locator('[data-testid="submit-pivot"]:disabled').waitFor({ timeout: T });
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="greet"]'), /run.*greeting/);
    await page.locator('[data-testid="submit-pivot"]:enabled').waitFor({ timeout: T });
    check(await repeats.count() === 0, "a changed pivot still says it repeats a run");
    await submit.click();
    await page.waitForURL((u) => /#\/runs\/\d+$/.test(u.hash) && !u.hash.endsWith(`/${first}`), { timeout: T });
    const second = Number(new URL(page.url()).hash.split("/").pop());
    await cluster.waitRun(second, /SUCCEEDED/);
    const run = await cluster.api(`/runs/${second}`);
    check(run.params.greeting === "salut", `the pivot ran greeting=${run.params.greeting}`);
    const byName = Object.fromEntries(run.stages.map((x) => [x.name, x.status]));
    check(byName.prep === "STAGE_CACHED" && byName.greet === "STAGE_SUCCEEDED",
      `stages ${JSON.stringify(byName)}: not what the plan said (prep reused, greet run)`);
    // The same change again: every stage would be reused from the pivot just made.
    await open(`/runs/${first}/pivot`);
    await page.locator('input[data-param="greeting"]').fill("salut");
    await textMatches(repeats, new RegExp(`This pivot repeats run ${second}: it has exactly these params`));
    await textMatches(repeats, new RegExp(`Every stage would be reused \\(from .*run ${second}\\): nothing new would run`));
    await repeats.locator(`a[href="#/runs/${second}"]`).first().waitFor({ timeout: T });
    await shot("pivot-repeats");
  },

  // The runs page's filters: a part of a workflow name finds its runs; a param without "=" and
  // a metric no run has are said, not dropped; Compare says why runs of two workflows show no
  // differences.
  async filters_say_why() {
    const quick = cluster.submit(wf.quick, ["--set", "n=filters"]);
    const pivotable = cluster.submit(wf.pivotable, ["--set", "greeting=filters"]);
    await cluster.waitRun(quick, /SUCCEEDED/);
    await cluster.waitRun(pivotable, /SUCCEEDED/);
    await open("/runs");
    await page.locator('[data-testid="workflow-filter"]').fill("QUIC");
    await page.locator('[data-testid="apply-filters"]').click();
    const table = page.locator('[data-testid="runs-table"]');
    await table.locator(`tr[data-run="${quick}"]`).waitFor({ timeout: T });
    check(await table.locator(`tr[data-run="${pivotable}"]`).count() === 0, "the ui-pivot run is listed under QUIC");
    await page.locator('[data-testid="param-filter"]').fill("n=filters eagle3");
    await textMatches(page.locator('[data-testid="param-error"]'), /“eagle3” is not NAME=VALUE/);
    const before = page.url();
    await page.locator('[data-testid="apply-filters"]').click();
    check(page.url() === before, `a bad param filter was applied: ${page.url()}`);
    await open("/runs?metric=hello.no_such_metric");
    await textMatches(page.locator('[data-testid="metric-missing"]'), /No run listed has metric “hello\.no_such_metric”/);
    await open(`/compare?runs=${quick},${pivotable}`);
    await textMatches(page.locator('[data-testid="workflow-mismatch"]'),
      new RegExp(`different workflows \\(run ${quick} is ui-quick, run ${pivotable} is ui-pivot\\)`));
    await page.locator(".filters input").fill(`${quick}, abc`);
    await textMatches(page.locator('[data-testid="runs-error"]'), /“abc” is not a run id/);
  },

  // A metric reported once, without a step, is shown as its value, not a dot at x = -1; times
  // switch to UTC and stay so after a reload, with ISO 8601 in their tooltips.
  async metric_and_times() {
    const id = cluster.submit(wf.markup, ["--no-cache"]); // its own metric, not a reused one
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}/stages/b_img_onerror_alert`);
    const single = page.locator('[data-testid="metric-charts"] figure[data-metric="score"][data-single="true"]');
    await textMatches(single.locator('[data-testid="metric-value"]'), /^1$/);
    check(await page.locator('figure[data-metric="score"] canvas').count() === 0, "a one-value metric is drawn as a chart");
    const started = page.locator(".stats time").first(); // the run's start, in the header
    await textMatches(page.locator('[data-testid="tz-toggle"]'), /local/);
    await page.locator('[data-testid="tz-toggle"]').click();
    await textMatches(started, /UTC$/);
    await page.reload();
    await textMatches(page.locator('[data-testid="tz-toggle"]'), /UTC/);
    await textMatches(started, /^\d\d:\d\d:\d\d UTC$/);
    const iso = await started.getAttribute("title");
    check(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(iso), `tooltip "${iso}" is not ISO 8601 UTC`);
    await page.locator('[data-testid="tz-toggle"]').click(); // back to local for the other cases
    await textMatches(page.locator('[data-testid="tz-toggle"]'), /local/);
  },

  // With no agent connected, a ready stage says so on the page and in `longhaul show`, not
  // that it waits for an agent with room.
  async no_agent_reason() {
    const lonely = new Cluster({ bin: BIN, state: path.join(tmp, "lonely-state"), uiDir: process.env.LONGHAUL_UI_DIR, agent: false });
    await lonely.start();
    try {
      const id = lonely.submit(wf.quick, ["--set", "n=alone"]);
      await waitFor(async () => (await lonely.api(`/runs/${id}`)).stages[0].status === "STAGE_READY", T, "the stage is not ready");
      await openOn(lonely, `/runs/${id}`);
      await textMatches(page.locator('[data-testid="stage-table"] tr[data-stage="hello"]'), /no agent is connected/);
      await openOn(lonely, `/runs/${id}/stages/hello`);
      await textMatches(page.locator(".stage-summary"), /no agent is connected \(waiting for an agent with 1 cpus free\)/);
      const shown = lonely.cli(["show", String(id)]);
      check(/no agent is connected/.test(shown), `longhaul show says: ${shown}`);
      check(!/^hello .*waiting for an agent with 1 cpus free$/m.test(shown), `longhaul show: ${shown}`);
    } finally {
      await lonely.stop();
    }
  },

  // Shareable views: the runs page's filters and page, the run page's stage search and state
  // filter, and Compare's options are in the URL, and the URL opened in a new tab shows them
  // again. `/` focuses the page's search box, Escape leaves it; the browser's dark preference
  // gives a dark page.
  async url_state() {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(cluster.submit(wf.quick, ["--set", `n=url${i}`]));
    await cluster.waitRun(ids[ids.length - 1], /SUCCEEDED/);
    await open("/runs?limit=1");
    const table = page.locator('[data-testid="runs-table"]');
    await page.locator('[data-testid="workflow-filter"]').fill("ui-quick");
    await page.locator('[data-testid="status-filter"]').selectOption("succeeded");
    await page.waitForURL(/workflow=ui-quick/, { timeout: T });
    const first = await table.locator("tbody tr[data-run]").first().getAttribute("data-run");
    await page.locator('[data-testid="older"]').click();
    await table.locator(`tbody tr:first-child[data-run]:not([data-run="${first}"])`).waitFor({ timeout: T });
    const second = await table.locator("tbody tr[data-run]").first().getAttribute("data-run");
    await page.waitForURL(/cursor=/, { timeout: T });
    const runsUrl = page.url();
    check(/status=succeeded/.test(runsUrl), `the status filter is not in the URL: ${runsUrl}`);

    const tab = await browser.newPage({ viewport: { width: 1360, height: 860 } });
    try {
      await tab.goto(runsUrl);
      const t2 = tab.locator('[data-testid="runs-table"]');
      await t2.locator(`tbody tr:first-child[data-run="${second}"]`).waitFor({ timeout: T });
      check(await tab.locator('[data-testid="workflow-filter"]').inputValue() === "ui-quick", "workflow filter lost");
      check(await tab.locator('[data-testid="status-filter"]').inputValue() === "succeeded", "status filter lost");
      check(await tab.locator('[data-testid="newer"]').isEnabled(), "the restored page 2 has no newer page");

      // The run page: the stage search and the state filter.
      const id = ids[0];
      await open(`/runs/${id}`);
      await page.locator('[data-testid="stage-search"]').fill("hel");
      await page.locator('[data-testid="stage-state"]').selectOption("succeeded");
      await page.waitForURL(/q=hel&state=succeeded/, { timeout: T });
      await tab.goto(page.url());
      await tab.locator('[data-testid="stage-table"] tr[data-stage="hello"]').waitFor({ timeout: T });
      check(await tab.locator('[data-testid="stage-search"]').inputValue() === "hel", "stage search lost");
      check(await tab.locator('[data-testid="stage-state"]').inputValue() === "succeeded", "state filter lost");

      // Compare: the runs and "show all" params.
      await open(`/compare?runs=${ids[0]},${ids[1]}`);
      await page.locator('[data-testid="all-params"]').check();
      await page.waitForURL(/all=1/, { timeout: T });
      await tab.goto(page.url());
      await tab.locator('[data-testid="all-params"]:checked').waitFor({ timeout: T });
      check(await tab.locator('[data-testid="compare-runs"]').inputValue() === `${ids[0]}, ${ids[1]}`, "compare runs lost");

      // Keys: `/` focuses the search box (and types nothing into it), Escape leaves it.
      await open("/runs");
      const wfBox = page.locator('[data-testid="workflow-filter"]');
      await page.locator("h1").click();
      await page.keyboard.press("/");
      await page.locator('[data-testid="workflow-filter"]:focus').waitFor({ timeout: T });
      check(await wfBox.inputValue() === "", "the / was typed into the box");
      await page.keyboard.type("ui/x");
      check(await wfBox.inputValue() === "ui/x", "a / typed in the box was taken as the key");
      await page.keyboard.press("Escape");
      await page.locator('[data-testid="workflow-filter"]:not(:focus)').waitFor({ timeout: T });

      // Dark mode: the page follows the browser's preference.
      await tab.emulateMedia({ colorScheme: "dark" });
      await tab.goto(`${cluster.httpUrl}/#/runs`);
      await tab.locator('[data-testid="runs-table"]').waitFor({ timeout: T });
      const bg = await tab.locator("body").evaluate((el) => getComputedStyle(el).backgroundColor);
      const [r, g, b] = (bg.match(/\d+/g) ?? []).map(Number);
      check(r + g + b < 3 * 60, `the body is not dark under prefers-color-scheme: dark: ${bg}`);
      const fg = await tab.locator("h1").evaluate((el) => getComputedStyle(el).color);
      const [fr, fgr, fb] = (fg.match(/\d+/g) ?? []).map(Number);
      check(fr + fgr + fb > 3 * 180, `the heading is not light on the dark page: ${fg}`);
      if (SHOTS) await tab.screenshot({ path: path.join(SHOTS, "runs-dark.png") });
      await tab.emulateMedia({ colorScheme: "light" });
      await tab.reload();
      const light = await tab.locator("body").evaluate((el) => getComputedStyle(el).backgroundColor);
      check(light !== bg, `the body stays ${bg} in light mode`);
    } finally {
      await tab.close();
    }
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

  // --- Big runs (a foreach sweep): table first, virtualised; the graph a tab away, sweeps
  // collapsed with counts by state, search / state filter, zoom and pan, selection in view.
  async big_run_graph() {
    const gate = path.join(tmp, "big.gate");
    const file = path.join(tmp, "big.yaml");
    const a = Array.from({ length: 300 }, (_, i) => i).join(", ");
    writeFileSync(file, `name: ui-big
stages:
  gate:
    run: [/bin/sh, -c, "while [ ! -f ${gate} ]; do sleep 0.1; done"]
  sweep:
    foreach: {a: [${a}], b: [x, y]}
    needs: [gate]
    run: [/bin/true]
  report:
    needs: [sweep]
    run: [/bin/true]
`);
    const id = cluster.submit(file);
    try {
      await bigRunGraph(id);
    } finally {
      await cluster.cancel(id).catch(() => {});
    }
    await cluster.waitRun(id, /CANCELLED/);
  },

  // The stage table's message column at 1000 and 1400 px: visible (the table scrolls sideways
  // when it must), one line with an ellipsis, the full text on hover and on the stage page. An
  // error from a failed first attempt is not red once the retry succeeded.
  async table_messages() {
    const long = `loading shard ${"0123456789abcdef".repeat(12)} of the calibration set: done`;
    const mark = path.join(tmp, "msg.failed-once");
    const flaky = [
      `if [ ! -f ${mark} ]; then touch ${mark};`,
      `echo '{"message": {"level": "error", "text": "CUDA error: out of memory"}}' >> "$LONGHAUL_EVENTS"; exit 3; fi`,
      "echo ok",
    ].join("\n");
    const file = path.join(tmp, "messages.yaml");
    writeFileSync(file, `name: ui-messages
stages:
  chatty:
    run: [/bin/sh, -c, ${JSON.stringify(`echo '{"message": {"text": "${long}"}}' >> "$LONGHAUL_EVENTS"`)}]
  recovers:
    retry: {limit: 1, backoff: 1s}
    run: [/bin/sh, -c, ${JSON.stringify(flaky)}]
`);
    const id = cluster.submit(file);
    await cluster.waitRun(id, /SUCCEEDED/);
    try {
      for (const width of [1000, 1400]) {
        await page.setViewportSize({ width, height: 860 });
        await open(`/runs/${id}`);
        const msg = page.locator('[data-testid="stage-table"] tr[data-stage="chatty"] [data-testid="stage-message"]');
        await msg.waitFor({ timeout: T });
        check(await msg.getAttribute("title") === long, `${width} px: the title is not the full message`);
        await msg.scrollIntoViewIfNeeded();
        const m = await msg.evaluate((el) => {
          const r = el.getBoundingClientRect();
          return { left: r.left, right: r.right, width: r.width, sw: el.scrollWidth, cw: el.clientWidth,
            overflow: getComputedStyle(el).textOverflow, vw: window.innerWidth };
        });
        check(m.width >= 150, `${width} px: the message is ${m.width} px wide`);
        check(m.left >= 0 && m.right <= m.vw, `${width} px: the message is off screen (${m.left}..${m.right} of ${m.vw})`);
        check(m.sw > m.cw && m.overflow === "ellipsis", `${width} px: the long message is not cut with an ellipsis`);
        const earlier = page.locator('[data-testid="stage-table"] tr[data-stage="recovers"] [data-testid="stage-message"]');
        await textMatches(earlier, /out of memory/);
        const cls = await earlier.getAttribute("class");
        const color = await earlier.evaluate((el) => getComputedStyle(el).color);
        check(!/level-error/.test(cls) && color !== "rgb(220, 38, 38)", `${width} px: the earlier error is drawn as ${cls} ${color}`);
        await shot(`messages-${width}`);
      }
      // A small run shows the graph and the table together; the search works on both.
      await page.locator('[data-testid="stage-search"]').fill("recov");
      await page.locator('[data-testid="stage-search"]').press("Enter");
      await page.locator('[data-testid="stage-table"] tr.sel[data-stage="recovers"]').waitFor({ timeout: T });
      await page.locator('svg.dag g.selected.match[data-stage="recovers"]').waitFor({ timeout: T });
      await page.locator('svg.dag g.dim[data-stage="chatty"]').waitFor({ timeout: T });
      check(await page.locator('[data-testid="stage-table"] tr[data-stage="chatty"]').count() === 0,
        "the table lists a stage the search does not match");
      await open(`/runs/${id}/stages/chatty`);
      await textMatches(page.locator('[data-testid="stage-message"]'), new RegExp(escapeRe(long)));
      await open(`/runs/${id}/stages/recovers`);
      await textMatches(page.locator('[data-testid="stage-message"]'), /out of memory[\s\S]*earlier attempt that failed/);
    } finally {
      await page.setViewportSize({ width: 1360, height: 860 });
    }
  },
  // --- end of big runs

  // --- Timeline (the run's Gantt): a bar per attempt, the critical path, a 2,000-stage run.
  // A stage that failed once and was retried: two bars in its row, the first failed; the
  // hover names the attempt's times and node; a click opens that attempt.
  async timeline_retry() {
    const mark = path.join(tmp, "timeline.failed-once");
    const id = submitStages("timeline-retry", `  prep:
    run: [/bin/sh, -c, "sleep 0.3"]
  recovers:
    needs: [prep]
    retry: {limit: 1, backoff: 1s}
    run: [/bin/sh, -c, ${JSON.stringify(`if [ ! -f ${mark} ]; then touch ${mark}; sleep 0.3; exit 3; fi; sleep 0.5`)}]
`);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}`);
    await page.locator('[data-testid="tab-timeline"]').click();
    await page.waitForURL(/tab=timeline/, { timeout: T });
    const row = page.locator('[data-testid="timeline"] .tl-row[data-stage="recovers"]');
    await row.locator('.tl-bar[data-attempt="2"]').waitFor({ timeout: T });
    const bars = await row.locator(".tl-bar").evaluateAll((els) => els.map((e) => ({
      attempt: e.dataset.attempt, outcome: e.dataset.outcome, x: e.getBoundingClientRect().x,
      w: e.getBoundingClientRect().width })));
    check(bars.length === 2, `${bars.length} bars in the retried stage's row`);
    check(bars[0].attempt === "1" && bars[0].outcome === "bad", `first bar: ${JSON.stringify(bars[0])}`);
    check(bars[1].attempt === "2" && bars[1].outcome === "ok", `second bar: ${JSON.stringify(bars[1])}`);
    check(bars[0].x + bars[0].w <= bars[1].x + 1, `the retry's bar does not follow the first: ${JSON.stringify(bars)}`);
    const failedColour = await row.locator('.tl-bar[data-attempt="1"] .tl-running').evaluate((e) => getComputedStyle(e).backgroundColor);
    check(failedColour === "rgb(220, 38, 38)", `the failed attempt is drawn ${failedColour}`);
    check(await page.locator('[data-testid="timeline"] .tl-row[data-stage="prep"] .tl-bar').count() === 1, "prep has not one bar");
    // The retry waited out its 1 s backoff: its ready time is recorded, its queued part drawn.
    await row.locator('.tl-bar[data-attempt="2"]').hover();
    const tip = page.locator('[data-testid="timeline-tip"]');
    const text = await textMatches(tip, /recovers · attempt 2 · succeeded/);
    const agent = (await cluster.api(`/runs/${id}/stages/recovers/attempts`)).attempts[1].agent_id;
    check(text.includes(`node${agent}`), `the tip does not name node ${agent}: ${text}`);
    check(!/from its needs/.test(text), `the retry's ready time is not the recorded one: ${text}`);
    check(/queued\d+\.\ds/.test(text) && /ran\d+\.\ds/.test(text), `no durations in the tip: ${text}`);
    await shot("timeline-retry");
    // By node: the agent's header, then its CPU lanes holding all three attempts, none overlapping.
    await page.locator('[data-testid="timeline-mode"]').click();
    await page.locator('[data-testid="timeline"][data-mode="nodes"]').waitFor({ timeout: T });
    const lanes = page.locator('[data-testid="timeline"] .tl-row[data-lane]');
    check(await lanes.first().getAttribute("data-lane") === `node:${agent}`, `the first lane row is not node ${agent}`);
    const onLanes = await lanes.locator(".tl-bar").evaluateAll((els) => els.map((e) => e.dataset.stage).sort());
    check(JSON.stringify(onLanes) === JSON.stringify(["prep", "recovers", "recovers"]), `bars on the node's lanes: ${onLanes}`);
    await page.locator('[data-testid="timeline-mode"]').click();
    await page.locator('[data-testid="timeline"][data-mode="stages"]').waitFor({ timeout: T });
    await row.locator('.tl-bar[data-attempt="1"]').click();
    await page.waitForURL(new RegExp(`/runs/${id}/stages/recovers\\?attempt=1`), { timeout: T });
  },

  // The critical path of a known DAG: gen -> slow -> report decided the run's wall time
  // (quick ran beside slow, short); it is named above the bars and its rows are marked.
  async timeline_critical_path() {
    const id = submitStages("timeline-path", `  gen:
    run: [/bin/sh, -c, "sleep 0.5"]
  slow:
    needs: [gen]
    run: [/bin/sh, -c, "sleep 2"]
  quick:
    needs: [gen]
    run: [/bin/true]
  report:
    needs: [slow, quick]
    run: [/bin/sh, -c, "sleep 0.2"]
`);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}?tab=timeline`);
    const line = page.locator('[data-testid="critical-path"]');
    const text = await textMatches(line, /^critical path: /);
    // A step that queued a second or more says so: "(queued 1.2s)" (a loaded test host).
    const q = "( \\(queued \\d+\\.\\ds\\))?";
    check(new RegExp(`^critical path: gen \\d+\\.\\ds${q} → slow [23]\\.\\ds${q} → report \\d+\\.\\ds${q}$`).test(text), `critical path: "${text}"`);
    const marked = await page.locator('[data-testid="timeline"] .tl-row[data-critical="1"]').evaluateAll(
      (els) => els.map((e) => e.dataset.stage));
    check(JSON.stringify(marked) === JSON.stringify(["gen", "slow", "report"]), `rows marked: ${marked}`);
    check(await page.locator('[data-testid="timeline"] .tl-row[data-stage="quick"] .tl-bar.crit').count() === 0,
      "quick is drawn on the critical path");
    // The axis has ticks, labelled as clock times.
    const ticks = await page.locator('[data-testid="timeline"] .tl-tick').allTextContents();
    check(ticks.length >= 2 && ticks.every((t) => /\d\d:\d\d/.test(t)), `ticks: ${ticks}`);
    await shot("timeline-path");
  },

  // A service is one long bar (violet), the stages that use it listed under it, one level in;
  // the run's other stages stay at the top level.
  async timeline_service() {
    const serve = `echo '{"ready": {}}' >> "$LONGHAUL_EVENTS"; while true; do sleep 0.1; done`;
    const id = submitStages("timeline-service", `  prep:
    run: [/bin/true]
  server:
    kind: service
    needs: [prep]
    run: [/bin/sh, -c, ${JSON.stringify(serve)}]
  report:
    needs: [ask_a, ask_b]
    run: [/bin/true]
  ask_a:
    needs: [server]
    run: [/bin/sh, -c, "sleep 0.5"]
  ask_b:
    needs: [server]
    run: [/bin/sh, -c, "sleep 0.2"]
`);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}?tab=timeline`);
    const tl = page.locator('[data-testid="timeline"]');
    await tl.locator('.tl-row[data-stage="server"] .tl-bar[data-outcome="serve"]').waitFor({ timeout: T });
    const rows = await tl.locator(".tl-row[data-stage]").evaluateAll((els) => els.map((e) =>
      `${e.dataset.stage}:${parseFloat(getComputedStyle(e.querySelector(".tl-label")).paddingLeft)}`));
    check(JSON.stringify(rows) === JSON.stringify(["prep:6", "server:6", "ask_a:20", "ask_b:20", "report:6"]),
      `rows (stage:indent px): ${rows}`);
    // The service's bar spans its consumers' bars.
    const box = async (stage) => tl.locator(`.tl-row[data-stage="${stage}"] .tl-bar`).first().boundingBox();
    const [sv, a, b] = [await box("server"), await box("ask_a"), await box("ask_b")];
    check(sv.x <= Math.min(a.x, b.x) && sv.x + sv.width >= Math.max(a.x + a.width, b.x + b.width) - 1,
      `the service's bar ${JSON.stringify(sv)} does not span its consumers' ${JSON.stringify([a, b])}`);
    await shot("timeline-service");
  },

  // A live run: the running stage's bar grows to now while the page is open; when it ends the
  // bar turns green and the stage after it gets its bar, with no reload (the live stream).
  async timeline_live() {
    const hold = path.join(tmp, "timeline-live.release");
    const id = submitStages("timeline-live", `  hold:
    run: [/bin/sh, -c, "while [ ! -f ${hold} ]; do sleep 0.1; done"]
  after:
    needs: [hold]
    run: [/bin/true]
`);
    await cluster.waitRun(id, /RUNNING/);
    await open(`/runs/${id}?tab=timeline`);
    const bar = page.locator('[data-testid="timeline"] .tl-row[data-stage="hold"] .tl-bar[data-attempt="1"]');
    await page.locator('[data-testid="timeline"] .tl-row[data-stage="hold"] .tl-bar[data-outcome="run"]').waitFor({ timeout: T });
    // The bar ends at now, the axis's end: the hover's running time counts up, and the bar
    // reaches the right end of its track.
    await bar.hover();
    const ran = async () => {
      const m = (await page.locator('[data-testid="timeline-tip"]').textContent()).match(/ran([\d.]+)s/);
      return m ? Number(m[1]) : -1;
    };
    const before = await ran();
    await waitFor(async () => (await ran()) >= before + 1, T, `the running time stays at ${before}s`);
    const ends = await bar.evaluate((el) => {
      const b = el.getBoundingClientRect();
      const t = el.parentElement.getBoundingClientRect();
      return Math.abs(b.right - t.right);
    });
    check(ends < 3, `the running bar ends ${ends} px before now`);
    await page.mouse.move(0, 0);
    writeFileSync(hold, "go\n");
    await page.locator('[data-testid="timeline"] .tl-row[data-stage="hold"] .tl-bar[data-outcome="ok"]').waitFor({ timeout: T });
    await page.locator('[data-testid="timeline"] .tl-row[data-stage="after"] .tl-bar[data-outcome="ok"]').waitFor({ timeout: T });
    await textMatches(page.locator('[data-testid="critical-path"]'), /^critical path: hold [\d.]+s.* → after [\d.]+s/);
  },

  // A 2,002-stage run that ran (a foreach of 1,000 x 2 at cpus 0.01 between two stages): the
  // timeline opens with a bar per attempt, only the rows in view are in the page, scrolling
  // reaches the last row. The time from the tab's click to the first bars drawn is printed
  // (docs/performance.md), not asserted.
  async timeline_big() {
    const a = Array.from({ length: 1000 }, (_, i) => i).join(", ");
    // The gate's command is its own: a /bin/true stage of another case would be reused (no bar).
    const id = submitStages("timeline-big", `  gate:
    run: [/bin/sh, -c, "echo timeline-big"]
  item:
    foreach: {a: [${a}], b: [x, y]}
    needs: [gate]
    resources: {cpus: 0.01}
    run: [/bin/true]
  report:
    needs: [item]
    run: [/bin/true]
`);
    await cluster.waitRun(id, /SUCCEEDED/, 300_000);
    const tl = page.locator('[data-testid="timeline"]');
    const times = [];
    for (let i = 0; i < 3; i++) { // a fresh page each time; the last one stays for the checks
      await page.goto("about:blank");
      await open(`/runs/${id}`);
      await textMatches(page.locator('[data-testid="stage-matches"]'), /^2,002 stages/);
      const t0 = Date.now();
      await page.locator('[data-testid="tab-timeline"]').click();
      await tl.locator('.tl-row[data-stage="item-0-x"] .tl-bar[data-outcome="ok"]').waitFor({ timeout: T });
      const ms = Date.now() - t0;
      const inPage = Number(await tl.getAttribute("data-first-draw-ms"));
      const read = Number(await tl.getAttribute("data-read-ms"));
      times.push(ms);
      console.log(`  timeline of 2,002 stages that ran: click -> first bars drawn ${ms} ms ` +
        `(${inPage} ms from the view's mount, of which ${read} ms reading the first 1,000 stages' attempts)`);
    }
    console.log(`  median of ${times.length}: ${times.sort((x, y) => x - y)[1]} ms`);
    const rows = Number(await tl.getAttribute("data-rows"));
    check(rows === 2003, `${rows} rows (2,002 stages and the group's header)`);
    const drawn = await tl.locator(".tl-row").count();
    check(drawn > 5 && drawn < 100, `${drawn} of ${rows} rows in the DOM (virtualised: only those in view)`);
    console.log(`  ${drawn} of ${rows} rows in the page`);
    check(await tl.locator('.tl-row[data-group="item-*"]').count() === 1, "no group header for the foreach");
    check(/critical path: gate [\d.]+s.* → item-\d+-[xy] [\d.]+s.* → report [\d.]+s/.test(await page.locator('[data-testid="critical-path"]').textContent()),
      `critical path: ${await page.locator('[data-testid="critical-path"]').textContent()}`);
    await page.locator('[data-testid="timeline-scroll"]').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await tl.locator('.tl-row[data-stage="report"] .tl-bar').waitFor({ timeout: T });
    check(await tl.locator('.tl-row[data-stage="gate"]').count() === 0, "the first row stayed in the DOM after scrolling away");
    await page.locator('[data-testid="timeline-scroll"]').evaluate((el) => { el.scrollTop = 0; });
    await shot("timeline-big");
    // Folding the group leaves its header: three rows.
    await page.locator('[data-testid="timeline-groups"]').click();
    await textMatches(page.locator('[data-testid="timeline"] .tl-axis .tl-label'), /^3 rows$/);
  },
  // --- end of timeline
};

// The log viewer's cases (ANSI colours, search, jumps, the failed stage's stderr, the hash):
// each stage cats a log the test wrote, so the test knows every byte offset.
function logWorkflow(name, stages) {
  const text = [`name: ${name}`, "stages:"];
  for (const [stage, script] of Object.entries(stages)) {
    const [run, needs] = Array.isArray(script) ? script : [script, null];
    text.push(`  ${stage}:`, `    run: [/bin/sh, -c, ${JSON.stringify(run)}]`);
    if (needs) text.push(`    needs: [${needs}]`);
  }
  const file = path.join(tmp, `${name}.yaml`);
  writeFileSync(file, text.join("\n") + "\n");
  return file;
}
const logPane = () => page.locator('[data-testid="log-text"]');
/** The log line starting at byte `offset`, once it is shown. */
async function logLine(offset) {
  const line = logPane().locator(`.ll[data-offset="${offset}"]`);
  await line.waitFor({ timeout: T });
  return line;
}
async function inView(locator) {
  const [box, pane] = [await locator.boundingBox(), await logPane().boundingBox()];
  return !!box && !!pane && box.y >= pane.y - 1 && box.y + box.height <= pane.y + pane.height + 1;
}
let bigLog = null; // the search and jump cases' run: { id, log }

const logCases = {
  // SGR colours show as coloured spans (green INFO), every escape code's text is gone, a \r
  // redraw shows its last state, and 256-colour and truecolor get their rgb() colour.
  async log_colours() {
    const log = colourfulLog(1200);
    const file = path.join(tmp, "colours.log");
    writeFileSync(file, log.bytes);
    const id = cluster.submit(logWorkflow("ui-log-colours", { train: `cat ${file}` }));
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs/${id}/stages/train`);
    const last = await logLine(log.lineOffsets(1199));
    const info = last.locator("span.ansi-fg-2").first();
    check((await info.textContent()) === "INFO", `green span holds "${await info.textContent()}"`);
    const green = await info.evaluate((el) => getComputedStyle(el).color);
    const [r, g, b] = green.match(/\d+/g).map(Number);
    check(g > 150 && g > r + 60 && g > b + 60, `INFO is not green: ${green}`);
    check(await last.locator("span.ansi-bold.ansi-fg-3").count() === 1, "bold yellow loss missing");
    const c256 = await last.locator("span", { hasText: "3.0e-04" }).evaluate((el) => getComputedStyle(el).color);
    check(c256 === "rgb(175, 135, 255)", `256-colour 141 shows as ${c256}`);
    const tc = await last.locator("span", { hasText: /^4\d{4}$/ }).evaluate((el) => getComputedStyle(el).color);
    check(tc === "rgb(255, 128, 0)", `truecolor shows as ${tc}`);
    const text = await logPane().textContent();
    for (const bad of ["\x1b", "\u241b[", "[32m", "[0m", "[2K", "]0;", "train step"]) {
      check(!text.includes(bad), `the pane shows escape text ${JSON.stringify(bad)}`);
    }
    check(text.includes("eval 100% done") && !text.includes("eval 10%"), "\\r redraw not collapsed");
    await shot("log-colours");
  },

  // The server searches the whole 3 MB log: matches listed with their offsets (100, then
  // "more"), a click opens the log at the match with its line marked, and the hash says so.
  async log_search() {
    const log = colourfulLog(24_000, 150); // 160 needles
    const file = path.join(tmp, "big.log");
    writeFileSync(file, log.bytes);
    const id = cluster.submit(logWorkflow("ui-log-big", { train: `cat ${file}` }));
    await cluster.waitRun(id, /SUCCEEDED/);
    bigLog = { id, log };
    await open(`/runs/${id}/stages/train`);
    await logLine(log.lineOffsets(23_999));
    await page.locator('[data-testid="log-search-input"]').fill("WARN needle");
    await page.locator('[data-testid="log-search"]').click();
    const count = page.locator('[data-testid="log-match-count"]');
    await textMatches(count, /100\+ matching lines .* more after byte/);
    const matches = page.locator('[data-testid="log-match"]');
    check(await matches.count() === 100, `${await matches.count()} matches listed`);
    const offsets = await matches.evaluateAll((els) => els.map((e) => Number(e.dataset.offset)));
    check(JSON.stringify(offsets) === JSON.stringify(log.needles.slice(0, 100)), "match offsets differ from the log's");
    check((await matches.nth(2).textContent()).includes(log.needles[2].toLocaleString("en-US")), "offset not shown");
    await page.locator('[data-testid="log-more-matches"]').click();
    await textMatches(count, /^160 matching lines/);
    // The third needle is far before the tail window: a click reads the window there.
    await matches.nth(2).click();
    await page.waitForURL(new RegExp(`at=${log.needles[2]}&q=WARN\\+needle`), { timeout: T });
    const line = await logLine(log.needles[2]);
    check(/\bhl\b/.test(await line.getAttribute("class")), "the match's line is not marked");
    check((await line.textContent()) === "WARN needle 3 at step 449", `marked line: ${await line.textContent()}`);
    check(await inView(line), "the marked line is not scrolled into view");
    await shot("log-search");
  },

  // Start, End and a byte offset are one click each, in the 3 MB log; the hash keeps the
  // place, so opening the link again shows the same marked line.
  async log_jumps() {
    if (!bigLog) await logCases.log_search();
    const { id, log } = bigLog;
    await open(`/runs/${id}/stages/train`);
    await logLine(log.lineOffsets(23_999));
    await page.locator('[data-testid="log-start"]').click();
    const first = await logLine(0);
    check((await first.textContent()).includes("step 0 loss"), `first line: ${await first.textContent()}`);
    check(await inView(first), "the first line is not in view after Start");
    await page.locator('[data-testid="log-end"]').click();
    check(await inView(await logLine(log.lineOffsets(23_999))), "the last line is not in view after End");
    const target = log.lineOffsets(12_345);
    await page.locator('[data-testid="log-goto-input"]').fill((target + 5).toLocaleString("en-US")); // mid-line, with commas
    await page.locator('[data-testid="log-goto"]').click();
    const line = await logLine(target);
    await page.locator(`.ll.hl[data-offset="${target}"]`).waitFor({ timeout: T });
    check((await line.textContent()).includes("step 12345 loss"), `line at ${target}: ${await line.textContent()}`);
    // Shared link: a fresh page with the same hash shows the same place and stream.
    const url = page.url();
    check(url.includes(`at=${target + 5}`), `hash: ${url}`);
    await page.goto("about:blank");
    await page.goto(url);
    await page.locator(`.ll.hl[data-offset="${target}"]`).waitFor({ timeout: T });
    check(await inView(logPane().locator(`.ll[data-offset="${target}"]`)), "shared link: line not in view");
    await textMatches(page.locator('[data-testid="log-tab-stdout"]'), /^stdout · \d\.\d+ MiB$/);
    // Past the end: the end is shown, and the bar says why.
    await page.locator('[data-testid="log-goto-input"]').fill("999999999");
    await page.locator('[data-testid="log-goto"]').click();
    await textMatches(page.locator('[data-testid="log-state"]'), /byte 999,999,999 is past the end/);
    await logLine(log.lineOffsets(23_999));
  },

  // A failed stage opens stderr (its error) with its last lines; the tabs say how much each
  // stream holds; a finished stage with no output says "(no output)".
  async log_failed_stderr() {
    const id = cluster.submit(logWorkflow("ui-log-failed", {
      silent: "true",
      crash: ["for i in 1 2 3; do echo \"training step $i\"; done; " +
        "echo 'Traceback (most recent call last):' >&2; echo 'RuntimeError: CUDA out of memory' >&2; exit 1",
        "silent"],
    }));
    await cluster.waitRun(id, /FAILED/);
    await open(`/runs/${id}/stages/crash`);
    await textMatches(logPane(), /RuntimeError: CUDA out of memory/);
    check((await page.locator('[data-testid="log-tab-stderr"]').getAttribute("class")) === "on", "stderr is not the open tab");
    await textMatches(page.locator('[data-testid="log-tab-stderr"]'), /^stderr · 68 B$/);
    await textMatches(page.locator('[data-testid="log-tab-stdout"]'), /^stdout · 48 B$/);
    await page.locator('[data-testid="log-tab-stdout"]').click();
    await textMatches(logPane(), /training step 3/);
    await page.waitForURL(/stream=stdout/, { timeout: T });
    await open(`/runs/${id}/stages/silent`);
    await textMatches(logPane(), /^\(no output\)$/);
    await textMatches(page.locator('[data-testid="log-tab-stdout"]'), /^stdout · empty$/);
    await shot("log-failed");
  },
};
Object.assign(cases, logCases);

// --- Metrics across runs, and Compare of 100 runs -------------------------------------------
// One workflow of 20 params (3 set per run, 17 the same in all) and 30 metrics: finetune.loss
// and finetune.lr by step (10 steps), bench.acceptance and bench.m01..m27 once each. Submitted
// 100 times through the CLI, once for both cases.
const MANY_RUNS = 100;
let manyRunIds = null;

function manyWorkflow() {
  const fixed = Array.from({ length: 17 }, (_, i) => `p${String(i + 1).padStart(2, "0")}: "v${i + 1}"`);
  const script = [
    "seed=$1; lr=$2",
    "i=0",
    "while [ $i -lt 10 ]; do",
    "  i=$((i+1))",
    `  echo "{\\"metric\\": {\\"name\\": \\"loss\\", \\"value\\": $(( (seed + 10) * 100 / i )), \\"step\\": $i}}" >> "$LONGHAUL_EVENTS"`,
    `  echo "{\\"metric\\": {\\"name\\": \\"lr\\", \\"value\\": $lr, \\"step\\": $i}}" >> "$LONGHAUL_EVENTS"`,
    "done",
  ].join("\n");
  const bench = [
    "seed=$1",
    `printf '{"metric": {"name": "acceptance", "value": 0.%02d}}\\n' "$seed" >> "$LONGHAUL_EVENTS"`,
    "k=1",
    "while [ $k -le 27 ]; do",
    `  printf '{"metric": {"name": "m%02d", "value": %d}}\\n' "$k" "$((seed * k))" >> "$LONGHAUL_EVENTS"`,
    "  k=$((k+1))",
    "done",
  ].join("\n");
  const file = path.join(tmp, "many.yaml");
  writeFileSync(file, `name: ui-many
params: {seed: "0", lr: "0.1", engine: "a", ${fixed.join(", ")}}
defaults: {resources: {cpus: 0.01}}
stages:
  finetune:
    run: [/bin/sh, -c, ${JSON.stringify(script)}, sh, "\${params.seed}", "\${params.lr}"]
  bench:
    needs: [finetune]
    run: [/bin/sh, -c, ${JSON.stringify(bench)}, sh, "\${params.seed}"]
`);
  return file;
}

/** The 100 runs of ui-many (seed = 0..99), made once and waited for. */
async function manyRuns() {
  if (manyRunIds) return manyRunIds;
  const file = manyWorkflow();
  const ids = [];
  for (let seed = 0; seed < MANY_RUNS; seed++) {
    ids.push(cluster.submit(file, ["--set", `seed=${seed}`, "--set", `lr=0.${seed % 7 + 1}`,
      "--set", `engine=${seed % 2 ? "b" : "a"}`]));
  }
  for (const id of ids) await cluster.waitRun(id, /SUCCEEDED|FAILED|CANCELLED/, 300_000);
  for (const id of [ids[0], ids[ids.length - 1]]) {
    check(/SUCCEEDED/.test((await cluster.api(`/runs/${id}`)).status), `run ${id} of ui-many did not succeed`);
  }
  manyRunIds = ids;
  return ids;
}

const metricRunsCases = {
  // Three runs' finetune.loss on one chart: a line per run, each legend entry the run and the
  // params that differ between the three; hide one, log scale, hover; then the acceptance of
  // the workflow's last 50 runs, one value per run.
  async metric_series() {
    const ids = await manyRuns();
    const three = ids.slice(-4, -1); // seeds 96..98: lr 0.6, 0.7, 0.1; engine a, b, a
    await open("/runs?workflow=ui-many&limit=10");
    const table = page.locator('[data-testid="runs-table"]');
    for (const id of three) await table.locator(`tr[data-run="${id}"] input[type="checkbox"]`).check({ timeout: T });
    await page.locator('[data-testid="chart-selected"]').click();
    await page.waitForURL(new RegExp(`#/metrics\\?runs=${three.join(",")}`), { timeout: T });
    await page.locator('[data-testid="series-metric"]').fill("finetune.loss");
    await page.locator('[data-testid="series-apply"]').click();
    const legend = page.locator('[data-testid="series-legend"]');
    await legend.locator("li").nth(2).waitFor({ timeout: T });
    check(await legend.locator("li").count() === 3, "not one legend entry per run");
    for (const id of three) {
      const seed = ids.indexOf(id);
      const li = legend.locator(`li[data-run="${id}"]`);
      await textMatches(li.locator(".label"),
        new RegExp(`^run ${id} · engine=${seed % 2 ? "b" : "a"}, lr=0\\.${seed % 7 + 1}, seed=${seed}$`));
      check(await li.getAttribute("data-points") === "10", `run ${id}: not 10 points drawn`);
    }
    check(await page.locator('[data-testid="step-chart"]').getAttribute("data-series") === "3", "not 3 series");
    // The plot's area (uPlot's .u-over): its left edge is step 1.
    const box = await page.locator('[data-testid="step-chart"] .u-over').boundingBox();
    await page.mouse.move(box.x + 20, box.y + 20);
    await page.mouse.move(box.x + 1, box.y + 10, { steps: 4 });
    await textMatches(page.locator('[data-testid="step-chart-hover"]'), /^run \d+ · .* · step 1 · \d+/);
    await shot("metric-series");
    await legend.locator(`li[data-run="${three[0]}"] button`).click();
    await legend.locator(`li[data-run="${three[0]}"][data-shown="false"]`).waitFor({ timeout: T });
    await page.locator('[data-testid="series-log"]').check();
    await page.waitForURL(/[?&]log=1/, { timeout: T });
    await page.locator('[data-testid="step-chart"] canvas').waitFor({ timeout: T });
    // Smoothed (an average debiased at its start): the hover gives the smoothed value and the
    // value itself; the weight is in the URL.
    await open(`/metrics?runs=${three.join(",")}&metric=finetune.loss&smooth=0.5`);
    await textMatches(page.locator('[data-testid="series-smooth-value"]'), /^0\.50$/);
    const sbox = await page.locator('[data-testid="step-chart"] .u-over').boundingBox();
    await page.mouse.move(sbox.x + sbox.width / 2, sbox.y + 20);
    await page.mouse.move(sbox.x + sbox.width - 1, sbox.y + 10, { steps: 4 });
    await textMatches(page.locator('[data-testid="step-chart-hover"]'),
      /^run \d+ · .* · step 10 · [\d.,]+ smoothed \(value [\d,]+\)$/);
    // A run's page leads to its workflow's runs on this page.
    await open(`/runs/${three[0]}`);
    const runLink = page.locator('[data-testid="run-metrics-link"]');
    await runLink.waitFor({ timeout: T });
    check(/#\/metrics\?workflow=ui-many$/.test(await runLink.getAttribute("href")),
      `the run's metrics link: ${await runLink.getAttribute("href")}`);
    // Over runs: the workflow's last 50, the greatest acceptance of each.
    await open("/metrics?workflow=ui-many&last=50&metric=bench.acceptance&value=max");
    await textMatches(page.locator('[data-testid="over-runs-note"]'), /50 of 50 runs have a value/);
    await textMatches(page.locator(".empty-note"), /at most one value of this metric/);
    const overArea = page.locator('[data-testid="over-runs-chart"] .u-over');
    await overArea.scrollIntoViewIfNeeded();
    const ob = await overArea.boundingBox();
    await page.mouse.move(ob.x + ob.width - 20, ob.y + 10);
    await page.mouse.move(ob.x + ob.width - 1, ob.y + 8, { steps: 3 });
    await textMatches(page.locator('[data-testid="over-runs-chart-hover"]'),
      new RegExp(`^run ${ids[ids.length - 1]} · .*seed=99 · max 0\\.99$`));
    await shot("metric-over-runs");
  },

  // Compare of 100 runs: a row per run, the 17 params equal in all on one line, the 3 that
  // differ as columns, 30 metric columns with the greatest acceptance marked (seed 99's). The
  // time from the last run's data to the table's first rows on screen is printed.
  async compare_hundred() {
    const ids = await manyRuns();
    await open(`/compare?runs=${ids.join(",")}`);
    const wide = page.locator('[data-testid="compare-wide"]');
    await wide.locator("tbody tr[data-run]").first().waitFor({ timeout: T });
    // The page notes the time in the frame after the rows reached the screen.
    await page.locator('[data-testid="compare-wide"][data-drawn-at]').waitFor({ timeout: T });
    const t = await page.evaluate(() => {
      const runs = performance.getEntriesByType("resource").filter((e) => /\/api\/v1\/runs\/\d+\?attempts=1$/.test(e.name));
      const data = Math.max(...runs.map((e) => e.responseEnd));
      return { data, drawn: Number(document.querySelector('[data-testid="compare-wide"]').dataset.drawnAt), n: runs.length };
    });
    check(t.n >= MANY_RUNS && t.drawn > 0, `no timing (${JSON.stringify(t)})`);
    const ms = t.drawn - t.data;
    console.log(`  compare of ${MANY_RUNS} runs (30 metrics, 20 params): the table drawn ${ms.toFixed(0)} ms after the last run's data`);
    check(ms <= 1000, `compare of ${MANY_RUNS} runs drawn ${ms.toFixed(0)} ms after its data (target 1 s)`);
    check(await wide.getAttribute("data-runs") === String(MANY_RUNS), "not 100 runs");
    check(await wide.getAttribute("data-metrics") === "30", `not 30 metrics: ${await wide.getAttribute("data-metrics")}`);
    check(await wide.getAttribute("data-params") === "3", "not the 3 differing params");
    const same = page.locator('[data-testid="params-same"]');
    await textMatches(same, /^same in all: p01=v1, p02=v2, .*p17=v17$/);
    check(await same.locator("[data-param]").count() === 17, "not 17 params the same in all");
    check(await wide.locator("tbody tr[data-run]").count() < MANY_RUNS, "every row is in the page (not virtualised)");
    await shot("compare-hundred");
    await page.locator(".compare-wide").evaluate((el) => { el.scrollTop = el.scrollHeight; });
    const lastRow = wide.locator(`tr[data-run="${ids[ids.length - 1]}"]`);
    await lastRow.waitFor({ timeout: T });
    const col = await wide.locator("thead th").evaluateAll((ths) =>
      ths.findIndex((th) => th.dataset.metric === "bench.acceptance"));
    check(col > 0, "no bench.acceptance column");
    const cell = lastRow.locator("th, td").nth(col);
    check(await cell.getAttribute("data-extreme") === "max", "seed 99's acceptance is not marked the greatest");
    await textMatches(cell, /^0\.99$/);
    const firstCell = wide.locator(`tr[data-run="${ids[0]}"]`);
    await page.locator(".compare-wide").evaluate((el) => { el.scrollTop = 0; });
    await textMatches(firstCell.locator("th, td").nth(col), /^0(\.0+)?$/);
    check(await firstCell.locator("th, td").nth(col).getAttribute("data-extreme") === "min", "seed 0's acceptance is not the least");
  },
};
Object.assign(cases, metricRunsCases);
// The sweep and lineage pages' cases (docs/ui.md, "A sweep's table and chart", "A stage's
// lineage").
// Six synthetic trainers under `early_stop: asha` (rungs 1 and 2, eta 2), as in
// tests/integration/sweep_test.cc: each takes every CPU of the agent, so they run one after
// another in file order and the verdicts are known: b and e stop at rung 1, d at rung 2; a, c
// and f run their 8 steps.
const SWEEP_TRAINER = [
  "case $0 in",
  "  a) curve='1.0 0.8 0.5';; b) curve='2.0 1.9 1.8';; c) curve='0.9 0.7 0.4';;",
  "  d) curve='0.95 0.9 0.85';; e) curve='3.0 2.9 2.8';; f) curve='0.5 0.75 0.3';;",
  "esac",
  "step=0",
  "for v in $curve; do",
  "  step=$((step + 1))",
  `  echo "{\\"metric\\": {\\"name\\": \\"loss\\", \\"value\\": $v, \\"step\\": $step}}" >> "$LONGHAUL_EVENTS"`,
  "  sleep 0.1",
  "done",
  "while [ $step -lt 8 ]; do",
  "  step=$((step + 1))",
  `  echo "{\\"metric\\": {\\"name\\": \\"loss\\", \\"value\\": $v, \\"step\\": $step}}" >> "$LONGHAUL_EVENTS"`,
  "  sleep 0.1",
  "done",
].join("\n");

async function sweepWorkflow() {
  const { agents } = await cluster.api("/agents");
  const cpus = agents.find((a) => a.id === cluster.agentId).total.cpus;
  const p = path.join(tmp, "sweep-asha.yaml");
  writeFileSync(p, `name: ui-sweep
stages:
  train:
    foreach: [a, b, c, d, e, f]
    resources: {cpus: ${cpus}, memory: 32M}
    grace: 2s
    early_stop: {metric: loss, mode: min, rule: asha, rungs: [1, 2], eta: 2}
    run: [/bin/sh, -c, ${JSON.stringify(SWEEP_TRAINER)}, "\${item}"]
  report:
    needs: [train]
    run: [/bin/sh, -c, "echo report"]
`);
  return p;
}

const sweepCases = {
  // The run page links to the sweep; its table has one row per item with its state (the stop
  // reason on hover), sorts by a column, and its chart marks each stop at its rung.
  async sweep_view() {
    const id = cluster.submit(await sweepWorkflow());
    await cluster.waitRun(id, /SUCCEEDED|FAILED|CANCELLED/);
    await open(`/runs/${id}`);
    // The graph's sweep node links to it too; so does an item's page.
    await page.locator('svg.dag a[data-sweep-link="train"]').waitFor({ timeout: T });
    await open(`/runs/${id}/stages/train-d`);
    await textMatches(page.locator('[data-testid="item-sweep-link"]'), /sweep train \(6 items\)/);
    await open(`/runs/${id}`);
    await page.locator('[data-testid="sweep-links"] a[data-sweep="train"]').click();
    await page.waitForURL(new RegExp(`#/runs/${id}/sweeps/train$`), { timeout: T });
    const table = page.locator('[data-testid="sweep-table"]');
    await table.locator('tr[data-item="train-f"]').waitFor({ timeout: T });
    const states = { a: "succeeded", b: "stopped early", c: "succeeded", d: "stopped early",
      e: "stopped early", f: "succeeded" };
    const rows = await table.locator("tbody tr").evaluateAll((rs) => rs.map((r) => [r.dataset.item, r.dataset.status]));
    check(JSON.stringify(rows) === JSON.stringify(Object.entries(states).map(([k, v]) => [`train-${k}`, v])),
      `rows: ${JSON.stringify(rows)}`);
    const reason = await table.locator('tr[data-item="train-d"] td[data-col="status"]').getAttribute("title");
    check(/^rung 2 \(step 2\): loss 0\.9 is not among the best 2 of 3 items there/.test(reason ?? ""), `reason: ${reason}`);
    await textMatches(table.locator('tr[data-item="train-d"] td[data-col="best"]'), /^0\.9$/);
    await textMatches(table.locator('tr[data-item="train-a"] td[data-col="steps"]'), /^8$/);
    await textMatches(page.locator('[data-testid="sweep-summary"]'), /6 items; loss, min is best; early_stop: asha on loss at steps 1, 2; 3 stopped early/);

    // Sorted by best: the finishers by their best loss, then the stopped ones; in the URL.
    await page.locator('th button[data-sort="best"]').click();
    const byBest = "train-f,train-c,train-a,train-d,train-b,train-e";
    let order = "";
    await waitFor(async () => {
      order = (await table.locator("tbody tr").evaluateAll((rs) => rs.map((r) => r.dataset.item))).join();
      return order === byBest;
    }, T, `sorted by best: ${order}`);
    await page.waitForURL(/sort=best/, { timeout: T });

    // The chart: a vertical line per rung, each stop marked on its item's series at its rung.
    const chart = page.locator('[data-testid="sweep-chart"]');
    for (const [item, step] of [["train-b", 1], ["train-e", 1], ["train-d", 2]]) {
      const mark = chart.locator(`g[data-stop="${item}"]`);
      await mark.waitFor({ timeout: T });
      check(await mark.getAttribute("data-step") === String(step), `${item} marked at step ${await mark.getAttribute("data-step")}`);
      const m = await mark.boundingBox();
      const r = await chart.locator(`g[data-rung="${step}"] line`).boundingBox();
      check(Math.abs(m.x + m.width / 2 - (r.x + r.width / 2)) < 1.5,
        `${item}'s mark at x ${m.x + m.width / 2}, rung ${step} at ${r.x + r.width / 2}`);
      check(await chart.locator(`path[data-series="${item}"][data-state="stopped"]`).count() === 1, `${item} is not drawn as stopped`);
    }
    for (const item of ["train-a", "train-c", "train-f"]) {
      check(await chart.locator(`g[data-stop="${item}"]`).count() === 0, `${item} marked as stopped`);
      check(await chart.locator(`path[data-series="${item}"][data-state="survivor"]`).count() === 1, `${item} is not drawn as a survivor`);
    }
    await shot("sweep");

    // `longhaul show --sweep` prints the same answer (one implementation, on the server).
    const cli = JSON.parse(cluster.cli(["--json", "show", String(id), "--sweep", "train"]));
    check(cli.items.map((i) => `${i.stage}:${i.status}`).join() ===
      Object.entries(states).map(([k, v]) => `train-${k}:${v.replace(" ", "_")}`).join(),
      `the CLI's items: ${JSON.stringify(cli.items.map((i) => i.status))}`);
    check(cli.items.find((i) => i.stage === "train-d").stopped_at_step === 2, "the CLI's stop step of train-d");
  },

  // A pivot reuses prep: the first run's prep was used by its greet and reused by the pivot,
  // which made its greet from it; the pivot's greet's lineage says its input came from the
  // first run.
  async lineage_view() {
    const first = cluster.submit(wf.pivotable, ["--no-cache"]);
    await cluster.waitRun(first, /SUCCEEDED/);
    const piv = await cluster.api(`/runs/${first}/pivot`, { params: { greeting: "hej" } });
    const second = Number(piv.run.id);
    await cluster.waitRun(second, /SUCCEEDED/);
    await open(`/runs/${first}/stages/prep`);
    await page.locator('[data-testid="lineage-link"]').click();
    await page.waitForURL(new RegExp(`#/runs/${first}/lineage/prep$`), { timeout: T });
    const made = page.locator('[data-testid="lineage-made-by"]');
    await made.waitFor({ timeout: T });
    check(await made.getAttribute("data-how") === "fresh" && await made.getAttribute("data-run") === String(first),
      `made by: ${await made.textContent()}`);
    const used = page.locator('[data-testid="lineage-used-by"]');
    await used.locator(`li[data-use="${first}/greet"]`).waitFor({ timeout: T });
    const reuse = used.locator(`li[data-use="${second}/prep"]`);
    await reuse.waitFor({ timeout: T });
    check(await reuse.getAttribute("data-how") === "reused this result", `how: ${await reuse.getAttribute("data-how")}`);
    const greet = reuse.locator(`li[data-produced="${second}/greet"]`);
    await greet.waitFor({ timeout: T });
    await shot("lineage");
    await greet.locator(`a[data-lineage-link="${second}/greet"]`).click();
    await page.waitForURL(new RegExp(`#/runs/${second}/lineage/greet$`), { timeout: T });
    const input = page.locator('[data-testid="lineage-inputs"] li[data-input="prep"]');
    await input.waitFor({ timeout: T });
    check(await input.getAttribute("data-how") === "reused" && await input.getAttribute("data-run") === String(first),
      `greet's input: ${await input.textContent()}`);
  },
};
Object.assign(cases, sweepCases);
// ---- New run: submitting from the UI (a param form, the server's validation errors, a
// read-only token) ----

const submitYaml = (name, extra = "") => `name: ${name}
params:
  steps: 2
  greeting: hello
  loud: false
stages:
  prep:
    run: [/bin/sh, -c, "echo preparing"]
  greet:
    needs: [prep]${extra}
    run: [/bin/sh, -c, "echo \${params.greeting} x \${params.steps} loud=\${params.loud}"]
`;
// A longhauld with tokens and no agent: the page carries operator otto's token, or viewer
// vera's to be refused.
const submitTokens = { otto: `lh_${randomBytes(32).toString("hex")}`, vera: `lh_${randomBytes(32).toString("hex")}` };
let submitTokenCluster = null;
async function submitTokenNode(who) {
  if (!submitTokenCluster) {
    const sha = (t) => createHash("sha256").update(t).digest("hex");
    const tokens = path.join(tmp, "submit-tokens");
    writeFileSync(tokens, `operator otto sha256:${sha(submitTokens.otto)}\nviewer vera sha256:${sha(submitTokens.vera)}\n`);
    submitTokenCluster = new Cluster({
      bin: BIN, state: path.join(tmp, "submit-token-state"), uiDir: process.env.LONGHAUL_UI_DIR,
      agent: false, daemonArgs: ["--tokens", tokens], token: submitTokens.otto,
    });
    await submitTokenCluster.start();
  }
  await page.context().clearCookies();
  await page.context().addCookies([{
    name: "longhaul_token", value: submitTokens[who], url: submitTokenCluster.httpUrl,
    httpOnly: true, sameSite: "Strict",
  }]);
  return submitTokenCluster;
}

const submitCases = {
  // Pasted YAML: its declared params become a form (defaults shown, kinds checked), the plan
  // follows the form, Submit lands on the new run with exactly those params; the workflow is
  // then offered as one longhauld has seen, with its text as submitted.
  async submit_param_form() {
    await open("/new");
    const yaml = submitYaml("ui-submit-form");
    await page.locator('[data-testid="workflow-yaml"]').fill(yaml);
    const form = page.locator('[data-testid="param-form"]');
    const steps = form.locator('input[data-param="steps"]');
    await steps.waitFor({ timeout: T });
    check(await steps.inputValue() === "2", "the default of steps is not shown");
    await textMatches(form.locator("tr", { has: page.locator('input[data-param="steps"]') }),
      /integer; default 2 \(line 3\)/);
    check(await form.locator('select[data-param="loud"]').count() === 1, "a true/false param is not a choice");
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="greet"]'), /run/);
    // A value that is not of the param's kind: said beside it; no plan, no Submit.
    await steps.fill("two");
    await textMatches(page.locator('[data-testid="param-error-steps"]'), /'two' is not an integer/);
    await textMatches(page.locator('[data-testid="plan-blocked"]'), /Fix the params/);
    check(await page.locator('[data-testid="submit-run"]').isDisabled(), "Submit is enabled with an invalid param");
    await steps.fill("3");
    await form.locator('input[data-param="greeting"]').fill("bonjour");
    await form.locator('select[data-param="loud"]').selectOption("true");
    await page.locator('[data-testid="param-error-steps"]').waitFor({ state: "detached", timeout: T });
    await textMatches(page.locator('[data-testid="plan-summary"]'), /2 to run, 0 reused/);
    await page.locator('[data-testid="submit-run"]:not([disabled])').waitFor({ timeout: T });
    await shot("new-run");
    await page.locator('[data-testid="submit-run"]').click();
    await page.waitForURL((u) => /#\/runs\/\d+$/.test(u.hash), { timeout: T });
    const id = Number(new URL(page.url()).hash.split("/").pop());
    await cluster.waitRun(id, /SUCCEEDED/);
    const run = await cluster.api(`/runs/${id}`);
    check(run.workflow_name === "ui-submit-form", `run ${id} is of ${run.workflow_name}`);
    const params = Object.fromEntries(Object.entries(run.params).sort(([a], [b]) => a.localeCompare(b)));
    check(JSON.stringify(params) === JSON.stringify({ greeting: "bonjour", loud: "true", steps: "3" }),
      `run ${id}'s params: ${JSON.stringify(run.params)}`);

    // The workflow is now one longhauld has seen: choosing it brings its text back, and the
    // plan reuses what that run did with the defaults' stage (prep).
    await open("/new");
    const choice = page.locator('[data-testid="workflow-choice"]');
    await choice.locator(`option[value="${id}"]`).waitFor({ state: "attached", timeout: T });
    await choice.selectOption(String(id));
    await waitFor(async () => (await page.locator('[data-testid="workflow-yaml"]').inputValue()) === yaml,
      T, "the seen workflow's text did not load");
    await textMatches(page.locator('[data-testid="plan"] tr[data-stage="prep"]'), new RegExp(`reuse[\\s\\S]*run ${id}`));
  },

  // A workflow the server refuses: each problem is listed beside the YAML with the
  // file:line:col it carries; a click puts the caret there. Nothing can be submitted.
  async submit_validation_error() {
    await open("/new");
    await page.locator('[data-testid="workflow-path"]').fill("broken.yaml");
    const bad = submitYaml("ui-submit-broken", "\n    retyr: {limit: 1}");
    await page.locator('[data-testid="workflow-yaml"]').fill(bad);
    const errors = page.locator('[data-testid="submit-errors"]');
    await textMatches(errors, /broken\.yaml:11:5: unknown key 'retyr' in stage 'greet'/);
    check(await page.locator('[data-testid="submit-run"]').isDisabled(), "Submit is enabled for a broken workflow");
    // Beside the YAML, not under the page.
    const ed = await page.locator('[data-testid="workflow-yaml"]').boundingBox();
    const er = await errors.boundingBox();
    check(er.x >= ed.x + ed.width - 1 && er.y < ed.y + ed.height, `the errors are not beside the YAML (${JSON.stringify([ed, er])})`);
    await errors.locator('[data-testid="error-location"]').first().click();
    const caret = await page.locator('[data-testid="workflow-yaml"]').evaluate((t) => t.selectionStart);
    const want = bad.split("\n").slice(0, 10).join("\n").length + 1 + 4;
    check(caret === want, `the caret is at ${caret}, not at line 11 column 5 (${want})`);
    await shot("new-run-error");
    // Fixed: the problems go and the plan comes.
    await page.locator('[data-testid="workflow-yaml"]').fill(bad.replace("retyr", "retry"));
    await errors.waitFor({ state: "detached", timeout: T });
    await textMatches(page.locator('[data-testid="plan-summary"]'), /to run/);
  },

  // A viewer's token: the page says why it is off, and nothing can be edited or submitted.
  async submit_read_only() {
    const c = await submitTokenNode("vera");
    await openOn(c, "/new");
    await textMatches(page.locator('[data-testid="submit-refused"]'),
      /Your token "vera" has the viewer role; submitting a run \(and planning one\) needs the operator role/);
    check(await page.locator('[data-testid="workflow-yaml"]').isDisabled(), "the YAML can be edited");
    check(await page.locator('[data-testid="submit-run"]').isDisabled(), "Submit is enabled for a viewer");
    await shot("new-run-read-only");
    // An operator's token: the same page works.
    await submitTokenNode("otto");
    await openOn(c, "/new");
    await page.reload(); // the same URL: a new page, which asks who it is again
    await page.locator('[data-testid="workflow-yaml"]:not([disabled])').waitFor({ timeout: T });
    check(await page.locator('[data-testid="submit-refused"]').count() === 0, "an operator is refused");
    await page.locator('[data-testid="workflow-yaml"]').fill(submitYaml("ui-submit-otto"));
    await textMatches(page.locator('[data-testid="plan-summary"]'), /2 to run/);
    await page.context().clearCookies();
  },
};
Object.assign(cases, submitCases);

// ---- Who submitted a run, its priority class and budget (docs/scheduling.md) ----
const schedulingCases = {
  // A low-class run with a budget: the runs table names who submitted it and its class, and
  // its page puts the budget beside the GPU-hours it used.
  async priority_and_budget() {
    const id = cluster.submit(wf.quick, ["--set", "n=41", "--priority", "low", "--budget", "5"]);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs?id=${id}`);
    const row = page.locator(`[data-testid="runs-table"] tr[data-run="${id}"]`);
    await textMatches(row.locator('[data-testid="run-by"]'), /^local\s*low$/);
    await open(`/runs/${id}`);
    await textMatches(page.locator('[data-testid="run-budget"]'), /of 5(\.0+)? budget$/);
    await textMatches(page.locator('[data-testid="run-submitter"]'), /local\s*low/);
  },
};
Object.assign(cases, schedulingCases);

// ---- Tags: names for stage results that later workflows read (docs/workflow-format.md) ----
const tagCases = {
  // The runs list shows a tagged run's tag as a chip, its page the tag with its stage; a run
  // that read the tag says where its value came from, linking to the tagged run.
  async run_tags() {
    const tagged = cluster.submit(wf.quick, ["--set", "n=77"]);
    await cluster.waitRun(tagged, /SUCCEEDED/);
    cluster.cli(["tag", String(tagged), "hello", `ui-tag-${tagged}`]);
    const reader = path.join(tmp, "tag-reader.yaml");
    writeFileSync(reader, `name: ui-tag-reader
stages:
  read:
    run: [/bin/sh, -c, "echo from run \${tags.ui-tag-${tagged}.run}"]
`);
    const id = cluster.submit(reader);
    await cluster.waitRun(id, /SUCCEEDED/);
    await open(`/runs?id=${tagged}`);
    await textMatches(page.locator(`[data-testid="runs-table"] tr[data-run="${tagged}"] [data-testid="run-tag-chip"]`),
      new RegExp(`^ui-tag-${tagged}$`));
    await open(`/runs/${tagged}`);
    await textMatches(page.locator('[data-testid="run-tags"]'), new RegExp(`ui-tag-${tagged} \\(hello\\)`));
    await open(`/runs/${id}`);
    const from = page.locator('[data-testid="run-tag-sources"] a');
    await textMatches(from, new RegExp(`tags\\.ui-tag-${tagged} -> run ${tagged} hello`));
    check((await from.getAttribute("href")).endsWith(`/runs/${tagged}`), "no link to the tagged run");
  },
};
Object.assign(cases, tagCases);

// ---- The shared-cluster controls: a run's class, an agent's drain, budgets (docs/ui.md) ----
/** A stage's command (YAML, quoted) that runs until `release` exists. */
const opsHoldUntil = (release) => JSON.stringify(`while [ ! -e ${release} ]; do sleep 0.05; done`);
const opsCases = {
  // On fake gpunode's two GPUs a blocker holds both; a normal and a low run wait for one. The
  // low run's class changed to high on its page (select, confirm) is shown there and in the
  // API, and the normal run's waiting stage then names it ahead of it in the queue.
  async ops_run_class() {
    const c = await gpuNode();
    // The blocker needs both GPUs: bring back GPU 1 if gpu_quarantine's XID left it out of
    // service (the fault gone first, as an admin would after a reset).
    fakeGpus[1].xids = [];
    writeNvmlState();
    const g1 = (await c.api("/agents")).agents.find((a) => a.id === "gpunode").gpus[1];
    if (g1.health !== "ok") await c.api("/agents/gpunode/gpus/1/undrain", { reason: "reset after its XID" });
    const release = path.join(tmp, "ops-class-release");
    const blockerFile = path.join(tmp, "ops-class-blocker.yaml");
    writeFileSync(blockerFile, `name: ui-ops-blocker
defaults: {preemptible: false}
stages:
  hold:
    resources: {cpus: 0.5, gpus: 2}
    run: [/bin/sh, -c, ${opsHoldUntil(release)}]
`);
    const waiterFile = path.join(tmp, "ops-class-waiter.yaml");
    writeFileSync(waiterFile, `name: ui-ops-waiter
params: {n: 0}
stages:
  train:
    resources: {cpus: 0.5, gpus: 1}
    run: [/bin/sh, -c, "echo \${params.n}"]
`);
    const blocker = c.submit(blockerFile);
    const ids = [blocker];
    try {
      await c.waitRun(blocker, /RUNNING/);
      const normal = c.submit(waiterFile, ["--set", "n=1"]);
      ids.push(normal);
      const low = c.submit(waiterFile, ["--set", "n=2", "--priority", "low"]);
      ids.push(low);
      await openOn(c, `/runs/${low}`);
      await textMatches(page.locator('[data-testid="run-class-value"]'), /^low$/);
      await page.locator('[data-testid="run-class-change"]').click();
      await page.locator('[data-testid="run-class-select"]').selectOption("high");
      await shot("run-class-change");
      await page.locator('[data-testid="run-class-confirm"]').click();
      await textMatches(page.locator('[data-testid="run-class-value"]'), /^high$/);
      check((await c.api(`/runs/${low}`)).priority === "high", `run ${low} is not high in the API`);
      await openOn(c, `/runs/${normal}`);
      await textMatches(page.locator('[data-testid="stage-table"] tr[data-stage="train"] [data-col="message"]'),
        new RegExp(`in line for 1 GPUs; ahead: run ${low} \\(high\\)`));
    } finally {
      writeFileSync(release, "");
      for (const id of ids.slice(1)) await c.cancel(id).catch(() => {});
      await c.waitRun(blocker, /SUCCEEDED|CANCELLED|FAILED/);
    }
  },

  // Operator otto may change a run's class, but not to high (longhauld's default rule: admins):
  // the refusal is longhauld's 403 message beside the control, and nothing changes. Otto has
  // no budget "raise" (admins); viewer vera sees the class but no control to change it.
  async ops_class_refused() {
    const c = await submitTokenNode("otto");
    const file = path.join(tmp, "ops-refused.yaml");
    writeFileSync(file, submitYaml("ui-ops-refused"));
    const id = c.submit(file); // no agent: it waits
    await openOn(c, `/runs/${id}`);
    await page.locator('[data-testid="run-class-change"]').click();
    await page.locator('[data-testid="run-class-select"]').selectOption("high");
    await page.locator('[data-testid="run-class-confirm"]').click();
    const err = page.locator('[data-testid="run-class-error"]');
    await textMatches(err, /priority class 'high' is not allowed for otto \(operator\)/);
    check(await err.isVisible(), "the refusal is not visible");
    await shot("run-class-refused");
    check((await c.api(`/runs/${id}`)).priority === "normal", "a refused change changed the class");
    await textMatches(page.locator('[data-testid="run-class-value"]'), /^normal$/);
    check(await page.locator('[data-testid="run-budget-raise"]').count() === 0, "an operator is offered a budget raise");
    // Low is open to operators: the same control changes it.
    await page.locator('[data-testid="run-class-select"]').selectOption("low");
    await page.locator('[data-testid="run-class-confirm"]').click();
    await textMatches(page.locator('[data-testid="run-class-value"]'), /^low$/);
    await submitTokenNode("vera");
    await page.reload();
    await textMatches(page.locator('[data-testid="run-class-value"]'), /^low$/);
    await page.locator('[data-testid="run-class"][data-role="viewer"]').waitFor({ timeout: T });
    check(await page.locator('[data-testid="run-class-change"]').count() === 0, "a viewer is offered a class change");
    await openOn(c, "/budgets");
    await textMatches(page.locator('[data-testid="budget-read-only"]'), /needs the admin role \(your token "vera" has the viewer role\)/);
    check(await page.locator('[data-testid="budget-form"]').count() === 0, "a viewer is offered the budget form");
    await c.cancel(id);
    await page.context().clearCookies();
  },

  // Drain gpunode two hours ahead from its card (time, reason): the preview and then the card
  // say what it means and who set it, the API has the time typed; Undrain ends it. A drain
  // with no time is from now.
  async ops_agent_drain() {
    const c = await gpuNode();
    await openOn(c, "/agents");
    const card = page.locator('[data-agent="gpunode"]');
    const target = Math.floor((Date.now() + 2 * 3600_000) / 60_000) * 60_000;
    const value = await page.evaluate((ms) => {
      const d = new Date(ms);
      const p = (n) => String(n).padStart(2, "0");
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    }, target);
    await card.locator('[data-testid="agent-drain-open"]').click();
    await card.locator('[data-testid="agent-drain-at"]').fill(value);
    await card.locator('[data-testid="agent-drain-reason"]').fill("bios update");
    await textMatches(card.locator('[data-testid="agent-drain-preview"]'), /^from .*: no new attempt that could not finish by then/);
    await shot("agent-drain-form");
    await card.locator('[data-testid="agent-drain-confirm"]').click();
    try {
      await textMatches(card.locator('[data-testid="agent-drain"]'), /drains at [\s\S]*\(bios update\) · by ada/);
      await textMatches(card.locator('[data-testid="agent-drain-meaning"]'), /no new attempt that could not finish by then/);
      const d = (await c.api("/agents")).agents.find((a) => a.id === "gpunode").drain;
      check(Number(d.at_ms) === target, `the drain is at ${d.at_ms}, not ${target}`);
      await shot("agent-drained");
      await card.locator('[data-testid="agent-undrain"]').click();
      await card.locator('[data-testid="agent-drain"]').waitFor({ state: "detached", timeout: T });
      check(!(await c.api("/agents")).agents.find((a) => a.id === "gpunode").drain, "still drained after Undrain");
      // No time: now.
      await card.locator('[data-testid="agent-drain-open"]').click();
      await textMatches(card.locator('[data-testid="agent-drain-preview"]'), /^now: no new attempts start here/);
      await card.locator('[data-testid="agent-drain-reason"]').fill("reboot");
      await card.locator('[data-testid="agent-drain-confirm"]').click();
      await textMatches(card.locator('[data-testid="agent-drain"]'), /drained since [\s\S]*\(reboot\)/);
      await card.locator('[data-testid="agent-undrain"]').click();
      await card.locator('[data-testid="agent-drain"]').waitFor({ state: "detached", timeout: T });
    } finally {
      await c.api("/agents/gpunode/undrain", {}).catch(() => {});
    }
  },

  // An admin raises a live run's budget from its page: the budget line says the new limit,
  // and so does the API.
  async ops_run_budget() {
    const release = path.join(tmp, "ops-budget-release");
    const file = path.join(tmp, "ops-budget.yaml");
    writeFileSync(file, `name: ui-ops-run-budget
stages:
  hold:
    run: [/bin/sh, -c, ${opsHoldUntil(release)}]
`);
    const id = cluster.submit(file, ["--budget", "5"]);
    try {
      await cluster.waitRun(id, /RUNNING/);
      await open(`/runs/${id}`);
      await textMatches(page.locator('[data-testid="run-budget"]'), /of 5(\.0+)? budget$/);
      await page.locator('[data-testid="run-budget-raise"]').click();
      const input = page.locator('[data-testid="run-budget-input"]');
      await input.fill("-2");
      check(await page.locator('[data-testid="run-budget-confirm"]').isDisabled(), "a negative budget can be set");
      await input.fill("12");
      await page.locator('[data-testid="run-budget-confirm"]').click();
      await textMatches(page.locator('[data-testid="run-budget"]'), /of 12(\.0+)? budget$/);
      const run = await cluster.api(`/runs/${id}`);
      check(run.budget.gpu_hours === 12 && run.budget.raised_by === "local", `budget: ${JSON.stringify(run.budget)}`);
    } finally {
      writeFileSync(release, "");
    }
    await cluster.waitRun(id, /SUCCEEDED/);
    await page.locator('[data-testid="run-budget-raise"]').waitFor({ state: "detached", timeout: T });
  },

  // A workflow budget of about a second of one GPU, reached while its run holds a fake GPU:
  // the Budgets page shows it reached with the run among the paused ones, linked to it, whose
  // page says why it is paused; raising it from the row lets the run go on.
  async ops_budget_paused() {
    const c = await gpuNode();
    const release = path.join(tmp, "ops-paused-release");
    const file = path.join(tmp, "ops-paused.yaml");
    writeFileSync(file, `name: ui-ops-paused
stages:
  train:
    resources: {cpus: 0.5, gpus: 1}
    run: [/bin/sh, -c, ${opsHoldUntil(release)}]
  eval:
    needs: [train]
    resources: {cpus: 0.5, gpus: 1}
    run: [/bin/sh, -c, "echo evaluated"]
`);
    await c.api("/budgets", { scope: "workflow", name: "ui-ops-paused", gpu_hours: 0.0003, period_ms: "3600000" });
    const id = c.submit(file);
    try {
      await c.waitRun(id, /RUNNING/);
      await openOn(c, "/budgets");
      const row = page.locator('[data-testid="budgets-table"] tr[data-budget="workflow/ui-ops-paused"]');
      await textMatches(row.locator('[data-col="state"]'), /reached/);
      const link = row.locator(`[data-col="paused"] a[href="#/runs/${id}"]`);
      await textMatches(link, new RegExp(`^run ${id}$`));
      await shot("budgets-reached");
      await link.click();
      await textMatches(page.locator('[data-testid="run-budget-hold"]'), /paused: workflow ui-ops-paused's budget of .* reached/);
      await openOn(c, "/budgets");
      await row.locator('[data-testid="budget-raise"]').click();
      await page.locator('[data-testid="budget-hours"]').fill("100");
      await page.locator('[data-testid="budget-set"]').click();
      await textMatches(row.locator('[data-col="state"]'), /under/);
      await textMatches(row.locator('[data-col="paused"]'), /^none$/);
    } finally {
      writeFileSync(release, "");
    }
    await c.waitRun(id, /SUCCEEDED/);
  },

  // A workflow's budget set from the Budgets page: a period under an hour is refused with
  // longhauld's 400 text, a good one is listed with its use and period, and "raise" sets it
  // again from the row.
  async ops_budgets() {
    await open("/budgets");
    const form = page.locator('[data-testid="budget-form"]');
    await form.locator('[data-testid="budget-scope"]').selectOption("workflow");
    await form.locator('[data-testid="budget-name"]').fill("ui-ops-budget");
    await form.locator('[data-testid="budget-hours"]').fill("2.5");
    await form.locator('[data-testid="budget-period"]').fill("30m");
    await form.locator('[data-testid="budget-set"]').click();
    await textMatches(page.locator('[data-testid="budget-error"]'), /period/i);
    check(!(await cluster.api("/budgets")).budgets?.some((b) => b.name === "ui-ops-budget"), "a refused budget is stored");
    await form.locator('[data-testid="budget-period"]').fill("7d");
    await form.locator('[data-testid="budget-set"]').click();
    const row = page.locator('[data-testid="budgets-table"] tr[data-budget="workflow/ui-ops-budget"]');
    await textMatches(row.locator('[data-col="use"]'), /^0 \/ 2\.5 GPU-h \(0 %\)$/);
    await textMatches(row.locator('[data-col="period"]'), /^7d since/);
    await textMatches(row.locator('[data-col="state"]'), /under/);
    await shot("budgets");
    await row.locator('[data-testid="budget-raise"]').click();
    check(await form.locator('[data-testid="budget-name"]').inputValue() === "ui-ops-budget", "raise did not fill the form");
    await form.locator('[data-testid="budget-hours"]').fill("5");
    await form.locator('[data-testid="budget-set"]').click();
    await textMatches(row.locator('[data-col="use"]'), /^0 \/ 5 GPU-h/);
    const b = (await cluster.api("/budgets")).budgets.find((x) => x.name === "ui-ops-budget");
    check(b.gpu_hours === 5 && Number(b.period_ms) === 7 * 86_400_000, `stored: ${JSON.stringify(b)}`);
  },
};
Object.assign(cases, opsCases);

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
    "audit", "pivot", "reconnect", "gpu_telemetry", "gpu_many_points", "gpu_quarantine", "gpu_drain", "agent_drain", "gpu_refused",
    "gpu_compare",
    "compare_campaign", "log_colours", "log_search", "log_jumps", "log_failed_stderr",
    "not_found", "pivot_follows_edits", "filters_say_why", "metric_and_times", "no_agent_reason",
    "provenance",
    "early_stop_saving",
    "big_run_graph", "table_messages", // big runs; before no_csp_violation, which checks them too
    "timeline_retry", "timeline_critical_path", "timeline_service", "timeline_live", "timeline_big",
    "url_state",
    "submit_param_form", "submit_validation_error", "submit_read_only",
    "metric_series", "compare_hundred",
    "sweep_view", "lineage_view",
    "priority_and_budget",
    "run_tags",
    "ops_run_class", "ops_class_refused", "ops_agent_drain", "ops_budget_paused", "ops_budgets",
    "ops_run_budget",
    "no_csp_violation"];
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
  submitTokenCluster?.dumpLogs();
} finally {
  await browser?.close().catch(() => {});
  await cluster.stop();
  await gpuCluster?.stop();
  await submitTokenCluster?.stop();
  if (code === 0) rmSync(tmp, { recursive: true, force: true });
  else console.log(`state kept in ${tmp}`);
}
process.exit(code);
