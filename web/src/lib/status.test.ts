import { describe, expect, it } from "vitest";
import { COUNT_ORDER, isTerminalStage, stateName, tone } from "./status";

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
