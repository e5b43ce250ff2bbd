import { beforeEach, describe, expect, it, vi } from "vitest";

const calls: string[] = [];
vi.mock("./scheduler", () => ({
  renderNow: () => calls.push("now"),
  requestRender: () => calls.push("throttled"),
}));

const { refresh } = await import("./resource");

describe("resource renders", () => {
  beforeEach(() => { calls.length = 0; });
  it("renders a key's first answer at once and throttles the later ones", async () => {
    await refresh("k1", async () => 1);
    expect(calls).toEqual(["now"]);
    await refresh("k1", async () => 2);
    expect(calls).toEqual(["now", "throttled"]);
  });
  it("draws the first data at once even after a failed first load", async () => {
    await refresh("k2", async () => { throw new Error("down"); });
    await refresh("k2", async () => 3);
    expect(calls).toEqual(["throttled", "now"]);
  });
});
