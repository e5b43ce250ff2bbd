import { describe, expect, it } from "vitest";
import { COUNT_ORDER, isTerminalStage, messageLevel, stateName, tone } from "./status";

describe("messageLevel", () => {
  it("does not draw an earlier attempt's error as the state of a stage that then succeeded", () => {
    expect(messageLevel("STAGE_SUCCEEDED", "error", 2)).toBe("earlier");
    expect(messageLevel("STAGE_FAILED", "error", 2)).toBe("error");
    expect(messageLevel("STAGE_RUNNING", "error", 2)).toBe("error");
    expect(messageLevel("STAGE_SUCCEEDED", "error", 1)).toBe("error");
    expect(messageLevel("STAGE_SUCCEEDED", "warn", 2)).toBe("warn");
    expect(messageLevel("STAGE_RUNNING", "", 1)).toBe("info");
  });
});

describe("status", () => {
  it("names states as the CLI prints them", () => {
    expect(stateName("STAGE_CACHED")).toBe("cached");
    expect(stateName("RUN_RUNNING")).toBe("running");
    expect(stateName("STAGE_STOPPED_EARLY")).toBe("stopped early");
  });
  it("gives a sweep item stopped early a colour of its own, neither failed nor cancelled", () => {
    expect(tone("STAGE_STOPPED_EARLY")).toBe("early");
    expect(tone("STAGE_FAILED")).toBe("bad");
    expect(tone("STAGE_CANCELLED")).toBe("warn");
    expect(isTerminalStage("STAGE_STOPPED_EARLY")).toBe(true);
    expect(COUNT_ORDER).toContain("stopped early");
  });
});
