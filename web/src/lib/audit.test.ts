import { describe, expect, it } from "vitest";
import { auditOutcome, parseAuditTarget } from "./audit";

describe("parseAuditTarget", () => {
  it("reads a run and a run's stage", () => {
    expect(parseAuditTarget("run 12")).toEqual({ run: 12, stage: "" });
    expect(parseAuditTarget("run 7 stage datagen")).toEqual({ run: 7, stage: "datagen" });
  });
  it("answers null for what names no run", () => {
    expect(parseAuditTarget("")).toBeNull();
    expect(parseAuditTarget("run x")).toBeNull();
    expect(parseAuditTarget("run 12 stage")).toBeNull();
    expect(parseAuditTarget("agent n0")).toBeNull();
  });
});

describe("auditOutcome", () => {
  it("splits an error into its code and message", () => {
    expect(auditOutcome("OK")).toEqual({ ok: true, code: "OK", message: "" });
    expect(auditOutcome("FAILED_PRECONDITION: run 3 has ended: nothing to cancel")).toEqual({
      ok: false, code: "FAILED_PRECONDITION", message: "run 3 has ended: nothing to cancel",
    });
    expect(auditOutcome("INTERNAL")).toEqual({ ok: false, code: "INTERNAL", message: "" });
  });
});
