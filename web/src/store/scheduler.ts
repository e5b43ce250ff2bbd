// Renders are throttled: whatever arrives (stream updates, polls, the clock), the page
// re-renders at most once a second. A request made more than a second after the last render
// renders at once (so the first data paints without delay); otherwise it is folded into one
// render a second after the last.
export const RENDER_INTERVAL_MS = 1000;

type Renderer = () => void;

export class Throttle {
  private last = -Infinity;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly run: Renderer,
    private readonly now: () => number = () => Date.now(),
    private readonly interval = RENDER_INTERVAL_MS,
    private readonly schedule: (f: () => void, ms: number) => ReturnType<typeof setTimeout> =
      (f, ms) => setTimeout(f, ms),
  ) {}

  request(): void {
    if (this.timer !== null) return;
    const wait = this.last + this.interval - this.now();
    if (wait <= 0) {
      this.fire();
    } else {
      this.timer = this.schedule(() => {
        this.timer = null;
        this.fire();
      }, wait);
    }
  }

  /** Renders now (a pending render is dropped: this one covers it). */
  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.fire();
  }

  private fire(): void {
    this.last = this.now();
    this.run();
  }
}

let renderer: Renderer = () => {};
const throttle = new Throttle(() => renderer());

/** The app registers the function that re-renders the page. */
export function setRenderer(r: Renderer): void {
  renderer = r;
}

/** Asks for a re-render; folded into at most one per second. */
export function requestRender(): void {
  throttle.request();
}

/**
 * Renders at once, outside the throttle: for data a user waits for (a run's first snapshot, the
 * last piece of a big run's), not for routine updates.
 */
export function renderNow(): void {
  throttle.flush();
}
