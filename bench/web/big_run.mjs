// A big run's page in headless chromium: how long from the run's data reaching the page to
// the page being usable, for runs of 2,000 and 20,000 stages (a foreach sweep).
//
//   node bench/web/big_run.mjs --bin build/bin [--sizes 2000,20000] [--n 5] [--ui-dir web/dist]
//
// Starts a longhauld (temp state dir, ports 0, no agent, so every stage stays queued: the
// page must be usable whatever the stages do), submits through the JSON API one run per size
// (prep, a foreach of SIZE-2 /bin/true items over a two-key matrix, report needing them all),
// then opens the run page in a fresh browser context --n times and reports the median of:
//   load -> data:   navigation start to the run's first data in the page: its first page
//                   (GET /runs/{id}) or the watch stream's first piece, whichever comes first;
//   data -> table:  that data arriving, to the frame that draws the stage table's first row;
//   load -> rows:   navigation start to that frame;
//   load -> stream: navigation start to the watch stream's first piece (longhauld reads every
//                   stage of the run before it sends one);
//   all -> table:   the last piece (snapshot_complete) arriving, to the table listing every stage;
//   graph tab:      a click on "Graph" to the sweep's group node drawn (for a run under the
//                   table-first threshold, the graph is already there: 0);
//   longest task:   the longest main-thread task (PerformanceObserver "longtask") after the
//                   first piece: how long the page stopped answering at worst;
// and the watch stream's size. Times are the page's own clock (performance.now()). Without a
// browser, --n times: the watch stream read by node's fetch, from the request to its first
// byte and to the snapshot's last piece (longhauld alone, no page).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Cluster } from "../../tests/web/cluster.mjs";
import { SRC, arg, chromium, median } from "./common.mjs";

const BIN = path.resolve(arg("bin", path.join(SRC, "build/bin")));
const SIZES = arg("sizes", "2000,20000").split(",").map(Number);
const N = Number(arg("n", "5"));
const UI_DIR = arg("ui-dir", "");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

/** Reads the watch stream of run id: ms to its first byte and to "snapshot_complete". */
async function watchTimes(url) {
  const ac = new AbortController();
  const t0 = performance.now();
  const res = await fetch(url, { signal: ac.signal, headers: { Accept: "text/event-stream" } });
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let first = 0;
  let tail = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${url}: the stream ended before the snapshot was complete`);
    if (!first) first = performance.now() - t0;
    const text = tail + dec.decode(value, { stream: true });
    if (text.includes('"snapshot_complete":true')) break;
    tail = text.slice(-64);
  }
  const complete = performance.now() - t0;
  ac.abort();
  return { first, complete };
}

const fmt = (xs) => `${median(xs).toFixed(0)} ms (${Math.min(...xs).toFixed(0)} - ${Math.max(...xs).toFixed(0)})`;

/** prep, sweep-A-B for A in 0..size/2-2 and B in x, y, report: `size` stages in all. */
function sweepWorkflow(size) {
  const a = Array.from({ length: Math.max(1, (size - 2) / 2) }, (_, i) => i);
  return `name: bench-web-big\nstages:\n  prep:\n    run: [/bin/true]\n` +
    `  sweep:\n    foreach: {a: [${a.join(", ")}], b: [x, y]}\n    needs: [prep]\n    run: [/bin/true]\n` +
    `  report:\n    needs: [sweep]\n    run: [/bin/true]\n`;
}

// Runs in the page before its scripts: notes when the watch stream's pieces arrive (before
// the page's own listeners see them) and the longest main-thread task.
function instrument() {
  const m = { first: 0, complete: 0, bytes: 0, longest: 0, row: 0, pieces: [] };
  new MutationObserver(() => {
    if (m.row || !document.querySelector('[data-testid="stage-table"] tbody tr[data-stage]')) return;
    m.row = -1;
    requestAnimationFrame(() => { m.row = performance.now(); }); // the frame that draws it
  }).observe(document, { childList: true, subtree: true });
  window.__bench = m;
  const Base = window.EventSource;
  window.EventSource = class extends Base {
    constructor(url, init) {
      super(url, init);
      const note = (ev) => {
        m.bytes += ev.data.length;
        m.pieces.push(Math.round(performance.now()));
        if (!m.first) m.first = performance.now();
        if (!m.complete && ev.data.includes('"snapshot_complete":true')) m.complete = performance.now();
        if (ev.type === "snapshot" && !ev.data.includes('"snapshot_complete"') && !m.complete) {
          // A run of one piece: its snapshot is the whole run.
          if (!/"next_stage_page_token":"[^"]/.test(ev.data)) m.complete = performance.now();
        }
      };
      this.addEventListener("snapshot", note);
      this.addEventListener("update", note);
    }
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (m.first && e.startTime + e.duration >= m.first) m.longest = Math.max(m.longest, e.duration);
    }
  }).observe({ type: "longtask", buffered: true });
}

const tmp = mkdtempSync(path.join(tmpdir(), "longhaul-webbig-"));
const cluster = new Cluster({ bin: BIN, state: path.join(tmp, "state"), uiDir: UI_DIR || undefined, agent: false });
let browser;
try {
  await cluster.start();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  for (const size of SIZES) {
    const t0 = Date.now();
    const r = await cluster.api("/runs", { workflow_text: sweepWorkflow(size), no_cache: true });
    const id = Number(r.run.id);
    const total = Number(Object.values(r.run.stage_counts ?? {}).reduce((a, b) => a + Number(b), 0)) || size;
    console.log(`${size} stages: run ${id} submitted in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const toTable = [];
    const toAll = [];
    const toGraph = [];
    const longest = [];
    const loadToData = [];
    const loadToRow = [];
    const loadToStream = [];
    let bytes = 0;
    const streamFirst = [];
    const streamAll = [];
    for (let i = 0; i < N; i++) {
      const t = await watchTimes(`${cluster.httpUrl}/api/v1/runs/${id}/watch`);
      streamFirst.push(t.first);
      streamAll.push(t.complete);
    }
    console.log(`  watch stream alone, medians of ${N}: request -> first byte ${fmt(streamFirst)}; ` +
      `request -> snapshot complete ${fmt(streamAll)}`);
    for (let i = 0; i < N; i++) {
      const ctx = await browser.newContext({ viewport: { width: 1360, height: 860 } });
      const page = await ctx.newPage();
      await page.addInitScript(instrument);
      await page.goto(`${cluster.httpUrl}/#/runs/${id}`);
      const table = page.locator('[data-testid="stage-table"]');
      await table.locator("tbody tr[data-stage]").first().waitFor({ timeout: 120_000 });
      const firstRow = await page.evaluate(() => performance.now()); // if the frame was missed
      await page.locator('[data-testid="stage-matches"]', { hasText: `${total.toLocaleString("en-US")} stages` })
        .waitFor({ timeout: 120_000 });
      const allRows = await page.evaluate(() => performance.now());
      let graph = 0;
      const tab = page.locator('[data-testid="tab-graph"]');
      if (await tab.count()) {
        const before = await page.evaluate(() => performance.now());
        await tab.click();
        await page.locator('svg.dag g[data-group="sweep-*"]').waitFor({ timeout: 120_000 });
        graph = (await page.evaluate(() => performance.now())) - before;
      }
      const m = await page.evaluate(() => ({
        ...window.__bench,
        // The run's first page (GET /runs/{id}), read beside the stream.
        get: performance.getEntriesByType("resource").find((e) => /\/api\/v1\/runs\/\d+$/.test(e.name))?.responseEnd ?? 0,
      }));
      const data = m.get && m.get < m.first ? m.get : m.first;
      const row = m.row > 0 ? m.row : firstRow;
      toTable.push(row - data);
      loadToData.push(data);
      loadToRow.push(row);
      loadToStream.push(m.first);
      toAll.push(allRows - (m.complete || m.first));
      toGraph.push(graph);
      longest.push(m.longest);
      bytes = m.bytes;
      await ctx.close();
    }
    console.log(`  watch stream ${(bytes / 1e6).toFixed(1)} MB; medians of ${N}: page load -> data ${fmt(loadToData)}; ` +
      `data -> table ${fmt(toTable)}; page load -> first rows ${fmt(loadToRow)}; page load -> stream ${fmt(loadToStream)}; ` +
      `all -> table ${fmt(toAll)}; graph tab ${fmt(toGraph)}; longest task ${fmt(longest)}`);
    await cluster.cancel(id);
  }
} finally {
  await browser?.close().catch(() => {});
  await cluster.stop();
  rmSync(tmp, { recursive: true, force: true });
}
