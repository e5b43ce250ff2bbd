#!/usr/bin/env bash
# Installs, builds and runs every test through ctest, then deploy/sanitize.sh (the unit tests
# under ASan and UBSan, and each fuzzer for LONGHAUL_FUZZ_SECONDS, default 60). The README's
# second command. LONGHAUL_SKIP_SANITIZE=1 runs the plain suite only. As root it also starts the
# local Slurm (deploy/slurm-local.sh) for the tests labelled `slurm`. It ends, pass or fail, with
# one line of how long each phase took; $LONGHAUL_PHASE_FILE, when set, names the phase running
# (.ci/run reads it to say where a run over its budget was).
set -euo pipefail
cd "$(dirname "$0")/.."

phases=()
phase_name=""
phase_start=$(date +%s)
run_start=$phase_start
begin() {  # begin NAME: ends the phase running, if any, and starts NAME
  local now
  now=$(date +%s)
  if [ -n "$phase_name" ]; then phases+=("$phase_name $((now - phase_start))s"); fi
  phase_name=$1
  phase_start=$now
  if [ -n "${LONGHAUL_PHASE_FILE:-}" ]; then echo "$1" >"$LONGHAUL_PHASE_FILE"; fi
}
summary() {
  local rc=$? now
  now=$(date +%s)
  if [ -n "$phase_name" ]; then phases+=("$phase_name $((now - phase_start))s"); fi
  local IFS=,
  echo "test.sh: phases: ${phases[*]}; total $((now - run_start))s$([ $rc -eq 0 ] || echo ", failed in $phase_name")"
}
trap summary EXIT

begin install
deploy/install-deps.sh --with-browser --with-sanitizers --with-slurm
begin build
deploy/build.sh
# The one-node Slurm the `slurm` tests use (they skip, saying why, when it is not up).
begin slurm
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null 2>&1; then
  deploy/slurm-local.sh start || echo "test.sh: no local Slurm; the slurm tests will skip" >&2
fi
begin ctest
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${LONGHAUL_TEST_JOBS:-2}" "$@")
if [ -z "${LONGHAUL_SKIP_SANITIZE:-}" ]; then
  begin sanitize
  deploy/sanitize.sh
fi
