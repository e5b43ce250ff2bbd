import { describe, expect, it } from "vitest";
import type { SweepItem } from "../api/types";
import { seriesPath, sortSweepItems, stopMark, sweepChartLayout } from "./sweeptable";

function item(stage: string, lr: string, over: Partial<SweepItem> = {}): SweepItem {
  return {
    stage, params: [{ key: "lr", value: lr }], absent: false, status: "STAGE_SUCCEEDED",
    reason: "", final: null, best: null, steps: null, wall_seconds: 0, gpu_hours: 0,
    started_at_ms: 0, series: [], stopped_at_step: null, stopped_value: null, ...over,
  };
}

describe("sortSweepItems", () => {
  const items = [
    item("t-1e0", "1e0", { best: 3, steps: 1, wall_seconds: 1 }),
    item("t-1e-2", "1e-2", { best: 0.08, steps: 12, wall_seconds: 3 }),
    item("t-3", "3", { absent: true }),
    item("t-2e-1", "2e-1", { best: 1.1, steps: 12, wall_seconds: 2 }),
  ];
  const names = (xs: SweepItem[]) => xs.map((x) => x.stage);
  it("puts the best first, smallest for min and largest for max, valueless last", () => {
    expect(names(sortSweepItems(items, "best", false, false))).toEqual(["t-1e-2", "t-2e-1", "t-1e0", "t-3"]);
    expect(names(sortSweepItems(items, "best", false, true))).toEqual(["t-1e0", "t-2e-1", "t-1e-2", "t-3"]);
    expect(names(sortSweepItems(items, "best", true, false))).toEqual(["t-1e0", "t-2e-1", "t-1e-2", "t-3"]);
  });
  it("sorts a foreach key's values as numbers, and keeps file order by item", () => {
    expect(names(sortSweepItems(items, "param:lr", false, false))).toEqual(["t-1e-2", "t-2e-1", "t-1e0", "t-3"]);
    expect(names(sortSweepItems(items, "item", false, false))).toEqual(names(items));
  });
  it("puts the most wall time first", () => {
    expect(names(sortSweepItems(items, "wall", false, false))).toEqual(["t-1e-2", "t-2e-1", "t-1e0", "t-3"]);
  });
});

describe("the chart", () => {
  it("fits the series and the rungs, and draws a series in step order", () => {
    const a = item("a", "1", { series: [{ step: 4, value: 1 }, { step: 2, value: 3 }] });
    const l = sweepChartLayout([a], [1, 8], 300, 200);
    expect(l.steps).toEqual([1, 8]);
    expect(l.values).toEqual([1, 3]);
    expect(l.x(1)).toBeLessThan(l.x(8));
    expect(l.y(3)).toBeLessThan(l.y(1)); // larger values higher up
    expect(seriesPath(a, l).startsWith(`M${l.x(2).toFixed(1)} `)).toBe(true);
  });
  it("marks a stop at its step with the judged value, else the last value before it", () => {
    const s = item("s", "1", { series: [{ step: 1, value: 5 }, { step: 2, value: 4 }], stopped_at_step: 2 });
    expect(stopMark(s)).toEqual({ step: 2, value: 4 });
    expect(stopMark({ ...s, stopped_value: 4.5 })).toEqual({ step: 2, value: 4.5 });
    expect(stopMark(item("n", "1"))).toBeNull();
  });
});
