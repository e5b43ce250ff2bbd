import { describe, expect, it } from "vitest";
import { toRun } from "../api/convert";
import {
  anyHeldGpu, gpuDelta, gpuStageRows, gpuText, gpuValue, idleShare, idleText, metricMap, metricRows,
  paramRows, paramSplit, extremes, extremeOf, stageRows,
} from "./compare";

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
  it("splits the params into those that differ and those the same in all", () => {
    const c = toRun({ id: "5", params: { spec_engine: "refengine", epochs: "3", extra: "x" } });
    expect(paramSplit([a, b, c])).toEqual({ differing: ["extra", "spec_engine"], same: [["epochs", "3"]] });
  });
  it("marks the least and greatest value, none when all are equal", () => {
    const ex = extremes([0.5, undefined, 0.9, 0.1, NaN]);
    expect(ex).toEqual({ min: 0.1, max: 0.9 });
    expect([0.9, 0.1, 0.5, undefined].map((v) => extremeOf(v, ex))).toEqual(["max", "min", "", ""]);
    expect(extremes([2, 2])).toBe(null);
  });
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

const GIB = 2 ** 30;
const usage = (idle: number, sampled: number, sm: number, peakGib: number, kwh: number) => ({
  sampled_gpu_hours: sampled, idle_gpu_hours: idle, mean_sm_util_pct: sm,
  peak_mem_used_bytes: String(peakGib * GIB), mem_total_bytes: String(140 * GIB), energy_kwh: kwh,
});
// Run 5 trained on a GPU, idle a quarter of the time; run 6 trained better, and ran eval on a
// GPU without telemetry; prep held no GPU in either.
const g5 = toRun({
  id: "5", gpu_hours: 4, gpu_usage: usage(1, 4, 60, 70, 2),
  stages: [{ name: "prep" }, { name: "train", gpu_hours: 4, gpu_usage: usage(1, 4, 60, 70, 2) }],
});
const g6 = toRun({
  id: "6", gpu_hours: 2.5, gpu_usage: usage(0.05, 2, 90, 133, 1.5),
  stages: [{ name: "prep" }, { name: "train", gpu_hours: 2, gpu_usage: usage(0.05, 2, 90, 133, 1.5) },
    { name: "eval", gpu_hours: 0.5 }],
});

describe("compare GPUs", () => {
  it("shows the section only when a run held a GPU, and the stages that held one", () => {
    expect(anyHeldGpu([a, b])).toBe(false);
    expect(anyHeldGpu([a, g6])).toBe(true);
    expect(gpuStageRows([g5, g6])).toEqual(["train", "eval"]);
    expect(gpuStageRows([a, b])).toEqual([]);
  });
  it("gives each run's figures, with the idle share of the GPU time sampled", () => {
    expect(idleShare(g5.gpu_usage)).toBe(25);
    expect(idleShare(null)).toBeNull();
    expect(idleText(g5.gpu_usage)).toBe("1 idle (25 %)");
    expect(idleText(null)).toBe("");
    expect(gpuText(g5, "gpu_hours")).toBe("4");
    expect(gpuText(g6, "idle")).toBe("0.05 (2.5 %)");
    expect(gpuText(g6, "mean_sm")).toBe("90 %");
    expect(gpuText(g6, "energy")).toBe("1.50 kWh");
    expect(gpuText(a, "gpu_hours")).toBe("–");
    expect(gpuValue(a, "energy")).toBeNull();
  });
  it("gives each stage's figures and the difference to the first run", () => {
    const t5 = g5.stages[1];
    const t6 = g6.stages[1];
    expect(gpuText(t6, "peak_mem")).toBe("133 GiB of 140 GiB");
    expect(gpuDelta(t5, t6, "peak_mem")).toBe("+63.0 GiB (+90%)");
    expect(gpuDelta(t5, t6, "mean_sm")).toBe("+30 (+50%)");
    expect(gpuDelta(t5, t6, "energy")).toBe("−0.5 (−25%)");
    // eval held a GPU in run 6 only, with no telemetry: GPU-hours, the rest not known.
    expect(gpuText(g6.stages[2], "mean_sm")).toBe("–");
    expect(gpuText(g6.stages[2], "gpu_hours")).toBe("0.5");
    expect(gpuDelta(undefined, g6.stages[2], "gpu_hours")).toBe("");
    expect(gpuText(undefined, "idle")).toBe("–");
  });
});
