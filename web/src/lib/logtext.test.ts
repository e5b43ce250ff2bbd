import { describe, expect, it } from "vitest";
import { LogText, collapseCarriageReturns, firstLineStart } from "./logtext";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("collapseCarriageReturns", () => {
  it("keeps only the last state of a progress line", () => {
    expect(collapseCarriageReturns("10%\r20%\r30% done")).toBe("30% done");
    expect(collapseCarriageReturns("plain")).toBe("plain");
    expect(collapseCarriageReturns("windows line\r")).toBe("windows line");
    expect(collapseCarriageReturns("a\rb\r")).toBe("b");
  });
});

describe("LogText", () => {
  it("joins chunks split mid-line and mid-character", () => {
    const t = new LogText();
    const all = bytes("héllo wörld\nsecond ");
    t.append(all.slice(0, 2)); // cuts the two-byte é
    t.append(all.slice(2));
    expect(t.lines).toEqual(["héllo wörld"]);
    expect(t.display()).toEqual(["héllo wörld", "second "]);
    t.append(bytes("line\n"));
    expect(t.lines).toEqual(["héllo wörld", "second line"]);
    expect(t.partial).toBe("");
  });

  it("collapses \\r progress lines and keeps a bounded number of lines", () => {
    const t = new LogText(3);
    t.append(bytes("a\nb\n1%\r50%\r100%\nc\nd\n"));
    expect(t.lines).toEqual(["100%", "c", "d"]);
    expect(t.dropped).toBe(2);
  });

  it("prepends earlier lines without passing the bound", () => {
    const t = new LogText(4);
    t.append(bytes("c\nd\n"));
    t.prepend(bytes("x\ny\na\nb\n"));
    expect(t.lines).toEqual(["a", "b", "c", "d"]);
  });

  it("never interprets markup", () => {
    const t = new LogText();
    t.append(bytes("<img src=x onerror=alert(1)>\n"));
    expect(t.lines[0]).toBe("<img src=x onerror=alert(1)>");
  });

  it("finds the first complete line of a chunk read mid-log", () => {
    expect(firstLineStart(bytes("tail of a line\nnext\n"))).toBe(15);
    expect(firstLineStart(bytes("no newline"))).toBe(0);
  });
});
