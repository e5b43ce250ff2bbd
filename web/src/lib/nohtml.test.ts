// Stage text must never be parsed as HTML: no source file may use the APIs that would.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = path.join(dir, f);
    if (statSync(p).isDirectory()) return sources(p);
    return /\.(ts|tsx)$/.test(f) && !f.endsWith(".test.ts") ? [p] : [];
  });
}

describe("no HTML from strings", () => {
  it("no source uses innerHTML, outerHTML, insertAdjacentHTML, document.write or dangerouslySetInnerHTML", () => {
    const root = path.resolve(__dirname, "..");
    const files = sources(root);
    expect(files.length).toBeGreaterThan(10);
    const bad = /innerHTML|outerHTML|insertAdjacentHTML|document\.write|dangerouslySetInnerHTML|createContextualFragment/;
    expect(files.filter((f) => bad.test(readFileSync(f, "utf8")))).toEqual([]);
  });
});
