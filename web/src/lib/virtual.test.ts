import { describe, expect, it } from "vitest";
import { rowWindow } from "./virtual";

describe("rowWindow", () => {
  it("draws the rows in view plus the overscan, and pads the rest", () => {
    const w = rowWindow(20000, 36, 36 * 1000, 720, 5);
    expect(w.first).toBe(995);
    expect(w.last).toBe(1025);
    expect(w.padTop).toBe(995 * 36);
    expect(w.padTop + (w.last - w.first) * 36 + w.padBottom).toBe(20000 * 36);
  });
  it("is clamped at both ends", () => {
    expect(rowWindow(50, 36, 0, 720, 5)).toEqual({ first: 0, last: 25, padTop: 0, padBottom: 25 * 36 });
    const end = rowWindow(50, 36, 1e9, 720, 5);
    expect(end.last).toBe(50);
    expect(end.padBottom).toBe(0);
    expect(rowWindow(0, 36, 0, 720)).toEqual({ first: 0, last: 0, padTop: 0, padBottom: 0 });
  });
});
