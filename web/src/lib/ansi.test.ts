import { describe, expect, it } from "vitest";
import { applySgr, parseAnsi, plainText, styleClasses, xterm256 } from "./ansi";

describe("parseAnsi", () => {
  it("turns SGR colours into styled runs and drops the codes", () => {
    expect(parseAnsi("\x1b[32mINFO\x1b[0m ready")).toEqual([
      { text: "INFO", style: { fg: 2 } },
      { text: " ready", style: {} },
    ]);
    expect(plainText("\x1b[32mINFO\x1b[0m")).toBe("INFO");
  });

  it("bright, background, bold and partial resets", () => {
    const [r] = parseAnsi("\x1b[1;91;44mX");
    expect(r.style).toEqual({ bold: true, fg: 9, bg: 4 });
    expect(styleClasses(r.style)).toBe("ansi-fg-9 ansi-bg-4 ansi-bold");
    expect(parseAnsi("\x1b[1;31mA\x1b[22mB\x1b[39mC").map((x) => x.style))
      .toEqual([{ bold: true, fg: 1 }, { fg: 1 }, {}]);
    expect(parseAnsi("\x1b[31mA\x1b[mB")[1].style).toEqual({}); // ESC[m is a reset
  });

  it("256-colour and truecolor give a numeric rgb() or a basic class", () => {
    expect(parseAnsi("\x1b[38;5;196mX")[0].style.fg).toBe("rgb(255,0,0)");
    expect(parseAnsi("\x1b[38;5;3mX")[0].style.fg).toBe(3);
    expect(parseAnsi("\x1b[48;5;244mX")[0].style.bg).toBe(xterm256(244));
    expect(xterm256(244)).toBe("rgb(128,128,128)");
    expect(parseAnsi("\x1b[38;2;10;300;0mX")[0].style.fg).toBe("rgb(10,255,0)");
    expect(parseAnsi("\x1b[38:2:1:2:3mX")[0].style.fg).toBe("rgb(1,2,3)");
    // A value that is no number never reaches a style.
    expect(applySgr({}, [38, 2, NaN, 1, 1]).fg).toBe("rgb(0,1,1)");
  });

  it("strips every other escape and control character", () => {
    expect(plainText("\x1b[2K\x1b[1Gstep\x1b[A")).toBe("step");
    expect(plainText("\x1b]0;my title\x07text")).toBe("text");
    expect(plainText("\x1b]2;t\x1b\\text")).toBe("text");
    expect(plainText("a\x1b7b\x1b=c")).toBe("abc");
    expect(plainText("bell\x07 nul\x00 tab\tkept")).toBe("bell nul tab\tkept");
    expect(plainText("cut off \x1b[3")).toBe("cut off ");
    expect(plainText("\x1b[?25lhidden cursor\x1b[?25h")).toBe("hidden cursor");
  });

  it("keeps markup as text", () => {
    expect(parseAnsi("\x1b[31m<img src=x onerror=alert(1)>")[0].text).toBe("<img src=x onerror=alert(1)>");
  });

  it("merges neighbouring runs of one style", () => {
    expect(parseAnsi("\x1b[31ma\x1b[31mb")).toEqual([{ text: "ab", style: { fg: 1 } }]);
  });
});
