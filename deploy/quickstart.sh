#!/usr/bin/env bash
# The README's first command. On a fresh Debian 12 machine: installs what longhaul needs,
# builds it, starts longhauld and one local agent (all state under ./.longhaul/, the SQLite
# file included), runs the example workflow to the end, and tells how to look at it and how to
# stop the daemons.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
deploy/install-deps.sh
deploy/build.sh
BIN="$ROOT/${LONGHAUL_BUILD_DIR:-build}/bin"
export PATH="$BIN:$PATH"
deploy/daemons.sh start
STATE=${LONGHAUL_STATE_DIR:-$ROOT/.longhaul}
export LONGHAUL_COORDINATOR="$(cat "$STATE/coordinator.addr")"

echo
echo "== submitting workflows/examples/hello.yaml"
set +e
RUN=$(longhaul submit workflows/examples/hello.yaml)
rc=$?
set -e
[ $rc -eq 0 ] || exit $rc
longhaul watch "$RUN" || true
echo
longhaul show "$RUN"
cat <<EOT

== what next
  export LONGHAUL_COORDINATOR=$LONGHAUL_COORDINATOR   # or run longhaul from $ROOT
  longhaul runs                     every run, newest first
  longhaul show $RUN                    one run: stages, attempts, outputs, metrics
  longhaul logs $RUN join               a stage's output (-f to follow)
  longhaul agents                   the agents and what they hold
  deploy/daemons.sh stop            stop longhauld and the agent (state stays in $STATE)
EOT
