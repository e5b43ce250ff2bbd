import { describe, expect, it } from "vitest";
import { LogText, chooseStream, collapseCarriageReturns, firstLineStart } from "./logtext";

const bytes = (s: string) => new TextEncoder().encode(s);
const texts = (t: LogText) => t.lines.map((l) => l.text);

describe("collapseCarriageReturns", () => {
  it("keeps only the last state of a progress line", () => {
    expect(collapseCarriageReturns("10%\r20%\r30% done")).toBe("30% done");
    expect(collapseCarriageReturns("plain")).toBe("plain");
    expect(collapseCarriageReturns("windows line\r")).toBe("windows line");
    expect(collapseCarriageReturns("a\rb\r")).toBe("b");
  });
});

describe("LogText", () => {
  it("joins chunks split mid-line and mid-character, with byte offsets", () => {
    const t = new LogText(5000, 100);
    const all = bytes("héllo wörld\nsecond ");
    t.append(all.slice(0, 2)); // cuts the two-byte é
    t.append(all.slice(2));
    expect(t.lines).toEqual([{ offset: 100, text: "héllo wörld" }]);
    expect(t.display().map((l) => l.text)).toEqual(["héllo wörld", "second "]);
    t.append(bytes("line\n"));
    // "héllo wörld\n" is 14 bytes (é and ö take two each).
    expect(t.lines).toEqual([{ offset: 100, text: "héllo wörld" }, { offset: 114, text: "second line" }]);
    expect(t.partial.length).toBe(0);
    expect(t.end).toBe(126);
  });

  it("collapses \\r progress lines and keeps a bounded number of lines", () => {
    const t = new LogText(3);
    t.append(bytes("a\nb\n1%\r50%\r100%\nc\nd\n"));
    expect(texts(t)).toEqual(["100%", "c", "d"]);
    expect(t.dropped).toBe(2);
    expect(t.first).toBe(4);
  });

  it("prepends earlier lines without passing the bound", () => {
    const t = new LogText(4, 8);
    t.append(bytes("c\nd\n"));
    t.prepend(bytes("x\ny\na\nb\n"));
    expect(texts(t)).toEqual(["a", "b", "c", "d"]);
    expect(t.lines.map((l) => l.offset)).toEqual([4, 6, 8, 10]);
  });

  it("finds the line that holds an offset", () => {
    const t = new LogText(5000, 50);
    t.append(bytes("aaa\nbbbb\ncc"));
    expect(t.lineAt(50)).toBe(0);
    expect(t.lineAt(53)).toBe(0);
    expect(t.lineAt(54)).toBe(1);
    expect(t.lineAt(59)).toBe(2); // the line in progress
    expect(t.lineAt(49)).toBe(-1);
    expect(t.lineAt(1000)).toBe(-1);
  });

  it("never interprets markup", () => {
    const t = new LogText();
    t.append(bytes("<img src=x onerror=alert(1)>\n"));
    expect(t.lines[0].text).toBe("<img src=x onerror=alert(1)>");
  });

  it("finds the first complete line of a chunk read mid-log", () => {
    expect(firstLineStart(bytes("tail of a line\nnext\n"))).toBe(15);
    expect(firstLineStart(bytes("no newline"))).toBe(0);
  });
});

describe("chooseStream", () => {
  it("opens a failed attempt's stderr when it holds something", () => {
    expect(chooseStream(undefined, true, { stdout: 10, stderr: 68 })).toBe("stderr");
    expect(chooseStream(undefined, true, { stdout: 10, stderr: 0 })).toBe("stdout");
    expect(chooseStream(undefined, true, {})).toBe("stdout"); // sizes unknown: the read says why
    expect(chooseStream(undefined, true, null)).toBe(""); // wait for the sizes
    expect(chooseStream(undefined, false, { stderr: 68 })).toBe("stdout");
    expect(chooseStream("stdout", true, { stderr: 68 })).toBe("stdout"); // a link chose
  });
});
