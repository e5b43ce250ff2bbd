import { describe, expect, it } from "vitest";
import {
  elapsedMs, formatAgo, formatBytes, formatDelta, formatDone, formatDuration, formatEta,
  formatClock, formatGpuHours, formatIso, formatMetric, formatNumber, formatRate, fractionDone,
} from "./format";

describe("format", () => {
  it("durations", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(4.9)).toBe("4s");
    expect(formatDuration(65)).toBe("1m05s");
    expect(formatDuration(3725)).toBe("1h02m");
    expect(formatDuration(3 * 86400 + 7200)).toBe("3d02h");
    expect(formatDuration(-1)).toBe("–");
    expect(formatDuration(NaN)).toBe("–");
  });

  it("elapsed runs to now while not ended", () => {
    expect(elapsedMs(0, 0, 5000)).toBe(-1);
    expect(elapsedMs(1000, 0, 5000)).toBe(4000);
    expect(elapsedMs(1000, 3000, 5000)).toBe(2000);
  });

  it("ETAs count down from the server's estimate", () => {
    expect(formatEta(-1, 0, 0)).toBe("–");
    expect(formatEta(120, 10_000, 10_000)).toBe("2m00s");
    expect(formatEta(120, 10_000, 40_000)).toBe("1m30s");
    expect(formatEta(10, 10_000, 60_000)).toBe("0s");
  });

  it("numbers, rates and progress", () => {
    expect(formatNumber(1234)).toBe("1,234");
    expect(formatNumber(3.14159)).toBe("3.14");
    expect(formatNumber(0.123456)).toBe("0.123");
    expect(formatMetric(0.1534567)).toBe("0.1535");
    expect(formatRate(41.23, "samples")).toBe("41.2 samples/s");
    expect(formatRate(0, "samples")).toBe("–");
    expect(formatDone(1234, 10000, "samples")).toBe("1,234/10,000 samples");
    expect(formatDone(7, 0, "")).toBe("7");
    expect(fractionDone(5, 10)).toBe(0.5);
    expect(fractionDone(12, 10)).toBe(1);
    expect(fractionDone(5, 0)).toBeNull();
  });

  it("bytes", () => {
    expect(formatBytes(-1)).toBe("–");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.50 KiB");
    expect(formatBytes(81234567)).toBe("77.5 MiB");
    expect(formatBytes(80 * 1024 ** 3)).toBe("80.0 GiB");
  });

  it("relative times", () => {
    const now = 1_000_000_000;
    expect(formatAgo(0, now)).toBe("never");
    expect(formatAgo(now - 500, now)).toBe("just now");
    expect(formatAgo(now - 12_000, now)).toBe("12 s ago");
    expect(formatAgo(now - 125_000, now)).toBe("2 min ago");
    expect(formatAgo(now - 3 * 3600_000, now)).toBe("3 h ago");
  });

  it("GPU-hours and differences", () => {
    expect(formatGpuHours(0)).toBe("0");
    expect(formatGpuHours(0.00123)).toBe("0.0012");
    expect(formatGpuHours(2.5)).toBe("2.5");
    expect(formatDelta(2, 3)).toBe("+1 (+50%)");
    expect(formatDelta(0.5, 0.25)).toBe("−0.25 (−50%)");
    expect(formatDelta(1, 1)).toBe("=");
    expect(formatDelta(0, 2)).toBe("+2");
  });
});

describe("times", () => {
  const noon = Date.UTC(2026, 11, 5, 12, 3, 7); // Sat 2026-12-05 12:03:07 UTC
  it("shows the time alone today, the date on another day, the year in another year", () => {
    expect(formatClock(noon, noon + 3_600_000, "utc")).toBe("12:03:07 UTC");
    expect(formatClock(noon, noon + 2 * 86_400_000, "utc")).toBe("Dec 5 12:03 UTC");
    expect(formatClock(noon, Date.UTC(2027, 0, 2), "utc")).toBe("Dec 5 2026 12:03 UTC");
    expect(formatClock(0, noon, "utc")).toBe("–");
  });

  it("writes ISO 8601 with the zone", () => {
    expect(formatIso(noon, "utc")).toBe("2026-12-05T12:03:07Z");
    // The local form names its offset, and means the same instant.
    const local = formatIso(noon, "local");
    expect(local).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(Date.parse(local)).toBe(noon);
  });
});
