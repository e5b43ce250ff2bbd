import { describe, expect, it } from "vitest";
import type { Metric } from "../api/types";
import { seriesByName } from "./metrics";

const m = (name: string, value: number, step: number, ts = 0): Metric =>
  ({ name, value, step, attempt: 1, ts_ms: ts });

describe("metric series", () => {
  it("draws stepped points by step", () => {
    expect(seriesByName([m("loss", 2, 20), m("loss", 3, 10)]).get("loss")).toEqual([[10, 20], [3, 2]]);
  });

  it("places a value without a step at 0, never at -1", () => {
    expect(seriesByName([m("accept_rate", 0.4, -1)]).get("accept_rate")).toEqual([[0], [0.4]]);
    expect(seriesByName([m("x", 1, -1, 5), m("x", 2, -1, 3)]).get("x")).toEqual([[0, 1], [2, 1]]);
  });

  it("leaves unstepped points out of a stepped series", () => {
    expect(seriesByName([m("x", 1, 5), m("x", 9, -1)]).get("x")).toEqual([[5], [1]]);
  });

  it("orders points whose steps are all 0 by time", () => {
    expect(seriesByName([m("x", 1, 0, 2), m("x", 2, 0, 1)]).get("x")).toEqual([[0, 1], [2, 1]]);
  });
});
