import { describe, expect, it } from "vitest";
import {
  MAX_ZOOM, MIN_ZOOM, centreOn, fitView, intersects, onScreen, panBy, visibleRect, zoomAt,
} from "./viewport";

describe("fitView", () => {
  it("shows a big graph whole, centred", () => {
    const v = fitView(7342, 3002, 1000, 500, 10);
    expect(v.k).toBeCloseTo(980 / 7342, 6); // the width limits it
    expect(onScreen(v, { x: 0, y: 0, w: 7342, h: 3002 }, 1000, 500)).toBe(true);
    expect(v.x + 7342 * v.k / 2).toBeCloseTo(500, 6);
  });
  it("never enlarges a small graph past 1:1", () => {
    expect(fitView(200, 100, 1000, 500).k).toBe(1);
  });
  it("clamps a huge graph to the least zoom", () => {
    expect(fitView(1e7, 10, 1000, 500).k).toBe(MIN_ZOOM);
  });
});

describe("zoomAt", () => {
  it("keeps the point under the cursor where it is", () => {
    const v = { x: 30, y: -20, k: 0.5 };
    const z = zoomAt(v, 2, 400, 100);
    // The graph point under (400, 100) before and after.
    expect((400 - v.x) / v.k).toBeCloseTo((400 - z.x) / z.k, 9);
    expect((100 - v.y) / v.k).toBeCloseTo((100 - z.y) / z.k, 9);
    expect(z.k).toBe(1);
  });
  it("stays within the zoom limits", () => {
    expect(zoomAt({ x: 0, y: 0, k: 2 }, 10, 0, 0).k).toBe(MAX_ZOOM);
    expect(zoomAt({ x: 0, y: 0, k: 0.03 }, 0.1, 0, 0).k).toBe(MIN_ZOOM);
  });
});

describe("centreOn, panBy, visibleRect", () => {
  it("puts a node in the middle of the screen", () => {
    const v = centreOn({ x: 0, y: 0, k: 0.1 }, { x: 5000, y: 2000, w: 150, h: 46 }, 800, 400, 1);
    expect(v.k).toBe(1);
    expect(v.x + 5075).toBe(400);
    expect(v.y + 2023).toBe(200);
    expect(onScreen(v, { x: 5000, y: 2000, w: 150, h: 46 }, 800, 400)).toBe(true);
  });
  it("pans by screen pixels and reports what is visible", () => {
    const v = panBy({ x: 0, y: 0, k: 2 }, -200, -100);
    const r = visibleRect(v, 800, 400);
    expect(r).toEqual({ x: 100, y: 50, w: 400, h: 200 });
    expect(intersects(r, { x: 90, y: 40, w: 20, h: 20 })).toBe(true);
    expect(intersects(r, { x: 0, y: 0, w: 20, h: 20 })).toBe(false);
    expect(visibleRect(v, 800, 400, 20).x).toBe(90);
  });
});
