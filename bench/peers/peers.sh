#!/usr/bin/env bash
# The same two workloads through longhaul, Snakemake and (when deploy/slurm-local.sh exists) a
# local Slurm; prints jobs/s, seconds per link, and longhaul's ratio to each. Not a test.
#
#   bench/peers/peers.sh [--jobs 1000] [--chain 200] [--only longhaul,snakemake,slurm]
#
#  wide:  N independent trivial jobs (/bin/true; Snakemake: `touch` of its output), from the
#         submit command to the last job's end: jobs/s = N / that.
#  chain: M trivial jobs, each needing the one before, from the submit command to the end of
#         the last: seconds per link = that / M (each engine's own start-up included).
#
# longhaul: the real longhauld and one longhaul-agent (deploy/daemons.sh, state in a temp dir
#   on this machine's disk), stages `resources: {cpus: 0.01}`, `longhaul submit --watch`.
# Snakemake: Debian's `snakemake` (apt-get install -y snakemake), `snakemake -j2`.
# Slurm: `deploy/slurm-local.sh start`; wide as one job array, chain as M sbatch calls with
#   --dependency=afterok on the one before; done when squeue no longer lists them. (Slurm's
#   MaxArraySize, 1001 by default, bounds --jobs there.)
# Binaries from ${LONGHAUL_BIN_DIR:-build/bin} (cmake --build build --target longhauld
# longhaul-agent longhaul-shim longhaul). Temp files under ${TMPDIR:-/var/tmp}.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN=${LONGHAUL_BIN_DIR:-$ROOT/build/bin}
JOBS=1000
CHAIN=200
ONLY="longhaul,snakemake,slurm"
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS=$2; shift 2 ;;
    --chain) CHAIN=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "usage: $0 [--jobs N] [--chain M] [--only longhaul,snakemake,slurm]" >&2; exit 2 ;;
  esac
done
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/lh-peers.XXXXXX")
declare -A WIDE_S CHAIN_S NOTE
wanted() { [[ ",$ONLY," == *",$1,"* ]]; }
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc -l; }

# --- longhaul ---
longhaul_stop() { LONGHAUL_STATE_DIR="$WORK/longhaul" "$ROOT/deploy/daemons.sh" stop >/dev/null || true; }
run_longhaul() {
  for b in longhauld longhaul-agent longhaul-shim longhaul; do
    [ -x "$BIN/$b" ] || { NOTE[longhaul]="skipped: $BIN/$b missing (cmake --build build --target longhauld longhaul-agent longhaul-shim longhaul)"; return; }
  done
  export LONGHAUL_STATE_DIR="$WORK/longhaul" LONGHAUL_LISTEN=127.0.0.1:0 LONGHAUL_HTTP=""
  LONGHAUL_BIN_DIR="$BIN" "$ROOT/deploy/daemons.sh" start >/dev/null
  trap longhaul_stop EXIT
  local lh=("$BIN/longhaul" --coordinator "$(cat "$WORK/longhaul/coordinator.addr")")
  {
    echo "name: peers-wide"
    echo "defaults: {resources: {cpus: 0.01}}"
    echo "stages:"
    for i in $(seq 0 $((JOBS - 1))); do echo "  j$i: {run: [/bin/true]}"; done
  } >"$WORK/wide.yaml"
  {
    echo "name: peers-chain"
    echo "defaults: {resources: {cpus: 0.01}}"
    echo "stages:"
    echo "  c0: {run: [/bin/true]}"
    for i in $(seq 1 $((CHAIN - 1))); do echo "  c$i: {run: [/bin/true], needs: [c$((i - 1))]}"; done
  } >"$WORK/chain.yaml"
  local t
  t=$(now); "${lh[@]}" submit "$WORK/wide.yaml" --watch >"$WORK/longhaul-wide.out" 2>&1
  WIDE_S[longhaul]=$(since "$t")
  t=$(now); "${lh[@]}" submit "$WORK/chain.yaml" --watch >"$WORK/longhaul-chain.out" 2>&1
  CHAIN_S[longhaul]=$(since "$t")
  NOTE[longhaul]="longhauld + 1 agent, cpus 0.01 per stage"
  longhaul_stop
  trap - EXIT
}

# --- Snakemake ---
run_snakemake() {
  if ! command -v snakemake >/dev/null; then
    NOTE[snakemake]="skipped: snakemake not installed (apt-get install -y snakemake)"
    return
  fi
  local dir="$WORK/snakemake"
  mkdir -p "$dir"
  cat >"$dir/Snakefile" <<EOF
wildcard_constraints:
    i="[0-9]+"

rule wide:
    input: expand("wide/j{i}.done", i=range($JOBS))

rule job:
    output: "wide/j{i}.done"
    shell: "true && touch {output}"

rule chain:
    input: "chain/c$((CHAIN - 1)).done"

rule link:
    input: lambda wc: [] if int(wc.i) == 0 else [f"chain/c{int(wc.i) - 1}.done"]
    output: "chain/c{i}.done"
    shell: "true && touch {output}"
EOF
  local t
  t=$(now); (cd "$dir" && snakemake -j2 wide >"$WORK/snakemake-wide.out" 2>&1)
  WIDE_S[snakemake]=$(since "$t")
  t=$(now); (cd "$dir" && snakemake -j2 chain >"$WORK/snakemake-chain.out" 2>&1)
  CHAIN_S[snakemake]=$(since "$t")
  NOTE[snakemake]="Snakemake $(snakemake --version), -j2"
}

# --- Slurm ---
slurm_wait() {  # job ids... -> returns when squeue lists none of them
  local ids; ids=$(IFS=,; echo "$*")
  while [ -n "$(squeue -h -j "$ids" 2>/dev/null)" ]; do sleep 0.05; done
}
run_slurm() {
  if [ ! -x "$ROOT/deploy/slurm-local.sh" ]; then
    NOTE[slurm]="skipped: deploy/slurm-local.sh is not in this tree"
    return
  fi
  "$ROOT/deploy/slurm-local.sh" start >"$WORK/slurm-start.out" 2>&1 ||
    { NOTE[slurm]="skipped: deploy/slurm-local.sh start failed: $(tail -1 "$WORK/slurm-start.out")"; return; }
  export SLURM_CONF="${LONGHAUL_SLURM_DIR:-/var/tmp/longhaul-slurm}/etc/slurm.conf"
  # Every job is named lh-peers; whatever is still queued when this script ends (interrupted,
  # timed out) is cancelled, so it does not sit ahead of the next user's jobs.
  trap 'scancel --name=lh-peers >/dev/null 2>&1 || true' EXIT
  local t id prev ids=()
  t=$(now)
  id=$(sbatch --parsable --array=0-$((JOBS - 1)) -J lh-peers -o /dev/null -e /dev/null --wrap=/bin/true)
  slurm_wait "${id%%;*}"
  WIDE_S[slurm]=$(since "$t")
  t=$(now)
  prev=$(sbatch --parsable -J lh-peers -o /dev/null -e /dev/null --wrap=/bin/true)
  ids+=("${prev%%;*}")
  for _ in $(seq 1 $((CHAIN - 1))); do
    prev=$(sbatch --parsable --dependency=afterok:"${prev%%;*}" --kill-on-invalid-dep=yes \
      -J lh-peers -o /dev/null -e /dev/null --wrap=/bin/true)
    ids+=("${prev%%;*}")
  done
  slurm_wait "${ids[@]}"
  CHAIN_S[slurm]=$(since "$t")
  NOTE[slurm]="$(sbatch --version), one node, $(nproc) CPUs"
  trap - EXIT
}

for engine in longhaul snakemake slurm; do
  if wanted "$engine"; then
    echo "running $engine ..." >&2
    "run_$engine" || { NOTE[$engine]="failed: see the outputs under $WORK"; unset "WIDE_S[$engine]"; }
  fi
done

echo "$JOBS independent trivial jobs; a chain of $CHAIN (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-10s %12s %14s %14s %16s  %s\n' engine "jobs/s" "s per link" "lh x jobs/s" "lh x faster link" note
for engine in longhaul snakemake slurm; do
  if [ -z "${WIDE_S[$engine]:-}" ]; then
    [ -n "${NOTE[$engine]:-}" ] && printf '%-10s %s\n' "$engine" "${NOTE[$engine]}"
    continue
  fi
  rate=$(echo "$JOBS / ${WIDE_S[$engine]}" | bc -l)
  link=$(echo "${CHAIN_S[$engine]} / $CHAIN" | bc -l)
  r1=-; r2=-
  if [ -n "${WIDE_S[longhaul]:-}" ] && [ "$engine" != longhaul ]; then
    r1=$(printf '%.1f' "$(echo "${WIDE_S[$engine]} / ${WIDE_S[longhaul]}" | bc -l)")
    r2=$(printf '%.1f' "$(echo "${CHAIN_S[$engine]} / ${CHAIN_S[longhaul]}" | bc -l)")
  fi
  printf '%-10s %12.1f %14.4f %14s %16s  %s\n' "$engine" "$rate" "$link" "$r1" "$r2" "${NOTE[$engine]:-}"
done
echo "(outputs under $WORK)"
