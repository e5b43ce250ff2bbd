import { describe, expect, it } from "vitest";
import { toMetricSeries, toRun } from "../api/convert";
import {
  alignSeries, allPositive, parseRunValue, runLabels, runValue, stepSeries, workflowRuns,
} from "./metricruns";

const run = (id: number, params: Record<string, string>, workflow = "wf") =>
  toRun({ id: String(id), params, workflow_name: workflow });

describe("metrics across runs", () => {
  it("names each run by the params that differ between the runs", () => {
    const runs = [run(3, { lr: "0.1", seed: "1", gpus: "8" }), run(4, { lr: "0.2", seed: "1", gpus: "8" })];
    expect(runLabels([3, 4, 9], runs)).toEqual(["run 3 · lr=0.1", "run 4 · lr=0.2", "run 9"]);
    expect(runLabels([3], runs)).toEqual(["run 3"]);
  });

  it("draws a series by step, a value that is not a number as a gap", () => {
    const s = toMetricSeries({ run_id: 3, steps: [2, 1, 3], values: [0.5, 1, null], ts_ms: [2, 1, 3] });
    expect(stepSeries(s)).toEqual([[1, 2, 3], [1, 0.5, NaN]]);
    expect(alignSeries([[[1, 2, 3], [1, 0.5, NaN]], [[2, 4], [7, 8]]]))
      .toEqual([[1, 2, 3, 4], [1, 0.5, null, null], [null, 7, null, 8]]);
  });

  it("allows a log scale only for values above 0", () => {
    expect(allPositive([[1, null, 2]])).toBe(true);
    expect(allPositive([[1], [0]])).toBe(false);
  });

  it("takes the final, least or greatest value of a run", () => {
    const s = toMetricSeries({ run_id: 3, last: 0.4, min: 0.1, max: 0.9 });
    expect(runValue(s, parseRunValue("max"))).toBe(0.9);
    expect(runValue(s, parseRunValue("min"))).toBe(0.1);
    expect(runValue(s, parseRunValue("best?"))).toBe(0.4);
    expect(runValue(toMetricSeries({ run_id: 4, last: null }), "last")).toBe(null);
  });

  it("takes a workflow's last runs, oldest first, of that name exactly", () => {
    const runs = [run(9, {}, "wf"), run(8, {}, "wf-big"), run(7, {}, "wf"), run(5, {}, "wf")];
    expect(workflowRuns(runs, "wf", 2).map((r) => r.id)).toEqual([7, 9]);
  });
});
