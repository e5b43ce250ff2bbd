// Windowing of a long list of fixed-height rows: which rows a scroll container shows.

/** Runs with more stages than this open on the stage table (virtualised), the graph a tab away. */
export const LARGE_RUN_STAGES = 300;

export interface RowWindow {
  first: number; // index of the first row drawn
  last: number; // one past the last row drawn
  padTop: number; // px above the first drawn row
  padBottom: number; // px below the last drawn row
}

/**
 * The rows of a list of n rows of rowHeight px that a viewport of viewHeight px scrolled to
 * scrollTop shows, with `overscan` more on each side so that a fast scroll shows no gap.
 */
export function rowWindow(n: number, rowHeight: number, scrollTop: number, viewHeight: number,
                          overscan = 10): RowWindow {
  if (n <= 0) return { first: 0, last: 0, padTop: 0, padBottom: 0 };
  const top = Math.max(0, Math.min(scrollTop, n * rowHeight));
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  const last = Math.min(n, Math.ceil((top + Math.max(0, viewHeight)) / rowHeight) + overscan);
  return { first, last, padTop: first * rowHeight, padBottom: (n - last) * rowHeight };
}
