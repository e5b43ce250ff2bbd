#!/usr/bin/env bash
# The README's first command. On a fresh Debian 12 machine: installs what longhaul needs,
# builds it, starts longhauld and one local agent (all state under ./.longhaul/, the SQLite
# file included), and runs the main job: the reference EAGLE-3 campaign on the CPU engine
# (workflows/eagle3-local.yaml), then its pivot to a correct engine, and prints the two runs
# side by side. Then it says how to look at them and how to stop the daemons. It builds only
# what that needs (the CMake target main_job); deploy/test.sh builds and runs the tests.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
deploy/install-deps.sh
deploy/build.sh main_job
BIN="$ROOT/${LONGHAUL_BUILD_DIR:-build}/bin"
export PATH="$BIN:$PATH"
deploy/daemons.sh start
STATE=${LONGHAUL_STATE_DIR:-$ROOT/.longhaul}
export LONGHAUL_COORDINATOR="$(cat "$STATE/coordinator.addr")"

banner() { printf '\n== %s\n' "$*"; }

banner "1/3 the campaign: generate data with the target, extract hidden states, finetune an"
echo "    EAGLE-3 drafter, serve it on engine 'refengine-misaligned', benchmark against the target"
FIRST=$(longhaul submit workflows/eagle3-local.yaml)
set +e
longhaul watch "$FIRST"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  longhaul show "$FIRST" --attempts
  echo "the campaign run $FIRST did not succeed (exit $rc); its logs: longhaul logs $FIRST STAGE"
  exit $rc
fi

banner "2/3 the pivot: the same drafter on engine 'refengine'; what is reused, and why"
longhaul pivot "$FIRST" --set spec_engine=refengine --dry-run
PIVOT=$(longhaul pivot "$FIRST" --set spec_engine=refengine 2>/dev/null)
set +e
longhaul watch "$PIVOT"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  longhaul show "$PIVOT" --attempts
  exit $rc
fi

banner "3/3 run $FIRST and its pivot, run $PIVOT, side by side"
longhaul compare "$FIRST" "$PIVOT" \
  --metric bench_spec.accept_rate --metric bench_spec.accept_length \
  --metric bench_spec.output_throughput --metric bench_baseline.output_throughput \
  --metric bench_spec.speedup_output_throughput
cat <<EOT

  accept_rate                 accepted draft tokens / draft tokens, counted by the engine
  accept_length               1 + accepted / drafts: tokens per target step (mean acceptance length)
  output_throughput           output tokens per second under the same load
  speedup_output_throughput   bench_spec's output tokens/s over the no-speculation baseline's

== what next
  export PATH=$BIN:\$PATH LONGHAUL_COORDINATOR=$LONGHAUL_COORDINATOR
  longhaul runs                       every run, newest first, with its parent
  longhaul show $PIVOT                     stages, why each ran or was reused, metrics, artifacts
  longhaul compare $FIRST $PIVOT                all metrics of both runs
  longhaul logs $FIRST datagen               a stage's output (-f to follow)
  longhaul agents                     the agents and what they hold
  deploy/daemons.sh stop              stop longhauld and the agent (state stays in $STATE)
EOT
UI_ADDR=$(sed 's#^http://##' "$STATE/http.addr" 2>/dev/null || echo 127.0.0.1:8080)
cat <<EOT

== the UI (runs, live stages and logs, pivot, compare, agents)
  http://$UI_ADDR/
  from a laptop: ssh -L 8080:$UI_ADDR $(hostname)   then open http://localhost:8080/
EOT
