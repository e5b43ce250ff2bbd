import { describe, expect, it } from "vitest";
import type { Run } from "../api/types";
import {
  metricsNoRunHas, parseMetricFilter, parseParamFilter, parseRunIds, workflowMismatch,
} from "./filters";

const run = (id: number, workflow: string, metrics: Record<string, number> = {}) =>
  ({ id, workflow_name: workflow, summary_metrics: metrics }) as unknown as Run;

describe("filters", () => {
  it("says which param terms are not NAME=VALUE", () => {
    expect(parseParamFilter(" lr=0.1  n=3 ")).toEqual({ params: ["lr=0.1", "n=3"], error: "" });
    const r = parseParamFilter("lr=0.1 eagle3 =x");
    expect(r.params).toEqual(["lr=0.1"]);
    expect(r.error).toBe("“eagle3”, “=x” are not NAME=VALUE (e.g. lr=0.1)");
    expect(parseParamFilter("lr").error).toBe("“lr” is not NAME=VALUE (e.g. lr=0.1)");
  });

  it("says which metrics are not STAGE.NAME", () => {
    expect(parseMetricFilter("a.b, c.d").error).toBe("");
    expect(parseMetricFilter("a.b, accept_rate, x.").error)
      .toBe("“accept_rate”, “x.”: a metric is STAGE.NAME (e.g. bench_spec.accept_rate)");
  });

  it("names the metrics no listed run has", () => {
    const runs = [run(1, "w", { "a.b": 1 }), run(2, "w")];
    expect(metricsNoRunHas(runs, ["a.b", "a.c"])).toEqual(["a.c"]);
    expect(metricsNoRunHas([], ["a.c"])).toEqual([]); // no runs: nothing to say about metrics
  });

  it("explains blank differences between workflows", () => {
    expect(workflowMismatch([run(1, "w"), run(2, "w")])).toBe("");
    expect(workflowMismatch([run(1, "hello"), run(2, "eagle3")]))
      .toMatch(/^These runs are of different workflows \(run 1 is hello, run 2 is eagle3\)/);
  });

  it("says which runs to compare are not run ids", () => {
    expect(parseRunIds("3, 4 5")).toEqual({ ids: [3, 4, 5], error: "" });
    expect(parseRunIds("3, abc, 0")).toEqual({ ids: [3], error: "“abc”, “0” are not run ids" });
  });
});
