import { describe, expect, it } from "vitest";
import { toAttempt, toStage } from "../api/convert";
import type { Stage } from "../api/types";
import { criticalPath, criticalPathText, laneRows, stageBars, timelineRows, timeTicks, type Bar } from "./timeline";

const H = 3_600_000;
const M = 60_000;

const T0 = Date.parse("2026-12-05T00:00:00Z");

/** A stage started `start` ms after T0 and ended `end` ms after it (-1: not started / ended). */
function stage(name: string, needs: string[], start: number, end: number, extra: Record<string, unknown> = {}): Stage {
  return toStage({
    name, needs, started_at_ms: String(start < 0 ? 0 : T0 + start), ended_at_ms: String(end < 0 ? 0 : T0 + end),
    status: end >= 0 ? "STAGE_SUCCEEDED" : start >= 0 ? "STAGE_RUNNING" : "STAGE_WAITING", ...extra,
  });
}

const at = (ms: number) => String(T0 + ms);

describe("stageBars", () => {
  it("draws each attempt of a retried stage, the first failed, with its queued time", () => {
    const prep = stage("prep", [], 1000, 5000);
    const train = stage("train", ["prep"], 6000, 20000, { attempt_count: 2 });
    const byName = new Map([["prep", prep], ["train", train]]);
    const attempts = [
      toAttempt({ number: 1, state: "ATTEMPT_EXITED", exit_code: 3, reason: "exit 3", created_at_ms: at(5500),
        started_at_ms: at(6000), ended_at_ms: at(9000), agent_id: "n1", gpus: [0, 1] }),
      toAttempt({ number: 2, state: "ATTEMPT_EXITED", ready_at_ms: at(10000), created_at_ms: at(10000),
        started_at_ms: at(12000), ended_at_ms: at(20000), agent_id: "n2" }),
    ];
    const bars = stageBars(train, attempts, byName, T0);
    expect(bars.map((b) => [b.attempt, b.outcome, b.ready - T0, b.start - T0, b.end - T0])).toEqual([
      [1, "bad", 5000, 6000, 9000], // ready when prep ended (not recorded): from its needs
      [2, "ok", 10000, 12000, 20000], // recorded: after the retry's backoff
    ]);
    expect(bars[0].readyRecorded).toBe(false);
    expect(bars[1].readyRecorded).toBe(true);
    expect(bars[0].gpus).toEqual([0, 1]);
  });

  it("ends an open attempt with its stage, and a ready stage with no attempt is queued", () => {
    const s = stage("x", [], 1000, 8000, { status: "STAGE_CANCELLED" });
    const open = toAttempt({ number: 1, state: "ATTEMPT_RUNNING", started_at_ms: at(1000), created_at_ms: at(900) });
    const [b] = stageBars(s, [open], new Map(), T0 + 500);
    expect([b.end - T0, b.ready - T0]).toEqual([8000, 500]);
    const ready = stage("y", ["x"], -1, -1, { status: "STAGE_READY" });
    const q = stageBars(ready, [], new Map([["x", s]]), T0);
    expect(q.map((x) => [x.attempt, x.ready - T0, x.start])).toEqual([[0, 8000, 0]]);
  });

  it("draws a stage the stream says started before its attempts are read again", () => {
    const running = stage("z", [], 2000, -1, { agent_id: "n3" });
    const [b] = stageBars(running, [], new Map(), T0);
    expect([b.attempt, b.outcome, b.start - T0, b.end, b.agent]).toEqual([1, "run", 2000, 0, "n3"]);
    const failed = stage("f", [], 2000, 3000, { status: "STAGE_FAILED" });
    expect(stageBars(failed, [], new Map(), T0)[0].outcome).toBe("bad");
    expect(stageBars(stage("c", [], 0, 1, { status: "STAGE_CACHED" }), [], new Map(), T0)).toEqual([]);
  });
});

describe("criticalPath", () => {
  // datagen -> extract -> finetune decides the end; lint runs beside it, short.
  const stages = [
    stage("datagen", [], 0, 5 * H + 18 * M),
    stage("lint", [], 0, 10 * M),
    stage("extract", ["datagen", "lint"], 5 * H + 18 * M, 5 * H + 59 * M),
    stage("side", ["datagen"], 5 * H + 18 * M, 5 * H + 30 * M),
    stage("finetune", ["extract"], 5 * H + 59 * M, 8 * H + 35 * M),
  ];
  it("follows the need that was done last back from the stage that ended last", () => {
    const path = criticalPath(stages, new Map(), T0 + 9 * H);
    expect(path.map((p) => p.name)).toEqual(["datagen", "extract", "finetune"]);
    expect(criticalPathText(path)).toBe("critical path: datagen 5h18m → extract 41m00s → finetune 2h36m");
  });

  it("counts a service from its start, and leaves reused stages out", () => {
    const s = [
      stage("cached", [], 0, 1, { status: "STAGE_CACHED" }),
      stage("serve", ["cached"], 100 * M, -1, { kind: "service", status: "STAGE_SERVING" }),
      stage("bench", ["serve"], 105 * M, -1),
    ];
    const path = criticalPath(s, new Map([["bench", T0 + 104 * M]]), T0 + 130 * M);
    expect(path).toEqual([{ name: "serve", ms: 4 * M, queuedMs: 0 }, { name: "bench", ms: 25 * M, queuedMs: M }]);
    expect(criticalPathText(path)).toBe("critical path: serve 4m00s → bench 25m00s (queued 1m00s)");
    expect(criticalPathText([{ name: "a", ms: 740, queuedMs: 1500 }, { name: "b", ms: 9999, queuedMs: 999 }]))
      .toBe("critical path: a 0.7s (queued 1.5s) → b 9.9s");
    expect(criticalPath([stage("w", [], -1, -1)], new Map(), T0)).toEqual([]);
  });
});

describe("timelineRows", () => {
  it("puts a service's consumers under it and foreach items under their group", () => {
    const s = [
      stage("prep", [], -1, -1),
      stage("serve", ["prep"], -1, -1, { kind: "service" }),
      stage("report", ["bench-1", "bench-2", "bench-3"], -1, -1),
      stage("bench-1", ["serve"], -1, -1),
      stage("bench-2", ["serve"], -1, -1),
      stage("bench-3", ["serve"], -1, -1),
    ];
    const rows = timelineRows(s, new Set());
    expect(rows.map((r) => `${r.kind}:${r.name}:${r.depth}`)).toEqual([
      "stage:prep:0", "stage:serve:0", "group:bench:1", "stage:bench-1:2", "stage:bench-2:2",
      "stage:bench-3:2", "stage:report:0",
    ]);
    const folded = timelineRows(s, new Set(["bench-*"]));
    expect(folded.map((r) => r.name)).toEqual(["prep", "serve", "bench", "report"]);
  });
});

describe("timeTicks", () => {
  const iso = (text: string) => Date.parse(text);
  it("picks a round step for the span and width", () => {
    // 57 minutes in 900 px: at most 10 ticks, so every 10 minutes (5 would be 11).
    const t = timeTicks(iso("2026-12-05T10:03:00Z"), iso("2026-12-05T11:00:00Z"), 900, "utc");
    expect(t.map((x) => x.label)).toEqual(["Dec 5 10:10", "10:20", "10:30", "10:40", "10:50", "11:00"]);
    const s = timeTicks(iso("2026-12-05T10:00:01Z"), iso("2026-12-05T10:00:30Z"), 600, "utc");
    expect(s[0].label).toBe("Dec 5 10:00:05");
    expect(s[1].label).toBe("10:00:10");
  });

  it("names the date again where the run crosses midnight", () => {
    const t = timeTicks(iso("2026-12-05T20:00:00Z"), iso("2026-12-06T08:00:00Z"), 700, "utc");
    expect(t.map((x) => x.label)).toEqual(["Dec 5 20:00", "22:00", "Dec 6 00:00", "02:00", "04:00", "06:00", "08:00"]);
    const days = timeTicks(iso("2026-12-01T00:00:00Z"), iso("2026-12-08T00:00:00Z"), 700, "utc");
    expect(days[0].label).toBe("Dec 1");
    expect(timeTicks(5, 5, 100, "utc")).toEqual([]);
  });
});

describe("laneRows", () => {
  const bar = (stage: string, agent: string, start: number, end: number, gpus: number[] = []): Bar => ({
    stage, attempt: 1, ready: start - 5, start, end, outcome: "ok", reason: "", agent, gpus, readyRecorded: true,
  });
  it("puts each node's attempts on its GPUs' lanes and packs the others into CPU lanes", () => {
    const { rows, waiting } = laneRows([
      bar("train", "n2", 110, 150, [0, 1]), bar("bench", "n2", 160, 170, [1]),
      bar("a", "n1", 100, 110), bar("b", "n1", 105, 120), bar("c", "n1", 110, 130), bar("d", "n1", 200, 0),
      { ...bar("queued", "", 0, 0), start: 0 },
    ]);
    expect(waiting).toBe(1);
    expect(rows.map((r) => `${r.label}: ${r.bars.map((b) => b.stage).join(",")}`)).toEqual([
      "n1: ", "CPU lane 1: a,c,d", "CPU lane 2: b",
      "n2: ", "GPU 0: train", "GPU 1: train,bench",
    ]);
    // On a node, a bar is its running time: the queue was not there.
    expect(rows[1].bars[0].ready).toBe(rows[1].bars[0].start);
  });
});
