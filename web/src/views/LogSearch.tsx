// Search in a stage's log: longhauld searches the whole stream (GET .../logs/search, case-
// insensitive, matching lines as they are shown: colours left out) and answers at most
// PAGE matching lines with their byte offsets; "more" asks for the ones after. Picking a
// match opens the log there.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, searchLog } from "../api/client";
import type { LogMatch, LogSearchResult } from "../api/types";
import { formatBytes, formatNumber } from "../lib/format";
import { AnsiLine } from "./LogLines";

const PAGE = 100;

interface Found {
  matches: LogMatch[];
  last: LogSearchResult | null;
  error: string;
  busy: boolean;
}

const none: Found = { matches: [], last: null, error: "", busy: false };

export function LogSearch({ runId, stage, attempt, stream, query, generation, onQuery, onPick }: {
  runId: number; stage: string; attempt: number; stream: string; query: string;
  generation: number;
  onQuery: (q: string) => void;
  onPick: (offset: number) => void;
}) {
  const [draft, setDraft] = useState(query);
  const [found, setFound] = useState<Found>(none);
  useEffect(() => setDraft(query), [query]);

  const latest = useRef(0); // the search whose answer counts: a newer one makes older stale
  const search = async (from: number, before: LogMatch[]) => {
    const mine = ++latest.current;
    const isStale = () => mine !== latest.current;
    setFound({ matches: before, last: null, error: "", busy: true });
    try {
      const r = await searchLog(runId, stage, attempt, stream, query, from, PAGE);
      if (!isStale()) setFound({ matches: before.concat(r.matches), last: r, error: "", busy: false });
    } catch (e) {
      if (!isStale()) {
        setFound({ matches: before, last: null, error: e instanceof ApiError ? e.message : String(e), busy: false });
      }
    }
  };

  useEffect(() => {
    if (!query) {
      setFound(none);
      return;
    }
    void search(0, []);
    return () => { latest.current++; };
  }, [runId, stage, attempt, stream, query, generation]);

  const last = found.last;
  return (
    <div class="log-search">
      <form onSubmit={(e) => { e.preventDefault(); onQuery(draft.trim()); }}>
        <input type="search" placeholder={`search ${stream}`} value={draft} data-testid="log-search-input" data-search
               onInput={(e) => setDraft((e.target as HTMLInputElement).value)} />
        <button type="submit" data-testid="log-search">Search</button>
        {query && <button type="button" class="link" onClick={() => onQuery("")}>clear</button>}
        <span class="muted" data-testid="log-match-count">
          {found.busy ? "searching…"
            : found.error ? ""
            : last ? `${found.matches.length}${last.more ? "+" : ""} matching line${found.matches.length === 1 && !last.more ? "" : "s"} in ${formatBytes(last.end_offset)}${last.more ? ` — more after byte ${formatNumber(last.next_offset)}` : ""}`
            : ""}
        </span>
        {last?.more && !found.busy && (
          <button type="button" data-testid="log-more-matches"
                  onClick={() => void search(last.next_offset, found.matches)}>
            Next {PAGE}
          </button>
        )}
      </form>
      {found.error && <div class="log-error small" role="alert">{found.error}</div>}
      {found.matches.length > 0 && (
        <ol class="log-matches" data-testid="log-matches">
          {found.matches.map((m) => (
            <li key={m.offset}>
              <button class="link" data-testid="log-match" data-offset={m.offset} onClick={() => onPick(m.offset)}>
                <span class="mono muted">{formatNumber(m.offset)}</span>
                <span class="mono"><AnsiLine text={m.line} />{m.truncated ? "…" : ""}</span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}
