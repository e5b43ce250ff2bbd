import { describe, expect, it } from "vitest";
import { tagSources, tagSourceText, tagsOnRun } from "./tags";

const tag = (name: string, stage: string) => ({
  name, run_id: 41, stage, attempt_id: 0, set_by: "", set_at_ms: 0,
});
const use = (t: string, key: string, run: number, stage: string) => ({
  tag: t, key, value: "v", run_id: run, stage,
});

describe("tagsOnRun", () => {
  it("names each tag with its stage, by name", () => {
    expect(tagsOnRun([tag("zeta", "prep"), tag("best-drafter", "train")]))
      .toEqual(["best-drafter (train)", "zeta (prep)"]);
    expect(tagsOnRun([])).toEqual([]);
  });
});

describe("tagSources", () => {
  it("gives one source a tag, whatever it read of it", () => {
    const s = tagSources([
      use("best-drafter", "best-drafter.run", 41, "train"),
      use("best-drafter", "best-drafter.outputs.drafter", 41, "train"),
      use("baseline", "baseline.outputs.model", 12, "finetune"),
    ]);
    expect(s).toEqual([
      { tag: "baseline", run: 12, stage: "finetune" },
      { tag: "best-drafter", run: 41, stage: "train" },
    ]);
    expect(tagSourceText(s[1])).toBe("tags.best-drafter -> run 41 train");
  });
});
