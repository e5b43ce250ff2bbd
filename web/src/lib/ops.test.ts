import { describe, expect, it } from "vitest";
import {
  budgetFraction, budgetUseText, datetimeInputToMs, drainMeaning, formatPeriod, msToDatetimeInput,
  parseGpuHours, parsePeriod,
} from "./ops";

describe("ops", () => {
  it("reads a datetime-local value in UTC and in the local zone", () => {
    expect(datetimeInputToMs("2026-12-05T18:00", "utc")).toBe(Date.UTC(2026, 11, 5, 18, 0));
    expect(datetimeInputToMs("2026-12-05T18:00:30", "utc")).toBe(Date.UTC(2026, 11, 5, 18, 0, 30));
    expect(datetimeInputToMs("2026-12-05T18:00", "local")).toBe(new Date(2026, 11, 5, 18, 0).getTime());
  });

  it("refuses what is not a time", () => {
    expect(datetimeInputToMs("", "utc")).toBeNull();
    expect(datetimeInputToMs("18:00", "utc")).toBeNull();
    expect(datetimeInputToMs("2026-02-31T10:00", "utc")).toBeNull(); // no 31 February
    expect(datetimeInputToMs("2026-12-05T24:00", "utc")).toBeNull();
    expect(datetimeInputToMs("2026-13-01T10:00", "local")).toBeNull();
  });

  it("writes a time back as the input's value", () => {
    const ms = Date.UTC(2026, 0, 9, 7, 5);
    expect(msToDatetimeInput(ms, "utc")).toBe("2026-01-09T07:05");
    expect(datetimeInputToMs(msToDatetimeInput(ms, "local"), "local")).toBe(ms);
  });

  it("says what a drain means before and after its time", () => {
    const now = Date.UTC(2026, 11, 5, 10, 0);
    const at = Date.UTC(2026, 11, 5, 18, 0);
    expect(drainMeaning(at, now, "utc")).toMatch(/^from 18:00:00 UTC: no new attempt that could not finish by then/);
    expect(drainMeaning(at, now, "utc")).toMatch(/what still runs then is stopped/);
    expect(drainMeaning(now - 60_000, now, "utc")).toMatch(/^since 09:59:00 UTC: no new attempts start here/);
  });

  it("periods as the CLI writes and reads them", () => {
    expect(formatPeriod(30 * 86_400_000)).toBe("30d");
    expect(formatPeriod(12 * 3_600_000)).toBe("12h");
    expect(formatPeriod(90 * 60_000)).toBe("90m");
    expect(formatPeriod(0)).toBe("–");
    expect(parsePeriod("")).toBe(0); // keep the budget's own
    expect(parsePeriod(" 7d ")).toBe(7 * 86_400_000);
    expect(parsePeriod("12h")).toBe(12 * 3_600_000);
    expect(parsePeriod("2w")).toBe(14 * 86_400_000);
    expect(parsePeriod("1.5h")).toBe(90 * 60_000);
    expect(parsePeriod("30")).toBeNull();
    expect(parsePeriod("0d")).toBeNull();
    expect(parsePeriod("a month")).toBeNull();
  });

  it("GPU-hours typed in a form", () => {
    expect(parseGpuHours("500")).toBe(500);
    expect(parseGpuHours(" 0.5")).toBe(0.5);
    expect(parseGpuHours(".25")).toBe(0.25);
    expect(parseGpuHours("0")).toBeNull();
    expect(parseGpuHours("-3")).toBeNull();
    expect(parseGpuHours("1e3")).toBeNull();
    expect(parseGpuHours("")).toBeNull();
  });

  it("a budget's use as a bar and as text", () => {
    expect(budgetFraction(40, 80)).toBe(0.5);
    expect(budgetFraction(120, 80)).toBe(1);
    expect(budgetFraction(5, 0)).toBe(0);
    expect(budgetUseText(12.5, 80)).toBe("12.5 / 80 GPU-h (15 %)");
    expect(budgetUseText(501, 500)).toBe("501 / 500 GPU-h (100 %)");
  });
});
