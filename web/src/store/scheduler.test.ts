import { describe, expect, it } from "vitest";
import { Throttle } from "./scheduler";

/** A throttle of 1 s on a fake clock (at 10,000 ms) whose timers are kept to be fired by hand. */
function fakeThrottle() {
  const f = {
    now: 10_000, renders: 0, timers: [] as Array<{ at: number; f: () => void }>,
    t: null as unknown as Throttle,
  };
  f.t = new Throttle(() => f.renders++, () => f.now, 1000, (fn, ms) => {
    f.timers.push({ at: f.now + ms, f: fn });
    return 0 as any;
  });
  return f;
}

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
    const f = fakeThrottle();
    f.t.request();
    f.now += 100;
    f.t.request(); // folded into a render at 11,000
    expect(f.renders).toBe(1);
    f.t.flush();
    expect(f.renders).toBe(2);
    f.now += 100;
    f.t.request(); // a second after the flush, not after the first render
    expect(f.timers.at(-1)!.at).toBe(11_100);
  });
});
