import { describe, expect, it } from "vitest";
import { Throttle } from "./scheduler";

describe("Throttle", () => {
  it("renders at once, then folds requests into one render a second later", () => {
    let now = 10_000;
    const timers: Array<{ at: number; f: () => void }> = [];
    let renders = 0;
    const t = new Throttle(() => renders++, () => now, 1000, (f, ms) => {
      timers.push({ at: now + ms, f });
      return 0 as any;
    });
    t.request();
    expect(renders).toBe(1);
    now += 100;
    t.request();
    t.request();
    t.request();
    expect(renders).toBe(1);
    expect(timers.length).toBe(1);
    expect(timers[0].at).toBe(11_000);
    now = timers[0].at;
    timers[0].f();
    expect(renders).toBe(2);
    now += 5000;
    t.request();
    expect(renders).toBe(3);
    expect(timers.length).toBe(1);
  });

  it("flush renders at once and drops the pending render", () => {
    let now = 10_000;
    const timers: Array<{ at: number; f: () => void }> = [];
    let renders = 0;
    const t = new Throttle(() => renders++, () => now, 1000, (f, ms) => {
      timers.push({ at: now + ms, f });
      return 0 as any;
    });
    t.request();
    now += 100;
    t.request(); // folded into a render at 11,000
    expect(renders).toBe(1);
    t.flush();
    expect(renders).toBe(2);
    now += 100;
    t.request(); // a second after the flush, not after the first render
    expect(timers.at(-1)!.at).toBe(11_100);
  });
});
