import { describe, expect, it } from "vitest";
import { href, parseRoute } from "./router";

describe("parseRoute", () => {
  it("parses every view", () => {
    expect(parseRoute("").view).toBe("runs");
    expect(parseRoute("#/runs?status=failed")).toMatchObject({ view: "runs" });
    expect(parseRoute("#/runs/12")).toEqual({ view: "run", run: 12 });
    expect(parseRoute("#/runs/12/pivot")).toEqual({ view: "pivot", run: 12 });
    expect(parseRoute(href.stage(12, "data gen"))).toEqual({ view: "stage", run: 12, stage: "data gen" });
    expect(parseRoute("#/compare?runs=3,4,x")).toMatchObject({ view: "compare", runs: [3, 4] });
    expect(parseRoute("#/agents")).toEqual({ view: "agents" });
    expect(parseRoute(href.audit())).toEqual({ view: "audit" });
    expect(parseRoute("#/nope").view).toBe("notfound");
  });
});
