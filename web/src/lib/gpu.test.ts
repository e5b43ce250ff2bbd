import { describe, expect, it } from "vitest";
import type { AttemptGpuSeries, GpuPoint } from "../api/types";
import { toGpu, toStageGpus } from "../api/convert";
import {
  attemptStarts, chartsByGpu, formatEnergy, formatPercent, memPercent, polylines, timeDomain,
} from "./gpu";

const pt = (t: number, sm: number, used = -1, total = -1): GpuPoint => ({
  t_ms: t, span_ms: 100, sm_util: sm, mem_util: -1, mem_used_max: used, mem_total: total,
  power_w: -1, temp_max: -1, idle_ms: 0,
});
const series = (attempt: number, agent: string, gpu: number, points: GpuPoint[]): AttemptGpuSeries => ({
  attempt, attempt_id: attempt * 10, gpu_index: gpu, uuid: `GPU-${gpu}`, agent_id: agent, points,
  summary: { sampled_gpu_hours: 0, mean_sm_util_pct: -1, peak_mem_used_bytes: -1, mem_total_bytes: -1, energy_kwh: 0, idle_gpu_hours: 0 },
});

describe("gpu", () => {
  it("one chart per GPU, attempts as its stretches, and where each attempt began", () => {
    const s = [
      series(1, "n1", 0, [pt(1000, 50, 10, 100), pt(1100, 60, 20, 100)]),
      series(1, "n1", 1, [pt(1000, 5)]),
      series(2, "n1", 1, [pt(5000, 90, 5, 200)]),
    ];
    const charts = chartsByGpu(s);
    expect(charts.map((c) => c.key)).toEqual(["n1:0", "n1:1"]);
    expect(charts[1].stretches.map((x) => x.attempt)).toEqual([1, 2]);
    expect(charts[1].mem_total).toBe(200);
    expect(timeDomain(s)).toEqual([1000, 5100]);
    expect(attemptStarts(s)).toEqual([{ attempt: 1, t_ms: 1000 }, { attempt: 2, t_ms: 5000 }]);
    expect(timeDomain([])).toBeNull();
  });

  it("splits a line where a figure is not known", () => {
    const ps = [pt(0, 10), pt(100, -1), pt(200, 30), pt(300, 40)];
    const lines = polylines(ps, (p) => p.sm_util, (t) => t / 100, (v) => v);
    expect(lines).toEqual(["0.5,10.0", "2.5,30.0 3.5,40.0"]);
    expect(memPercent(pt(0, 0, 50, 200), 200)).toBe(25);
    expect(memPercent(pt(0, 0, -1, 200), 200)).toBe(-1);
  });

  it("draws 600 points on 8 GPUs as 8 single lines", () => {
    const s = Array.from({ length: 8 }, (_, g) =>
      series(1, "n1", g, Array.from({ length: 600 }, (_, i) => pt(i * 1000, (i * 7) % 100))));
    const charts = chartsByGpu(s);
    expect(charts).toHaveLength(8);
    const lines = polylines(charts[7].stretches[0].points, (p) => p.sm_util, (t) => t, (v) => v);
    expect(lines).toHaveLength(1);
    expect(lines[0].split(" ")).toHaveLength(600);
  });

  it("formats", () => {
    expect(formatPercent(73.4)).toBe("73 %");
    expect(formatPercent(-1)).toBe("–");
    expect(formatPercent(null)).toBe("–");
    expect(formatEnergy(12.3)).toBe("12 Wh");
    expect(formatEnergy(3410)).toBe("3.41 kWh");
  });

  it("converts the server's JSON (int64 as strings, optional figures absent)", () => {
    const g = toGpu({ index: 1, uuid: "GPU-1", health: "quarantined", health_reason: "XID 79",
      health_since_ms: "1700000000000", reading: { ts_ms: "5", sm_util_pct: 40, mem_used_bytes: "1024" } });
    expect(g.health).toBe("quarantined");
    expect(g.health_since_ms).toBe(1700000000000);
    expect(g.reading?.sm_util_pct).toBe(40);
    expect(g.reading?.mem_used_bytes).toBe(1024);
    expect(g.reading?.power_watts).toBeNull();
    expect(toGpu({ index: 0 }).reading).toBeNull();
    const st = toStageGpus({ series: [{ attempt: 2, gpu_index: 0, points: [{ t_ms: "7", sm_util: 1 }] }],
      summary: { energy_kwh: 2.5, mean_sm_util_pct: 40 } });
    expect(st.series[0].points[0].t_ms).toBe(7);
    expect(st.summary.energy_kwh).toBe(2.5);
    expect(toStageGpus({}).series).toEqual([]);
  });
});
