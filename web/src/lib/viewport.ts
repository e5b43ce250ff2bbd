// Pan and zoom of the stage graph: a view is a translation (x, y, in screen pixels) and a scale
// k, so a point p of the graph is drawn at (x + p.x * k, y + p.y * k).

export interface View {
  x: number;
  y: number;
  k: number;
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export const MIN_ZOOM = 0.02;
export const MAX_ZOOM = 2.5;
/** Each zoom button press or wheel notch scales by this. */
export const ZOOM_STEP = 1.25;

const clampK = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

/** The whole graph (w × h) in a screen of sw × sh, centred, never larger than 1:1. */
export function fitView(w: number, h: number, sw: number, sh: number, pad = 12): View {
  if (w <= 0 || h <= 0 || sw <= 0 || sh <= 0) return { x: 0, y: 0, k: 1 };
  const k = clampK(Math.min(1, (sw - 2 * pad) / w, (sh - 2 * pad) / h));
  return { x: (sw - w * k) / 2, y: (sh - h * k) / 2, k };
}

/** The view scaled by `factor` about the screen point (px, py), which stays where it is. */
export function zoomAt(v: View, factor: number, px: number, py: number): View {
  const k = clampK(v.k * factor);
  const f = k / v.k;
  return { x: px - (px - v.x) * f, y: py - (py - v.y) * f, k };
}

/** The view moved by (dx, dy) screen pixels. */
export function panBy(v: View, dx: number, dy: number): View {
  return { x: v.x + dx, y: v.y + dy, k: v.k };
}

/** The view at scale k (default: the current one) with the graph's rect r at the screen's centre. */
export function centreOn(v: View, r: Rect, sw: number, sh: number, k = v.k): View {
  const kk = clampK(k);
  return { x: sw / 2 - (r.x + r.w / 2) * kk, y: sh / 2 - (r.y + r.h / 2) * kk, k: kk };
}

/** The part of the graph the screen shows, grown by `margin` screen pixels on each side. */
export function visibleRect(v: View, sw: number, sh: number, margin = 0): Rect {
  return {
    x: (-v.x - margin) / v.k, y: (-v.y - margin) / v.k,
    w: (sw + 2 * margin) / v.k, h: (sh + 2 * margin) / v.k,
  };
}

/** Whether the rects overlap. */
export function intersects(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/** Whether r lies wholly on the screen. */
export function onScreen(v: View, r: Rect, sw: number, sh: number): boolean {
  const x = v.x + r.x * v.k;
  const y = v.y + r.y * v.k;
  return x >= 0 && y >= 0 && x + r.w * v.k <= sw && y + r.h * v.k <= sh;
}
