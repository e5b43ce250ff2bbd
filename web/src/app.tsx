// The shell: header with navigation and the connection state, and the routed view. The whole
// page re-renders through the throttled scheduler (at most once a second) and once a second
// for the clock, so relative times and ETAs tick without new data.
import { useEffect, useState } from "preact/hooks";
import { connectionState, needsLogin } from "./api/connection";
import { LoginView } from "./views/LoginView";
import { parseRoute, REPLACED_HASH, withRunsCursors, type Route } from "./lib/router";
import { useSlashKey } from "./lib/keys";
import { setTimeZone, timeZone } from "./lib/settings";
import { requestRender, setRenderer } from "./store/scheduler";
import { RunsView } from "./views/RunsView";
import { RunView } from "./views/RunView";
import { StageView } from "./views/StagePanel";
import { NewRunView } from "./views/NewRunView";
import { PivotView } from "./views/PivotView";
import { SweepView } from "./views/SweepView";
import { LineageView } from "./views/LineageView";
import { CompareView } from "./views/CompareView";
import { MetricRunsView } from "./views/MetricRunsView";
import { AgentsView } from "./views/AgentsView";
import { AuditView } from "./views/AuditView";
import { BudgetsView } from "./views/BudgetsView";

const CONN_TEXT = { live: "live", connecting: "connecting…", disconnected: "disconnected" };

function ConnectionBadge() {
  const s = connectionState();
  return (
    <span class={`conn conn-${s}`} data-testid="connection" title="connection to longhauld">
      <span class="dot" />
      {CONN_TEXT[s]}
    </span>
  );
}

/** Times in the browser's zone or in UTC (kept in localStorage). */
function ZoneToggle() {
  const utc = timeZone() === "utc";
  return (
    <button class="link zone" data-testid="tz-toggle" title="show times in UTC or in your time zone"
            onClick={() => setTimeZone(utc ? "local" : "utc")}>
      times: {utc ? "UTC" : "local"}
    </button>
  );
}

function Nav({ route }: { route: Route }) {
  const at = (v: string) => (route.view === v ? "active" : "");
  const runsActive = ["runs", "run", "stage", "pivot", "sweep", "lineage"].includes(route.view) ? "active" : "";
  return (
    <header class="top">
      <a class="brand" href="#/runs">longhaul</a>
      <nav>
        <a class={runsActive} href="#/runs">Runs</a>
        <a class={at("new")} href="#/new" data-testid="nav-new-run">New run</a>
        <a class={at("compare")} href="#/compare">Compare</a>
        <a class={at("metrics")} href="#/metrics">Metrics</a>
        <a class={at("agents")} href="#/agents">Agents</a>
        <a class={at("budgets")} href="#/budgets" data-testid="nav-budgets">Budgets</a>
        <a class={at("audit")} href="#/audit">Audit</a>
      </nav>
      <ZoneToggle />
      <ConnectionBadge />
    </header>
  );
}

function View({ route }: { route: Route }) {
  switch (route.view) {
    // The page's cursors are not the runs page's identity: paging keeps the ticked runs.
    case "runs": return <RunsView key={withRunsCursors(route.query, []).toString()} query={route.query} />;
    case "run": return <RunView key={route.run} id={route.run} initial={route.state} />;
    case "stage": return <StageView runId={route.run} stage={route.stage} log={route.log} />;
    case "pivot": return <PivotView id={route.run} />;
    case "sweep":
      return <SweepView key={`${route.run}/${route.sweep}`} runId={route.run} sweep={route.sweep}
                        state={route.state} />;
    case "lineage": return <LineageView runId={route.run} stage={route.stage} />;
    case "new": return <NewRunView />;
    case "compare": return <CompareView ids={route.runs} query={route.query} />;
    case "metrics": return <MetricRunsView query={route.query} />;
    case "agents": return <AgentsView />;
    case "audit": return <AuditView />;
    case "budgets": return <BudgetsView />;
    default: return <div class="card"><h2>Not found</h2><p>No page at {route.path}.</p></div>;
  }
}

export function App() {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const [, setFrame] = useState(0);
  useSlashKey();
  useEffect(() => {
    setRenderer(() => setFrame((n) => n + 1));
    const onHash = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onHash);
    window.addEventListener(REPLACED_HASH, onHash);
    const clock = setInterval(requestRender, 1000);
    return () => {
      window.removeEventListener("hashchange", onHash);
      window.removeEventListener(REPLACED_HASH, onHash);
      clearInterval(clock);
    };
  }, []);
  return (
    <div class="shell">
      <Nav route={route} />
      <main>{needsLogin() ? <LoginView /> : <View route={route} />}</main>
    </div>
  );
}
