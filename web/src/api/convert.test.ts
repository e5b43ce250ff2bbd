import { describe, expect, it } from "vitest";
import {
  applyUpdate, lacksCachedFrom, num, toAgent, toListRuns, toRunUpdate, toSubmitResponse, withCachedFrom,
} from "./convert";

// Shaped as longhauld prints them: MessageToJsonString with preserve_proto_field_names and
// always_print_primitive_fields, so int64 fields are strings and unset sub-messages absent.
const RUN = {
  id: "12", workflow_name: "eagle3-local", status: "RUN_RUNNING", params: { samples: "96" },
  parent_run_id: "0", created_at_ms: "1764599400000", started_at_ms: "1764599401000",
  ended_at_ms: "0", stage_counts: { running: 1, waiting: 1 }, wall_seconds: 12.5, gpu_hours: 0,
  summary_metrics: { "bench_spec.accept_rate": 0.62 },
  stages: [
    { name: "datagen", status: "STAGE_RUNNING", needs: [], attempt_count: 1,
      progress: { done: 40, total: 96, unit: "samples", rate: 3.2, eta_seconds: 17.5,
                  updated_at_ms: "1764599410000" },
      metrics: [{ name: "loss", value: 0.5, step: "3", attempt: 1, ts_ms: "1764599409000" }],
      artifacts: [{ name: "samples", path: "/x/samples.jsonl", bytes: "81234567", agent_id: "local", attempt: 1 }],
      cached_from_run_id: "0" },
    { name: "extract", status: "STAGE_WAITING", needs: ["datagen"], attempt_count: 0 },
  ],
};

describe("convert", () => {
  it("reads what early stopping saved, and null without it", () => {
    const { runs } = toListRuns({ runs: [RUN, { ...RUN, early_stop_saving: {
      stopped_items: 2, wall_seconds: 35, gpu_hours: 0, percent: 35 } }] });
    expect(runs[0].early_stop_saving).toBeNull();
    expect(runs[1].early_stop_saving).toEqual(
      { stopped_items: 2, wall_seconds: 35, gpu_hours: 0, percent: 35 });
  });
  it("turns int64 strings into numbers", () => {
    expect(num("12")).toBe(12);
    expect(num(3)).toBe(3);
    expect(num(undefined)).toBe(0);
    expect(num("NaN")).toBeNaN();
    const { runs, next_page_token } = toListRuns({ runs: [RUN], next_page_token: "abc" });
    const r = runs[0];
    expect(next_page_token).toBe("abc");
    expect(r.id).toBe(12);
    expect(r.started_at_ms).toBe(1764599401000);
    expect(r.summary_metrics["bench_spec.accept_rate"]).toBe(0.62);
    expect(r.stages[0].progress!.updated_at_ms).toBe(1764599410000);
    expect(r.stages[0].metrics[0].step).toBe(3);
    expect(r.stages[0].artifacts[0].bytes).toBe(81234567);
    expect(r.stages[1].progress).toBeNull();
    expect(r.stages[1].outputs).toEqual({});
  });

  it("applies a stream update to the stages it carries only", () => {
    const snap = toRunUpdate({ run: RUN, snapshot: true }).run;
    const upd = toRunUpdate({
      run: { ...RUN, stages: [{ name: "extract", status: "STAGE_RUNNING", needs: ["datagen"], attempt_count: 1 }] },
      snapshot: false,
    });
    const next = applyUpdate(snap, upd);
    expect(next.stages.map((s) => s.status)).toEqual(["STAGE_RUNNING", "STAGE_RUNNING"]);
    expect(next.stages[0]).toBe(snap.stages[0]);
    const again = applyUpdate(next, toRunUpdate({ run: { ...RUN, id: "12" }, snapshot: true }));
    expect(again.stages[1].status).toBe("STAGE_WAITING");
  });

  it("reads agents with GPUs and a plan with savings", () => {
    const a = toAgent({ id: "n1", state: "AGENT_CONNECTED", last_seen_ms: "5",
      total: { cpus: 8, memory_bytes: "1000", gpus: 2 },
      gpus: [{ index: 0, name: "H200", memory_bytes: "150000000000", attempt_id: "7", run_id: "3", stage: "finetune" }] });
    expect(a.gpus[0].memory_bytes).toBe(150000000000);
    expect(a.gpus[0].run_id).toBe(3);
    expect(a.free).toBeNull();
    expect(a.disk_full).toBe(false);
    expect(a.shared_paths).toEqual([]);
    const full = toAgent({ id: "n2", disk_full: true, state_free_bytes: "4096",
      shared_paths: ["/lustre", "/nfs/home"] });
    expect(full.shared_paths).toEqual(["/lustre", "/nfs/home"]);
    expect(full.disk_full).toBe(true);
    expect(full.state_free_bytes).toBe(4096);
    expect(full.drain).toBeNull();
    const drained = toAgent({ id: "n3", drain: { at_ms: "1796479200000", reason: "kernel upgrade", by: "ada" } });
    expect(drained.drain).toEqual({ at_ms: 1796479200000, reason: "kernel upgrade", by: "ada", set_at_ms: 0 });
    const p = toSubmitResponse({ plan: [{ stage: "datagen", action: "reuse", reuse_run_id: "3",
      saved_wall_seconds: 120, saved_gpu_hours: 0.5 }] });
    expect(p.run).toBeNull();
    expect(p.plan[0].reuse_run_id).toBe(3);
    expect(p.plan[0].saved_gpu_hours).toBe(0.5);
  });

  it("keeps where a reused stage came from when the stream does not say", () => {
    const stored = toRunUpdate({ run: { ...RUN, stages: [{ name: "datagen", status: "STAGE_CACHED", cached_from_run_id: "3", cached_from_stage: "datagen" }] }, snapshot: true }).run;
    const live = toRunUpdate({ run: { ...RUN, stages: [{ name: "datagen", status: "STAGE_CACHED" }] }, snapshot: true }).run;
    expect(lacksCachedFrom(live)).toBe(true);
    const fixed = withCachedFrom(live, stored);
    expect(fixed.stages[0].cached_from_run_id).toBe(3);
    const after = applyUpdate(fixed, toRunUpdate({ run: { ...RUN, stages: [{ name: "datagen", status: "STAGE_CACHED" }] }, snapshot: false }));
    expect(after.stages[0].cached_from_run_id).toBe(3);
    expect(lacksCachedFrom(after)).toBe(false);
  });
});
