// A log's lines with their colours: each line a span of text nodes and spans (the runs
// ansi.ts parsed), never HTML, then a newline, so the pane's text is the log's text. The line at `highlight` (a byte offset) is marked and
// scrolled into view once. Parsed runs are cached per line object.
import { Component, Fragment } from "preact";
import { type AnsiRun, type AnsiStyle, parseAnsi, styleClasses } from "../lib/ansi";
import type { LogLine } from "../lib/logtext";

const parsed = new WeakMap<LogLine, AnsiRun[]>();

function runsOf(line: LogLine): AnsiRun[] {
  let r = parsed.get(line);
  if (!r) {
    r = parseAnsi(line.text);
    parsed.set(line, r);
  }
  return r;
}

function colours(s: AnsiStyle): Record<string, string> | undefined {
  const fg = typeof s.fg === "string" ? s.fg : undefined;
  const bg = typeof s.bg === "string" ? s.bg : undefined;
  if (!fg && !bg) return undefined;
  // Only rgb(n,n,n) built from numbers (ansi.ts) ever reaches here.
  return { ...(fg ? { color: fg } : {}), ...(bg ? { backgroundColor: bg } : {}) };
}

/** The styled text of one line (runs of spans). */
export function AnsiText({ runs }: { runs: AnsiRun[] }) {
  return (
    <>
      {runs.map((r, i) => {
        const cls = styleClasses(r.style);
        const style = colours(r.style);
        return cls || style ? <span key={i} class={cls || undefined} style={style}>{r.text}</span> : r.text;
      })}
    </>
  );
}

/** One raw line (escape sequences in) as styled text. */
export function AnsiLine({ text }: { text: string }) {
  return <AnsiText runs={parseAnsi(text)} />;
}

interface Props {
  lines: LogLine[];
  /** Changes whenever `lines` does (the model is mutated in place). */
  version: number;
  highlight: number; // -1: none
}

export class LogLines extends Component<Props> {
  shouldComponentUpdate(next: Props): boolean {
    return next.version !== this.props.version || next.highlight !== this.props.highlight;
  }

  render({ lines, highlight }: Props) {
    return (
      <>
        {lines.map((l, i) => (
          <Fragment key={l.offset}>
            <span class={i === highlight ? "ll hl" : "ll"} data-offset={l.offset}
                  data-hl={i === highlight ? "1" : undefined}>
              <AnsiText runs={runsOf(l)} />
            </span>
            {i < lines.length - 1 ? "\n" : ""}
          </Fragment>
        ))}
      </>
    );
  }
}
