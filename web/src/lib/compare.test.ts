import { describe, expect, it } from "vitest";
import { toRun } from "../api/convert";
import { metricMap, metricRows, paramRows, stageRows } from "./compare";

const a = toRun({
  id: "3", params: { spec_engine: "refengine-misaligned", epochs: "3" },
  stages: [
    { name: "datagen", metrics: [{ name: "samples", value: 96 }] },
    { name: "bench_spec", metrics: [{ name: "accept_rate", value: 0.05 }, { name: "accept_length", value: 1.1 }] },
  ],
});
const b = toRun({
  id: "4", params: { spec_engine: "refengine", epochs: "3" },
  stages: [
    { name: "datagen", status: "STAGE_CACHED", cached_from_run_id: "3" },
    { name: "bench_spec", metrics: [{ name: "accept_rate", value: 0.62 }] },
    { name: "extra" },
  ],
});

describe("compare", () => {
  it("lists the params that differ, or all of them", () => {
    expect(paramRows([a, b], false)).toEqual(["spec_engine"]);
    expect(paramRows([a, b], true)).toEqual(["epochs", "spec_engine"]);
  });
  it("lists stages in order and every metric by stage", () => {
    expect(stageRows([a, b])).toEqual(["datagen", "bench_spec", "extra"]);
    expect(metricRows([a, b])).toEqual(["datagen.samples", "bench_spec.accept_length", "bench_spec.accept_rate"]);
    expect(metricMap(b).get("bench_spec.accept_rate")).toBe(0.62);
    expect(b.stages[0].cached_from_run_id).toBe(3);
  });
});
