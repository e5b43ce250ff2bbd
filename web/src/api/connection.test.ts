import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError, getRun } from "./client";
import { connectionState } from "./connection";

const answer = (status: number, body: unknown) => () =>
  Promise.resolve(new Response(body === null ? "bad gateway" : JSON.stringify(body),
    { status, headers: { "Content-Type": body === null ? "text/plain" : "application/json" } }));

async function failure(): Promise<ApiError> {
  try {
    await getRun(999);
  } catch (e) {
    return e as ApiError;
  }
  throw new Error("getRun did not fail");
}

describe("the connection state", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("is disconnected only when longhauld does not answer", async () => {
    vi.stubGlobal("fetch", vi.fn(() => Promise.reject(new TypeError("connection refused"))));
    expect((await failure()).status).toBe(0);
    expect(connectionState()).toBe("disconnected");

    // A 404 is an answer: no such run.
    vi.stubGlobal("fetch", vi.fn(answer(404, { error: "no run 999", code: "NOT_FOUND" })));
    const e = await failure();
    expect([e.status, e.message, e.code]).toEqual([404, "no run 999", "NOT_FOUND"]);
    expect(connectionState()).toBe("live");

    // A 502 that is not longhauld's (a proxy's): longhauld is not answering.
    vi.stubGlobal("fetch", vi.fn(answer(502, null)));
    expect((await failure()).status).toBe(502);
    expect(connectionState()).toBe("disconnected");

    // longhauld's own 503 (an agent not connected) is an answer.
    vi.stubGlobal("fetch", vi.fn(answer(503, { error: "agent n1 is not connected", code: "UNAVAILABLE" })));
    expect((await failure()).message).toBe("agent n1 is not connected");
    expect(connectionState()).toBe("live");
  });
});
