// Hash routes: #/runs, #/runs/12, #/runs/12/stages/datagen, #/runs/12/pivot,
// #/compare?runs=3,4, #/agents, #/audit. Pure parsing; app.tsx listens to hashchange.
// A stage's log view is in its query, so a link shows the same lines:
// #/runs/12/stages/train?attempt=2&stream=stderr&at=1048576&q=error.

/** Where the log viewer is: every field optional (absent: the latest attempt's tail). */
export interface LogLocation {
  attempt?: number; // 0 or absent: the latest
  stream?: string; // "stdout" or "stderr"; absent: the viewer chooses
  at?: number; // the byte offset shown (and highlighted); absent: the end, following
  q?: string; // the search
}

export function parseLogLocation(query: URLSearchParams): LogLocation {
  const loc: LogLocation = {};
  const num = (k: string) => {
    const v = query.get(k);
    return v !== null && /^\d{1,15}$/.test(v) ? Number(v) : undefined;
  };
  const attempt = num("attempt");
  if (attempt) loc.attempt = attempt;
  const stream = query.get("stream");
  if (stream === "stdout" || stream === "stderr") loc.stream = stream;
  const at = num("at");
  if (at !== undefined) loc.at = at;
  const q = query.get("q");
  if (q) loc.q = q;
  return loc;
}

function logQuery(loc: LogLocation): string {
  const q = new URLSearchParams();
  if (loc.attempt) q.set("attempt", String(loc.attempt));
  if (loc.stream) q.set("stream", loc.stream);
  if (loc.at !== undefined) q.set("at", String(loc.at));
  if (loc.q) q.set("q", loc.q);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export type Route =
  | { view: "runs"; query: URLSearchParams }
  | { view: "run"; run: number }
  | { view: "stage"; run: number; stage: string; log: LogLocation }
  | { view: "pivot"; run: number }
  | { view: "compare"; runs: number[]; query: URLSearchParams }
  | { view: "agents" }
  | { view: "audit" }
  | { view: "notfound"; path: string };

export function parseRoute(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const [path, qs = ""] = h.split("?", 2);
  const query = new URLSearchParams(qs);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === "runs")) {
    return { view: "runs", query };
  }
  if (parts[0] === "runs" && /^\d+$/.test(parts[1] ?? "")) {
    const run = Number(parts[1]);
    if (parts.length === 2) return { view: "run", run };
    if (parts.length === 3 && parts[2] === "pivot") return { view: "pivot", run };
    if (parts.length === 4 && parts[2] === "stages") {
      return { view: "stage", run, stage: parts[3], log: parseLogLocation(query) };
    }
  }
  if (parts[0] === "compare" && parts.length === 1) {
    const runs = (query.get("runs") ?? "").split(",").map((s) => Number(s.trim()))
      .filter((n) => Number.isInteger(n) && n > 0);
    return { view: "compare", runs, query };
  }
  if (parts[0] === "agents" && parts.length === 1) return { view: "agents" };
  if (parts[0] === "audit" && parts.length === 1) return { view: "audit" };
  return { view: "notfound", path };
}

export const href = {
  runs: (q?: URLSearchParams) => (q && q.toString() ? `#/runs?${q}` : "#/runs"),
  run: (id: number) => `#/runs/${id}`,
  stage: (id: number, stage: string, log: LogLocation = {}) =>
    `#/runs/${id}/stages/${encodeURIComponent(stage)}${logQuery(log)}`,
  pivot: (id: number) => `#/runs/${id}/pivot`,
  compare: (ids: number[]) => `#/compare?runs=${ids.join(",")}`,
  agents: () => "#/agents",
  audit: () => "#/audit",
};

export function navigate(to: string): void {
  if (location.hash !== to) location.hash = to;
}
