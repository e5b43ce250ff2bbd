import { describe, expect, it } from "vitest";
import type { PlanEntry, Run } from "../api/types";
import {
  allReusedFrom, changedParams, pivotParams, pivotRequest, requestKey, sameParamsRuns,
} from "./pivot";

const entry = (stage: string, action: string, reuse = 0): PlanEntry => ({
  stage, action, reason: "", cache_key: "", reuse_run_id: reuse, reuse_stage: "",
  saved_wall_seconds: 0, saved_gpu_hours: 0,
});

describe("pivot", () => {
  it("sends only the changed params", () => {
    expect(changedParams({ a: "1", b: "2" }, { a: "1", b: "3", c: "" })).toEqual({ b: "3", c: "" });
  });

  it("keys a request by what it asks, whatever the order of its params", () => {
    const run = { a: "1", b: "2" };
    const one = pivotRequest(run, { a: "9", b: "8" }, "", false);
    const two = pivotRequest(run, { b: "8", a: "9" }, "", false);
    expect(requestKey(one)).toBe(requestKey(two));
    expect(requestKey(one)).not.toBe(requestKey(pivotRequest(run, { a: "9", b: "2" }, "", false)));
    expect(requestKey(one)).not.toBe(requestKey(pivotRequest(run, { a: "9", b: "8" }, "x", false)));
    expect(requestKey(one)).not.toBe(requestKey(pivotRequest(run, { a: "9", b: "8" }, "", true)));
  });

  it("names the runs a plan reuses every stage from", () => {
    expect(allReusedFrom(4, [entry("x", "reuse", 4), entry("y", "reuse", 2)])).toEqual([2, 4]);
    expect(allReusedFrom(4, [entry("x", "reuse", 0)])).toEqual([4]); // no id: the parent
    expect(allReusedFrom(4, [entry("x", "reuse", 4), entry("y", "run")])).toBeNull();
    expect(allReusedFrom(4, [])).toBeNull();
  });

  it("finds the runs of the workflow with exactly the pivot's params", () => {
    const run = (id: number, workflow_name: string, params: Record<string, string>) =>
      ({ id, workflow_name, params }) as unknown as Run;
    const req = pivotRequest({ a: "1", b: "2" }, { a: "1", b: "3" }, "", false);
    const params = pivotParams({ a: "1", b: "2" }, req);
    expect(params).toEqual({ a: "1", b: "3" });
    const runs = [run(9, "w", { a: "1", b: "3" }), run(5, "w", { a: "1", b: "3" }),
      run(6, "w-other", { a: "1", b: "3" }), run(7, "w", { a: "1", b: "3", c: "" }), run(8, "w", { a: "1" })];
    expect(sameParamsRuns(runs, "w", params)).toEqual([5, 9]);
  });
});
