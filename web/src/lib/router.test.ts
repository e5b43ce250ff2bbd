import { describe, expect, it } from "vitest";
import {
  href, parseLogLocation, parseMetricsPage, parseRoute, parseRunsCursors, parseRunViewState,
  withRunsCursors,
} from "./router";

describe("log location", () => {
  it("round-trips the log view through the hash", () => {
    const loc = { attempt: 2, stream: "stderr", at: 1048576, q: "loss = 0.5 & more" };
    const h = href.stage(3, "train", loc);
    expect(h).toBe("#/runs/3/stages/train?attempt=2&stream=stderr&at=1048576&q=loss+%3D+0.5+%26+more");
    expect(parseRoute(h)).toEqual({ view: "stage", run: 3, stage: "train", log: loc });
  });

  it("drops what it cannot use", () => {
    expect(parseLogLocation(new URLSearchParams("stream=../x&at=-4&attempt=x&q="))).toEqual({});
    expect(parseLogLocation(new URLSearchParams("at=0"))).toEqual({ at: 0 });
  });
});

describe("parseRoute", () => {
  it("routes #/new to the New run page", () => {
    expect(parseRoute("#/new")).toEqual({ view: "new" });
    expect(parseRoute(href.newRun())).toEqual({ view: "new" });
  });
  it("parses every view", () => {
    expect(parseRoute("").view).toBe("runs");
    expect(parseRoute("#/runs?status=failed")).toMatchObject({ view: "runs" });
    expect(parseRoute("#/runs/12")).toEqual({ view: "run", run: 12, state: {} });
    expect(parseRoute("#/runs/12/pivot")).toEqual({ view: "pivot", run: 12 });
    expect(parseRoute(href.stage(12, "data gen"))).toEqual({ view: "stage", run: 12, stage: "data gen", log: {} });
    expect(parseRoute("#/compare?runs=3,4,x")).toMatchObject({ view: "compare", runs: [3, 4] });
    expect(parseRoute("#/agents")).toEqual({ view: "agents" });
    expect(parseRoute(href.audit())).toEqual({ view: "audit" });
    expect(parseRoute(href.budgets())).toEqual({ view: "budgets" });
    expect(parseRoute("#/budgets/x")).toEqual({ view: "notfound", path: "/budgets/x" });
    expect(parseRoute("#/nope").view).toBe("notfound");
  });
});

describe("run page state", () => {
  it("round-trips the stage search, state, selection and tab", () => {
    const st = { q: "train & eval", state: "failed", stage: "bench/a b", tab: "graph" as const };
    const h = href.run(7, st);
    expect(h).toBe("#/runs/7?q=train+%26+eval&state=failed&stage=bench%2Fa+b&tab=graph");
    expect(parseRoute(h)).toEqual({ view: "run", run: 7, state: st });
    expect(href.run(7, {})).toBe("#/runs/7");
    expect(parseRoute(href.run(7, { tab: "timeline" }))).toEqual({ view: "run", run: 7, state: { tab: "timeline" } });
  });

  it("drops what it cannot use", () => {
    expect(parseRunViewState(new URLSearchParams("state=<b>&tab=pie&q=&stage="))).toEqual({});
  });
});

describe("runs page cursors", () => {
  it("keeps the filters and replaces the pages", () => {
    const q = new URLSearchParams("status=failed&param=lr=0.1&cursor=old");
    const n = withRunsCursors(q, ["", "tok/1", "tok=2"]);
    expect(n.getAll("param")).toEqual(["lr=0.1"]);
    expect(n.get("status")).toBe("failed");
    expect(parseRunsCursors(new URLSearchParams(n.toString()))).toEqual(["", "tok/1", "tok=2"]);
    expect(withRunsCursors(n, [""]).toString()).toBe("status=failed&param=lr%3D0.1");
    expect(q.getAll("cursor")).toEqual(["old"]); // the input is not changed
  });
});

describe("compare options", () => {
  it("puts the runs, show-all and the metrics in the URL", () => {
    const h = href.compare([3, 4], { all: true, metric: ["bench.tps", "eval.acc"] });
    expect(h).toBe("#/compare?runs=3,4&all=1&metric=bench.tps,eval.acc");
    const r = parseRoute(h);
    expect(r).toMatchObject({ view: "compare", runs: [3, 4] });
    if (r.view === "compare") {
      expect(r.query.get("all")).toBe("1");
      expect(r.query.get("metric")).toBe("bench.tps,eval.acc");
    }
    expect(href.compare([3, 4])).toBe("#/compare?runs=3,4");
  });
});

describe("metrics page", () => {
  it("puts the runs or the workflow, the metric, log scale and the run's value in the URL", () => {
    const st = { runs: [3, 4], metric: "finetune.loss", log: true, value: "max" };
    const h = href.metrics(st);
    expect(h).toBe("#/metrics?runs=3,4&metric=finetune.loss&log=1&value=max");
    const r = parseRoute(h);
    expect(r.view).toBe("metrics");
    if (r.view === "metrics") expect(parseMetricsPage(r.query)).toEqual(st);
    const wf = { workflow: "eagle3-local", last: 50, metric: "bench.acceptance" };
    expect(parseMetricsPage(new URLSearchParams(href.metrics(wf).split("?")[1]))).toEqual(wf);
    expect(parseMetricsPage(new URLSearchParams("runs=x,-1&last=0"))).toEqual({});
    const smoothed = { runs: [3], metric: "finetune.loss", smooth: 0.6 };
    expect(href.metrics(smoothed)).toBe("#/metrics?runs=3&metric=finetune.loss&smooth=0.6");
    expect(parseMetricsPage(new URLSearchParams(href.metrics(smoothed).split("?")[1]))).toEqual(smoothed);
    expect(parseMetricsPage(new URLSearchParams("smooth=1.5"))).toEqual({});
  });
});

describe("sweep and lineage pages", () => {
  it("round-trips a sweep's metric and sort, and a stage's lineage", () => {
    const h = href.sweep(12, "train", { metric: "acc", sort: "param:lr", desc: true });
    expect(h).toBe("#/runs/12/sweeps/train?metric=acc&sort=param%3Alr&desc=1");
    expect(parseRoute(h)).toEqual({
      view: "sweep", run: 12, sweep: "train", state: { metric: "acc", sort: "param:lr", desc: true },
    });
    expect(parseRoute(href.sweep(12, "train"))).toEqual({ view: "sweep", run: 12, sweep: "train", state: {} });
    expect(parseRoute(href.lineage(3, "a b"))).toEqual({ view: "lineage", run: 3, stage: "a b" });
  });
});
