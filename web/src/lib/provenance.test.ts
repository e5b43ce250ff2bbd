import { describe, expect, it } from "vitest";
import { toRun } from "../api/convert";
import { provenanceRows, sourceText } from "./provenance";

const env = (engine: string, sha: string, agent = "0.1.0") => ({
  agent_version: agent, executable: "lh-serve", executable_path: "/bin/lh-serve",
  executable_sha256: sha, engine_profile: engine ? "refengine" : "", engine_version: engine,
});

const a = toRun({
  id: "1", params: { steps: "20" },
  source: { kind: "git", commit: "a".repeat(40), branch: "main", dirty: true, diff_sha256: "d".repeat(64), diff_bytes: "120" },
  stages: [
    { name: "datagen", attempts: [{ id: "1", number: 1, environment: env("", "1".repeat(64)) }] },
    { name: "server", attempts: [{ id: "2", number: 1, environment: env("0.8.4", "2".repeat(64)) }] },
  ],
});
const b = toRun({
  id: "2", params: { steps: "20" },
  source: { kind: "git", commit: "a".repeat(40), branch: "main", dirty: false },
  stages: [
    { name: "datagen", status: "STAGE_CACHED", cached_from_run_id: "1" },
    { name: "server", attempts: [{ id: "3", number: 1, environment: env("0.9.0", "2".repeat(64)) }] },
  ],
});

describe("provenance", () => {
  it("says what a run's source was", () => {
    expect(sourceText(a.source)).toBe(`${"a".repeat(12)} (main, dirty: diff ${"d".repeat(12)}, 120 bytes)`);
    expect(sourceText(null)).toBe("not recorded");
  });
  it("lists what differs besides params, leaving out stages one run reused", () => {
    expect(provenanceRows([a, b])).toEqual([
      { what: "uncommitted changes", values: [`dirty, diff ${"d".repeat(12)}`, "clean"] },
      { what: "engine version (server)", values: ["refengine 0.8.4", "refengine 0.9.0"] },
    ]);
    expect(provenanceRows([a, a])).toEqual([]);
  });
});
