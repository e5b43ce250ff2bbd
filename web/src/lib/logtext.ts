// The log viewer's text model: a window of a log, as bytes read in chunks (the tail or a
// window at any offset first, later chunks appended, earlier chunks prepended). It keeps at
// most `maxLines` complete lines, each with the byte offset where it starts in the log, shows
// a carriage-return progress line only as its last state, and never parses anything as HTML
// (escape sequences are left for ansi.ts to turn into styled runs).

/** A line as a terminal shows it: only what follows its last \r (a trailing \r is CRLF). */
export function collapseCarriageReturns(line: string): string {
  const s = line.endsWith("\r") ? line.slice(0, -1) : line;
  const i = s.lastIndexOf("\r");
  return i < 0 ? s : s.slice(i + 1);
}

export interface LogLine {
  offset: number; // of the line's first byte in the log
  text: string; // collapsed, escape sequences still in
}

const NEWLINE = 10;

export class LogText {
  /** Complete lines, collapsed, in order. */
  lines: LogLine[] = [];
  /** The bytes after the last newline (a line still being written). */
  partial: Uint8Array = new Uint8Array(0);
  /** Where `partial` starts in the log. */
  partialOffset: number;
  /** Lines dropped from the top to stay within maxLines. */
  dropped = 0;
  private decoder = new TextDecoder("utf-8");

  /** `start`: the offset of the first byte that will be appended (a line start). */
  constructor(readonly maxLines = 5000, start = 0) {
    this.partialOffset = start;
  }

  /** The offset of the first byte held. */
  get first(): number {
    return this.lines.length ? this.lines[0].offset : this.partialOffset;
  }

  /** The offset just after the last byte held: where the next read starts. */
  get end(): number {
    return this.partialOffset + this.partial.length;
  }

  /** Appends bytes that follow what was read so far. */
  append(bytes: Uint8Array): void {
    const all = this.partial.length ? concat(this.partial, bytes) : bytes;
    const base = this.partialOffset;
    let start = 0;
    for (let nl = all.indexOf(NEWLINE); nl >= 0; nl = all.indexOf(NEWLINE, start)) {
      this.lines.push({ offset: base + start, text: this.decodeLine(all.subarray(start, nl)) });
      start = nl + 1;
    }
    this.partial = all.slice(start);
    this.partialOffset = base + start;
    this.trimTop();
  }

  /**
   * Prepends bytes that end where the text so far begins ("load earlier"), starting at a line
   * start. Lines past maxLines are not added (the ones nearest the window are kept).
   */
  prepend(bytes: Uint8Array): void {
    const base = this.first - bytes.length;
    const added: LogLine[] = [];
    let start = 0;
    while (start < bytes.length) {
      let nl = bytes.indexOf(NEWLINE, start);
      if (nl < 0) nl = bytes.length;
      added.push({ offset: base + start, text: this.decodeLine(bytes.subarray(start, nl)) });
      start = nl + 1;
    }
    const room = Math.max(0, this.maxLines - this.lines.length);
    this.lines = added.slice(Math.max(0, added.length - room)).concat(this.lines);
  }

  /** What to display: the complete lines and the line in progress (collapsed). */
  display(): LogLine[] {
    if (!this.partial.length) return this.lines;
    return [...this.lines, { offset: this.partialOffset, text: this.decodeLine(this.partial) }];
  }

  /** The index in display() of the line that holds byte `offset` (-1: not in the window). */
  lineAt(offset: number): number {
    const shown = this.display();
    if (!shown.length || offset < shown[0].offset || offset > this.end) return -1;
    let lo = 0;
    let hi = shown.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (shown[mid].offset <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  private decodeLine(bytes: Uint8Array): string {
    return collapseCarriageReturns(this.decoder.decode(bytes));
  }

  private trimTop(): void {
    const over = this.lines.length - this.maxLines;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** The index just after the first newline of bytes (0 when there is none): where the first
 * complete line starts in a chunk read from the middle of a log. */
export function firstLineStart(bytes: Uint8Array): number {
  const i = bytes.indexOf(NEWLINE);
  return i < 0 ? 0 : i + 1;
}

/**
 * The stream the viewer opens: the one a link names; else, for an attempt that failed,
 * stderr when it holds something (its error is usually there); else stdout. "" while a failed
 * attempt's sizes are not known yet (null): wait for them rather than open stdout first.
 */
export function chooseStream(named: string | undefined, failed: boolean,
                             sizes: Record<string, number> | null): string {
  if (named) return named;
  if (!failed) return "stdout";
  if (sizes === null) return "";
  return (sizes.stderr ?? 0) > 0 ? "stderr" : "stdout";
}
