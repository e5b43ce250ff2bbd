import { describe, expect, it } from "vitest";
import { href, parseLogLocation, parseRoute } from "./router";

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
  it("parses every view", () => {
    expect(parseRoute("").view).toBe("runs");
    expect(parseRoute("#/runs?status=failed")).toMatchObject({ view: "runs" });
    expect(parseRoute("#/runs/12")).toEqual({ view: "run", run: 12 });
    expect(parseRoute("#/runs/12/pivot")).toEqual({ view: "pivot", run: 12 });
    expect(parseRoute(href.stage(12, "data gen"))).toEqual({ view: "stage", run: 12, stage: "data gen", log: {} });
    expect(parseRoute("#/compare?runs=3,4,x")).toMatchObject({ view: "compare", runs: [3, 4] });
    expect(parseRoute("#/agents")).toEqual({ view: "agents" });
    expect(parseRoute(href.audit())).toEqual({ view: "audit" });
    expect(parseRoute("#/nope").view).toBe("notfound");
  });
});
