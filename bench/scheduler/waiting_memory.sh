#!/bin/bash
# The memory of a real longhauld holding one run of N independent stages that all wait (no
# agent is connected), and after the run is cancelled and leaves memory. Prints longhauld's
# RSS idle, after the submission (and its peak), and after the cancel; the SubmitRun wall
# time and longhauld's CPU for it. Not a test: figures for docs/performance.md.
#
#   bench/scheduler/waiting_memory.sh [BIN_DIR] [STAGES]     (defaults: build/bin 100000)
#
# State goes under $TMPDIR (default /var/tmp): use a disk, not tmpfs, for the figures.
set -euo pipefail
BIN=${1:-build/bin}
N=${2:-100000}
D=$(mktemp -d "${TMPDIR:-/var/tmp}/lh-waiting-memory.XXXXXX")
trap '[ -n "${P:-}" ] && kill $P 2>/dev/null; rm -rf "$D"' EXIT

python3 - "$N" > "$D/wide.yaml" <<'PY'
import sys
n = int(sys.argv[1])
print(f"name: wide{n}\nstages:")
for i in range(n):
    print(f"  s{i:06d}:\n    run: [/bin/true]\n    resources: {{cpus: 0.01}}")
PY

"$BIN/longhauld" --config /dev/null --state-dir "$D/state" --listen 127.0.0.1:0 \
  --http 127.0.0.1:0 --log-level warn > "$D/longhauld.log" 2>&1 &
P=$!
for _ in $(seq 200); do [ -s "$D/state/coordinator.addr" ] && break; sleep 0.1; done
export LONGHAUL_COORDINATOR=$(cat "$D/state/coordinator.addr")
mb() { awk -v k="$1:" '$1 == k { printf "%.1f", $2 / 1024 }' /proc/$P/status; }
cpu() { awk '{ printf "%.2f", ($14 + $15) / 100 }' /proc/$P/stat; }
# RSS and its anonymous part (the heap, stacks: what the daemon itself holds; the rest is the
# binary's and libraries' pages, which grow as more of the code is first used).
mem() { echo "RSS $(mb VmRSS) MB (anonymous $(mb RssAnon) MB)"; }
# Cancels run $1 and waits until it has ended and left memory.
cancel_run() {
  "$BIN/longhaul" cancel "$1" > /dev/null
  for _ in $(seq 600); do
    "$BIN/longhaul" --json show "$1" 2> /dev/null | grep -q '"RUN_CANCELLED"' && break
    sleep 0.5
  done
  sleep 3
}

sleep 2
echo "stages $N"
echo "idle, fresh: $(mem)"
# A 10-stage run first, so that "idle" is a coordinator that has served a run: the code
# pages a first submission touches stay resident, whatever the run's size.
printf 'name: warmup\nstages:\n' > "$D/warmup.yaml"
for i in $(seq 10); do printf '  w%d:\n    run: [/bin/true]\n' "$i" >> "$D/warmup.yaml"; done
cancel_run "$("$BIN/longhaul" submit "$D/warmup.yaml" 2> /dev/null)"
echo "idle, after a 10-stage run: $(mem)"
echo 5 > /proc/$P/clear_refs  # VmHWM := VmRSS
c0=$(cpu)
t0=$(date +%s.%N)
"$BIN/longhaul" submit "$D/wide.yaml" > "$D/submit.out" 2> "$D/submit.err"
t1=$(date +%s.%N)
echo "submitted: wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s," \
  "longhauld CPU $(awk -v a="$c0" -v b="$(cpu)" 'BEGIN { printf "%.2f", b - a }') s;" \
  "$(mem), peak $(mb VmHWM) MB"
cancel_run "$(cat "$D/submit.out")"
echo "cancelled: $(mem), peak $(mb VmHWM) MB"
