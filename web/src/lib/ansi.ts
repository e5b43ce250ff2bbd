// ANSI escape sequences in a log line, turned into styled text runs. Only SGR (ESC [ ... m) is
// honoured: the 8 basic and 8 bright colours (foreground and background) become classes
// ansi-fg-N / ansi-bg-N (N 0..15), 256-colour and truecolor values become an rgb() colour
// built from clamped numbers, and bold, dim, italic, underline and reset are kept. Every other
// sequence (cursor moves, erase, OSC window titles, ...) and every other control character
// but tab is dropped. The result is plain data: the view makes text nodes of it, never HTML.
// Each line starts unstyled (a colour left open at a line's end does not leak into the next).

export interface AnsiStyle {
  fg?: number | string; // 0..15: a class; a string: "rgb(r,g,b)" from numbers
  bg?: number | string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
}

export interface AnsiRun { text: string; style: AnsiStyle }

const ESC = "\x1b";

/** The rgb() colour of entry n (16..255) of the xterm 256-colour palette. */
export function xterm256(n: number): string {
  if (n < 232) {
    const i = n - 16;
    const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
    return rgb(level(Math.floor(i / 36)), level(Math.floor(i / 6) % 6), level(i % 6));
  }
  const g = 8 + (n - 232) * 10;
  return rgb(g, g, g);
}

function rgb(r: number, g: number, b: number): string {
  const c = (v: number) => Math.max(0, Math.min(255, Math.trunc(v) || 0));
  return `rgb(${c(r)},${c(g)},${c(b)})`;
}

/** A colour after 38/48: "5;N" or "2;R;G;B". Returns the colour and how many params it used. */
function extendedColour(p: number[], i: number): [number | string | undefined, number] {
  if (p[i + 1] === 5) {
    const n = p[i + 2];
    if (n === undefined || n < 0 || n > 255) return [undefined, 2];
    return [n < 16 ? n : xterm256(n), 2];
  }
  if (p[i + 1] === 2) return [rgb(p[i + 2] ?? 0, p[i + 3] ?? 0, p[i + 4] ?? 0), 4];
  return [undefined, 0];
}

/** Applies one SGR parameter list to `s` (a new object). */
export function applySgr(s: AnsiStyle, params: number[]): AnsiStyle {
  const out = { ...s };
  const p = params.length ? params : [0];
  for (let i = 0; i < p.length; i++) {
    const v = p[i];
    if (v === 0) {
      for (const k of Object.keys(out)) delete (out as any)[k];
    } else if (v === 1) out.bold = true;
    else if (v === 2) out.dim = true;
    else if (v === 3) out.italic = true;
    else if (v === 4) out.underline = true;
    else if (v === 22) { delete out.bold; delete out.dim; }
    else if (v === 23) delete out.italic;
    else if (v === 24) delete out.underline;
    else if (v >= 30 && v <= 37) out.fg = v - 30;
    else if (v >= 90 && v <= 97) out.fg = v - 90 + 8;
    else if (v === 39) delete out.fg;
    else if (v >= 40 && v <= 47) out.bg = v - 40;
    else if (v >= 100 && v <= 107) out.bg = v - 100 + 8;
    else if (v === 49) delete out.bg;
    else if (v === 38 || v === 48) {
      const [c, used] = extendedColour(p, i);
      if (c !== undefined) out[v === 38 ? "fg" : "bg"] = c;
      i += used;
    }
  }
  return out;
}

/** Where the escape sequence that starts at line[i] (an ESC) ends, and its SGR params if any. */
function escapeAt(line: string, i: number): { end: number; sgr?: number[] } {
  const kind = line[i + 1];
  if (kind === undefined) return { end: line.length };
  if (kind === "[") {
    let j = i + 2;
    while (j < line.length && !(line.charCodeAt(j) >= 0x40 && line.charCodeAt(j) <= 0x7e)) j++;
    if (j >= line.length) return { end: line.length };
    const body = line.slice(i + 2, j);
    if (line[j] === "m" && /^[0-9;:]*$/.test(body)) {
      return { end: j + 1, sgr: body === "" ? [] : body.split(/[;:]/).map((x) => (x === "" ? 0 : Number(x))) };
    }
    return { end: j + 1 };
  }
  if ("]P_^X".includes(kind)) { // OSC and other strings: up to BEL or ESC \
    for (let j = i + 2; j < line.length; j++) {
      if (line[j] === "\x07") return { end: j + 1 };
      if (line[j] === ESC && line[j + 1] === "\\") return { end: j + 2 };
    }
    return { end: line.length };
  }
  return { end: i + 2 };
}

// C0 controls but tab, DEL and C1 controls: never shown.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f\x80-\x9f]/g;

/** The runs of one line (no newline, \r redraws already collapsed). */
export function parseAnsi(line: string): AnsiRun[] {
  const runs: AnsiRun[] = [];
  let style: AnsiStyle = {};
  let text = "";
  const flush = () => {
    const t = text.replace(CONTROL, "");
    if (t) {
      const last = runs[runs.length - 1];
      if (last && sameStyle(last.style, style)) last.text += t;
      else runs.push({ text: t, style });
    }
    text = "";
  };
  let i = 0;
  while (i < line.length) {
    const e = line.indexOf(ESC, i);
    if (e < 0) {
      text += line.slice(i);
      break;
    }
    text += line.slice(i, e);
    const { end, sgr } = escapeAt(line, e);
    if (sgr) {
      flush();
      style = applySgr(style, sgr);
    }
    i = end;
  }
  flush();
  return runs;
}

/** The line as shown: escapes and controls left out. */
export function plainText(line: string): string {
  return parseAnsi(line).map((r) => r.text).join("");
}

function sameStyle(a: AnsiStyle, b: AnsiStyle): boolean {
  return a.fg === b.fg && a.bg === b.bg && !!a.bold === !!b.bold && !!a.dim === !!b.dim &&
    !!a.italic === !!b.italic && !!a.underline === !!b.underline;
}

/** The class names of a style (ansi-fg-N, ansi-bold, ...); "" when plain. */
export function styleClasses(s: AnsiStyle): string {
  const c: string[] = [];
  if (typeof s.fg === "number") c.push(`ansi-fg-${s.fg}`);
  if (typeof s.bg === "number") c.push(`ansi-bg-${s.bg}`);
  if (s.bold) c.push("ansi-bold");
  if (s.dim) c.push("ansi-dim");
  if (s.italic) c.push("ansi-italic");
  if (s.underline) c.push("ansi-underline");
  return c.join(" ");
}
