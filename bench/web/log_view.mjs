// The log viewer on a 30 MB training log written in colour, in headless chromium against a
// real longhauld and agent.
//
//   node bench/web/log_view.mjs --bin build/bin [--mb 30] [--n 9] [--ui-dir web/dist]
//
// Writes the log (tests/web/colourlog.mjs: SGR colours on every line, \r redraws, a title,
// a "WARN needle" line every 20,000 lines), runs a stage that cats it, then --n times in a
// fresh browser context measures, and reports the median (min - max) of:
//   stage shown  navigation start to the stage's status shown (the page's own first render)
//   first view   navigation start to the log's last line shown (the stage page opened by URL)
//   search       "WARN needle" submitted to its matches listed (longhauld reads the whole file)
//   search API   the same search as one HTTP request from node (the server's share)
//   start        a click on Start to the log's first line shown
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Cluster } from "../../tests/web/cluster.mjs";
import { SRC, arg, chromium, median } from "./common.mjs";
import { colourfulLog } from "../../tests/web/colourlog.mjs";

const BIN = path.resolve(arg("bin", path.join(SRC, "build/bin")));
const MB = Number(arg("mb", "30"));
const N = Number(arg("n", "9"));
const UI_DIR = arg("ui-dir", "");
const T = 60_000;

const report = (what, xs) => console.log(`${what}: median ${median(xs).toFixed(0)} ms ` +
  `(min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)}, n ${xs.length})`);

const tmp = mkdtempSync(path.join(tmpdir(), "longhaul-logbench-"));
const cluster = new Cluster({ bin: BIN, state: path.join(tmp, "state"), uiDir: UI_DIR || undefined });
let browser;
try {
  const lines = Math.round((MB * 1e6) / 140);
  const log = colourfulLog(lines, 20_000);
  const file = path.join(tmp, "train.log");
  writeFileSync(file, log.bytes);
  const lastLine = log.lineOffsets(lines - 1);
  console.log(`log: ${(log.bytes.length / 1e6).toFixed(1)} MB, ${lines} training lines, ${log.needles.length} needles`);
  await cluster.start();
  const wf = path.join(tmp, "log.yaml");
  writeFileSync(wf, `name: bench-log\nstages:\n  train:\n    run: [/bin/cat, ${file}]\n`);
  const id = cluster.submit(wf);
  await cluster.waitRun(id, /SUCCEEDED/);

  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
  const stageShown = [];
  const firstView = [];
  const search = [];
  const searchApi = [];
  const start = [];
  const q = new URLSearchParams({ q: "WARN needle", icase: "1" });
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await (await fetch(`${cluster.httpUrl}/api/v1/runs/${id}/stages/train/logs/search?${q}`)).json();
    searchApi.push(performance.now() - t0);
    if (r.matches.length !== log.needles.length) throw new Error(`search API found ${r.matches.length}`);

    const ctx = await browser.newContext({ viewport: { width: 1360, height: 860 } });
    const page = await ctx.newPage();
    await page.goto(`${cluster.httpUrl}/#/runs/${id}/stages/train`);
    await page.locator('[data-testid="stage-status"]').waitFor({ timeout: T });
    stageShown.push(await page.evaluate(() => performance.now()));
    await page.locator(`[data-testid="log-text"] .ll[data-offset="${lastLine}"]`).waitFor({ timeout: T });
    firstView.push(await page.evaluate(() => performance.now()));

    await page.locator('[data-testid="log-search-input"]').fill("WARN needle");
    const s0 = await page.evaluate(() => performance.now());
    await page.locator('[data-testid="log-search"]').click();
    await page.locator('[data-testid="log-match-count"]', { hasText: `${log.needles.length} matching lines` })
      .waitFor({ timeout: T });
    search.push(await page.evaluate((t) => performance.now() - t, s0));

    const j0 = await page.evaluate(() => performance.now());
    await page.locator('[data-testid="log-start"]').click();
    await page.locator('[data-testid="log-text"] .ll[data-offset="0"]').waitFor({ timeout: T });
    start.push(await page.evaluate((t) => performance.now() - t, j0));
    await ctx.close();
  }
  report("stage shown (navigation to the stage's status)", stageShown);
  report("first view (navigation to the log's last line shown)", firstView);
  report(`search, whole ${(log.bytes.length / 1e6).toFixed(0)} MB (submit to matches listed)`, search);
  report("search API alone (one HTTP request)", searchApi);
  report("Start (click to the first line shown)", start);
} finally {
  await browser?.close().catch(() => {});
  await cluster.stop();
  rmSync(tmp, { recursive: true, force: true });
}
