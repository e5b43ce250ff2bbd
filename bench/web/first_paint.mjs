// The runs page's first paint in headless chromium, and longhauld's CPU with idle open pages.
//
//   node bench/web/first_paint.mjs --bin build/bin [--runs 1000] [--n 15] [--idle-pages 20]
//                                  [--idle-seconds 60]
//
// Starts a longhauld (temp state dir, ports 0, no agent, so the runs stay pending), submits
// --runs runs of a one-stage workflow through the JSON API, then loads #/runs in a fresh
// browser context --n times and reports the median of: first contentful paint, and the time
// until the first page of runs is in the table (navigation start to the first row). Then it
// opens --idle-pages pages (half the runs page, which polls, half a run page, which holds a
// live stream) and reports longhauld's CPU over --idle-seconds (utime + stime from /proc).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Cluster } from "../../tests/web/cluster.mjs";
import { SRC, arg, chromium, median } from "./common.mjs";

const BIN = path.resolve(arg("bin", path.join(SRC, "build/bin")));
const RUNS = Number(arg("runs", "1000"));
const N = Number(arg("n", "15"));
const IDLE_PAGES = Number(arg("idle-pages", "20"));
const IDLE_SECONDS = Number(arg("idle-seconds", "60"));
const UI_DIR = arg("ui-dir", "");


function cpuTicks(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, "utf8");
  const rest = f.slice(f.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]); // utime + stime, in clock ticks
}

const tmp = mkdtempSync(path.join(tmpdir(), "longhaul-webbench-"));
const cluster = new Cluster({ bin: BIN, state: path.join(tmp, "state"), uiDir: UI_DIR || undefined, agent: false });
let browser;
try {
  await cluster.start();
  const workflow = "name: bench-web\nparams: {i: \"0\"}\nstages:\n  only:\n    run: [/bin/true]\n";
  const t0 = Date.now();
  let lastId = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await cluster.api("/runs", { workflow_text: workflow, params: { i: String(i) } });
    lastId = Number(r.run.id);
  }
  console.log(`submitted ${RUNS} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s (last id ${lastId})`);

  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  const fcp = [];
  const rows = [];
  for (let i = 0; i < N; i++) {
    const ctx = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    const page = await ctx.newPage();
    await page.goto(`${cluster.httpUrl}/#/runs`);
    await page.locator(`tr[data-run="${lastId}"]`).waitFor({ timeout: 30_000 });
    const m = await page.evaluate(() => ({
      fcp: performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN,
      rows: performance.now(),
    }));
    fcp.push(m.fcp);
    rows.push(m.rows);
    await ctx.close();
  }
  console.log(`runs page, ${N} loads: first contentful paint median ${median(fcp).toFixed(0)} ms ` +
    `(min ${Math.min(...fcp).toFixed(0)}, max ${Math.max(...fcp).toFixed(0)}); ` +
    `first 50 runs shown median ${median(rows).toFixed(0)} ms ` +
    `(min ${Math.min(...rows).toFixed(0)}, max ${Math.max(...rows).toFixed(0)})`);

  if (IDLE_PAGES > 0) {
    // A context per page: a browser holds at most 6 HTTP/1.1 connections per host, and each
    // run page keeps one open for its stream.
    for (let i = 0; i < IDLE_PAGES; i++) {
      const page = await (await browser.newContext()).newPage();
      await page.goto(`${cluster.httpUrl}/#${i % 2 ? `/runs/${lastId}` : "/runs"}`);
      await page.locator(i % 2 ? '[data-testid="stage-table"]' : `tr[data-run="${lastId}"]`).waitFor({ timeout: 30_000 });
    }
    const pid = cluster.daemon.pid;
    const hz = 100; // USER_HZ on Linux
    const before = cpuTicks(pid);
    const start = Date.now();
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000)); // the measuring window
    const used = (cpuTicks(pid) - before) / hz;
    const wall = (Date.now() - start) / 1000;
    console.log(`longhauld with ${IDLE_PAGES} idle pages (${Math.ceil(IDLE_PAGES / 2)} runs pages polling every 5 s, ` +
      `${Math.floor(IDLE_PAGES / 2)} run pages with a live stream): ${(100 * used / wall).toFixed(2)} % of a core over ${wall.toFixed(0)} s`);
  }
} finally {
  await browser?.close().catch(() => {});
  await cluster.stop();
  rmSync(tmp, { recursive: true, force: true });
}
