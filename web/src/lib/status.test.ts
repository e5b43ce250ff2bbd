import { describe, expect, it } from "vitest";
import { messageLevel } from "./status";

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
