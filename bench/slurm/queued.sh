#!/usr/bin/env bash
# N queued trivial attempts through one longhaul-agent --executor slurm on the local Slurm
# (deploy/slurm-local.sh), beside the same workload on a local agent. Not a test; the figures
# go to docs/performance.md ("Slurm executor").
#
#   bench/slurm/queued.sh [--n 10000] [--only local,slurm]
#
# Workload: one run of N independent stages `run: [/bin/true]`, `resources: {cpus: 0.01}`; the
# agent offers --cpus N*0.01+1, so the coordinator hands it all N at once and they queue. In
# Slurm each job takes one CPU; the local Slurm is started with LONGHAUL_SLURM_CPUS=64 (the node
# claims 64 CPUs, so up to 64 of these trivial jobs run at once, not 2) and the agent adds
# --slurm-arg=--mem=64M (the default 1 GB a CPU would allow only 21 at once). A plain
# `deploy/slurm-local.sh start` at the end restores the real node. Prints, per executor:
#   wall        from `longhaul submit` to the run's end
#   submit/s    attempts submitted (sbatch) or started (local) per second: (count-1) over the
#               time from the agent's first to its last "submitted"/"started" log line
#   calls/min   squeue, sacct, scontrol, sbatch, scancel: calls over the run's wall time,
#               counted by wrappers first on the agent's PATH (as tests/slurm's queued test does)
#   handoff p50 from a stage's end (exit.json's ended_at_ms, written by the shim) to the
#               agent's "attempt N: ended" log line, the median over the N attempts
# Binaries from ${LONGHAUL_BIN_DIR:-build/bin}; temp files under ${TMPDIR:-/var/tmp}. Needs
# root for deploy/slurm-local.sh start.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN=${LONGHAUL_BIN_DIR:-$ROOT/build/bin}
N=10000
ONLY="local,slurm"
while [ $# -gt 0 ]; do
  case "$1" in
    --n) N=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "usage: $0 [--n N] [--only local,slurm]" >&2; exit 2 ;;
  esac
done
for b in longhauld longhaul-agent longhaul-shim longhaul; do
  [ -x "$BIN/$b" ] || { echo "$BIN/$b missing (cmake --build build --target longhauld longhaul-agent longhaul-shim longhaul)" >&2; exit 1; }
done
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/lh-queued.XXXXXX")
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  # Jobs still queued when the script ends (interrupted) are cancelled.
  if [ -n "${SLURM_CONF:-}" ] && [ -d "$WORK/slurm/agent/attempts" ]; then
    find "$WORK/slurm/agent/attempts" -name job_id -exec cat {} + 2>/dev/null |
      xargs -r scancel >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT
now() { date +%s.%N; }

{
  echo "name: queued"
  echo "defaults: {resources: {cpus: 0.01}}"
  echo "stages:"
  for i in $(seq 0 $((N - 1))); do echo "  q$i: {run: [/bin/true]}"; done
} >"$WORK/queued.yaml"
CPUS=$(echo "$N * 0.01 + 1" | bc -l)

# Wrappers that log one line per call, then run the real command.
mkdir -p "$WORK/wrap"
for c in squeue sacct scontrol sbatch scancel; do
  real=$(command -v "$c" || echo "/usr/bin/$c")
  printf '#!/bin/sh\necho "$(date +%%s.%%N)" >> %s/%s.calls\nexec %s "$@"\n' \
    "$WORK" "$c" "$real" >"$WORK/wrap/$c"
  chmod +x "$WORK/wrap/$c"
done

median_handoff() {  # $1: agent state dir, $2: agent log
  python3 - "$1" "$2" <<'PY'
import json, os, re, sys, time, datetime, statistics
state, log = sys.argv[1], sys.argv[2]
seen = {}
pat = re.compile(r'^(\S+) \S+ \[[^]]*\] attempt (\d+): ended')
for line in open(log, errors='replace'):
    m = pat.match(line)
    if m and m.group(2) not in seen:
        t = datetime.datetime.strptime(m.group(1), '%Y-%m-%dT%H:%M:%S.%f')
        seen[m.group(2)] = time.mktime(t.timetuple()) + t.microsecond / 1e6
d = []
for aid, t in seen.items():
    try:
        e = json.load(open(os.path.join(state, 'attempts', aid, 'exit.json')))
    except OSError:
        continue
    d.append(t - e['ended_at_ms'] / 1000)
print(f"{statistics.median(d) * 1000:.0f} ms (n={len(d)})" if d else "n/a")
PY
}

rate() {  # $1: log, $2: pattern -> attempts/s between the first and the last matching line
  python3 - "$1" "$2" <<'PY'
import re, sys, datetime
ts = []
for line in open(sys.argv[1], errors='replace'):
    if re.search(sys.argv[2], line):
        ts.append(datetime.datetime.strptime(line.split(' ')[0], '%Y-%m-%dT%H:%M:%S.%f'))
if len(ts) < 2:
    print("n/a"); sys.exit()
s = (ts[-1] - ts[0]).total_seconds()
print(f"{(len(ts) - 1) / s:.1f}/s over {s:.1f} s (n={len(ts)})" if s > 0 else "n/a")
PY
}

run_one() {  # $1: local | slurm
  local ex=$1 d="$WORK/$1"
  mkdir -p "$d/logs"
  rm -f "$WORK"/*.calls
  "$BIN/longhauld" --config /dev/null --state-dir "$d/coord" --listen 127.0.0.1:0 --http "" \
    --log-file "$d/logs/longhauld.log" >"$d/logs/longhauld.out" 2>&1 </dev/null &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -s "$d/coord/coordinator.addr" ] && break; sleep 0.1; done
  local addr; addr=$(cat "$d/coord/coordinator.addr")
  PATH="$WORK/wrap:$PATH" "$BIN/longhaul-agent" --config /dev/null --coordinator "$addr" \
    --state-dir "$d/agent" --id "$ex" --executor "$ex" --cpus "$CPUS" "${AGENT_EXTRA[@]}" \
    --log-file "$d/logs/agent.log" >"$d/logs/agent.out" 2>&1 </dev/null &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    "$BIN/longhaul" --coordinator "$addr" agents --json 2>/dev/null | grep -q "\"id\": *\"$ex\"" && break
    sleep 0.1
  done
  rm -f "$WORK"/*.calls  # the agent's start-up is not the workload
  local t0 t1
  t0=$(now)
  "$BIN/longhaul" --coordinator "$addr" submit "$WORK/queued.yaml" --watch >"$d/submit.out" 2>&1 ||
    echo "  ($ex: the run did not succeed: $(tail -2 "$d/submit.out"))"
  t1=$(now)
  local wall; wall=$(echo "$t1 - $t0" | bc -l)
  local min; min=$(echo "$wall / 60" | bc -l)
  local pat='started .* \(shim pid'
  [ "$ex" = slurm ] && pat='submitted as slurm job'
  printf '%-6s N=%d wall %.1f s; %s attempts in %s\n' "$ex" "$N" "$wall" \
    "$(grep -c ': ended' "$d/logs/agent.log" || true)" "$(tail -1 "$d/submit.out" | cut -c1-80)"
  printf '       submit rate %s\n' "$(rate "$d/logs/agent.log" "$pat")"
  printf '       handoff p50 %s\n' "$(median_handoff "$d/agent" "$d/logs/agent.log")"
  local line="       calls/min:"
  for c in squeue sacct scontrol sbatch scancel; do
    local k=0; [ -f "$WORK/$c.calls" ] && k=$(wc -l <"$WORK/$c.calls")
    line+=" $c $(printf '%.1f' "$(echo "$k / $min" | bc -l)") ($k)"
  done
  echo "$line"
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  PIDS=()
}

wanted() { [[ ",$ONLY," == *",$1,"* ]]; }
echo "bench/slurm/queued.sh --n $N; $(nproc) CPUs; work in $WORK"
AGENT_EXTRA=()
wanted local && run_one local
if wanted slurm; then
  AGENT_EXTRA=(--slurm-arg=--mem=64M)
  trap 'cleanup; "$ROOT/deploy/slurm-local.sh" start >/dev/null 2>&1 || true' EXIT
  LONGHAUL_SLURM_CPUS=${QUEUED_SLURM_CPUS:-64} "$ROOT/deploy/slurm-local.sh" start >"$WORK/slurm-start.out" 2>&1 ||
    { echo "slurm: skipped: deploy/slurm-local.sh start failed: $(tail -1 "$WORK/slurm-start.out")"; exit 0; }
  export SLURM_CONF="${LONGHAUL_SLURM_DIR:-/var/tmp/longhaul-slurm}/etc/slurm.conf"
  echo "       MaxJobCount $(scontrol show config | awk '/^MaxJobCount/ {print $3}'), node CPUs $(sinfo -h -o %c), $(sbatch --version)"
  run_one slurm
fi
