import { describe, expect, it } from "vitest";
import type { Run } from "../api/types";
import {
  formErrors, locatedErrors, offsetOf, overrides, paramError, paramKind, seenWorkflows, submitKey,
  submitRequest,
} from "./submit";

const declared = [
  { name: "steps", default_value: "20", line: 4 },
  { name: "lr", default_value: "0.1", line: 5 },
  { name: "fast", default_value: "true", line: 6 },
  { name: "model", default_value: "/models/x", line: 7 },
];

describe("params", () => {
  it("takes each param's kind from its default as written", () => {
    expect(declared.map((p) => paramKind(p.default_value))).toEqual(["int", "number", "bool", "text"]);
    expect(paramKind("1e-4")).toBe("number");
    expect(paramKind("")).toBe("text");
  });
  it("says why a value does not fit its kind", () => {
    expect(paramError("int", "12")).toBe("");
    expect(paramError("int", "1.5")).toBe("'1.5' is not an integer");
    expect(paramError("number", "abc")).toBe("'abc' is not a number");
    expect(paramError("bool", "maybe")).toBe("'maybe' is not true or false");
    expect(paramError("text", "anything at all")).toBe("");
    expect(formErrors(declared, { steps: "x", lr: "0.2" })).toEqual({ steps: "'x' is not an integer" });
  });
  it("sends only the values that differ from the defaults", () => {
    expect(overrides(declared, { steps: "20", lr: " 0.2 ", fast: "false" })).toEqual({ lr: "0.2", fast: "false" });
  });
  it("keys a request by everything it sends", () => {
    const a = submitRequest("name: a", "a.yaml", { lr: "0.2", steps: "3" }, false);
    const b = submitRequest("name: a", "a.yaml", { steps: "3", lr: "0.2" }, false);
    expect(submitKey(a)).toBe(submitKey(b));
    expect(submitKey(a)).not.toBe(submitKey(submitRequest("name: b", "a.yaml", a.params, false)));
    expect(submitKey(a)).not.toBe(submitKey(submitRequest("name: a", "a.yaml", a.params, true)));
  });
});

describe("errors", () => {
  it("splits the server's message into file:line:col and what", () => {
    const e = locatedErrors("w.yaml:12:5: unknown key 'neds' in stage 'a' (did you mean 'needs'?)\n" +
      "c:/x/w.yaml:3:1: stage 'b': missing required key 'run'\nno such thing\n");
    expect(e.map((x) => [x.path, x.line, x.col])).toEqual([["w.yaml", 12, 5], ["c:/x/w.yaml", 3, 1], ["", 0, 0]]);
    expect(e[0].message).toBe("unknown key 'neds' in stage 'a' (did you mean 'needs'?)");
    expect(e[2].text).toBe("no such thing");
  });
  it("finds line:col in the text", () => {
    const t = "name: a\nstages:\n  x: 1\n";
    expect(offsetOf(t, 1, 1)).toBe(0);
    expect(offsetOf(t, 3, 3)).toBe(t.indexOf("x:"));
    expect(offsetOf(t, 99, 1)).toBe(t.length);
  });
});

describe("seenWorkflows", () => {
  it("lists each workflow name once, with its newest run", () => {
    const run = (id: number, name: string, path: string) => ({ id, workflow_name: name, workflow_path: path }) as Run;
    const seen = seenWorkflows([run(9, "b", "b2.yaml"), run(7, "a", "a.yaml"), run(3, "b", "b1.yaml")]);
    expect(seen).toEqual([
      { name: "a", run: 7, path: "a.yaml", runs: 1 },
      { name: "b", run: 9, path: "b2.yaml", runs: 2 },
    ]);
  });
});
