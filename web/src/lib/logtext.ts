// The log viewer's text model: bytes arrive in chunks (the tail first, later chunks appended,
// earlier chunks prepended); the viewer keeps at most `maxLines` complete lines, shows a
// carriage-return progress line only as its last state, and never parses anything as HTML.

/** A line as a terminal shows it: only what follows its last \r (a trailing \r is CRLF). */
export function collapseCarriageReturns(line: string): string {
  const s = line.endsWith("\r") ? line.slice(0, -1) : line;
  const i = s.lastIndexOf("\r");
  return i < 0 ? s : s.slice(i + 1);
}

export class LogText {
  /** Complete lines, collapsed. */
  lines: string[] = [];
  /** The text after the last newline (a line still being written), raw. */
  partial = "";
  /** Lines dropped from the top to stay within maxLines. */
  dropped = 0;
  private decoder = new TextDecoder("utf-8");

  constructor(readonly maxLines = 5000) {}

  /** Appends bytes that follow what was read so far. */
  append(bytes: Uint8Array): void {
    const text = this.partial + this.decoder.decode(bytes, { stream: true });
    const parts = text.split("\n");
    this.partial = parts.pop() ?? "";
    for (const p of parts) this.lines.push(collapseCarriageReturns(p));
    this.trimTop();
  }

  /**
   * Prepends bytes that end where the text so far begins ("load earlier"), at a line start.
   * Lines past maxLines are not added.
   */
  prepend(bytes: Uint8Array): void {
    const parts = new TextDecoder("utf-8").decode(bytes).split("\n");
    const tail = parts.pop() ?? "";
    if (tail) parts.push(tail);
    const room = Math.max(0, this.maxLines - this.lines.length);
    const added = parts.slice(Math.max(0, parts.length - room)).map(collapseCarriageReturns);
    this.lines = added.concat(this.lines);
  }

  /** What to display: the complete lines and the line in progress (collapsed). */
  display(): string[] {
    return this.partial ? [...this.lines, collapseCarriageReturns(this.partial)] : this.lines;
  }

  private trimTop(): void {
    const over = this.lines.length - this.maxLines;
    if (over > 0) {
      this.lines.splice(0, over);
      this.dropped += over;
    }
  }
}

/** The index just after the first newline of bytes (0 when there is none): where the first
 * complete line starts in a chunk read from the middle of a log. */
export function firstLineStart(bytes: Uint8Array): number {
  const i = bytes.indexOf(10);
  return i < 0 ? 0 : i + 1;
}
