#!/usr/bin/env bash
# Configures and builds longhaul into ./build (or $LONGHAUL_BUILD_DIR).
#   deploy/build.sh              everything: binaries, tests, benchmarks
#   deploy/build.sh TARGET...    only those targets and what they need, e.g. `main_job` (the
#                                binaries the quick start's campaign runs; CMakeLists.txt)
# Extra configure options go in $LONGHAUL_CMAKE_ARGS (used on the first configure only).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
JOBS=${LONGHAUL_JOBS:-$(nproc)}
# The web UI first: longhauld embeds web/dist when it is compiled. LONGHAUL_SKIP_UI=1 skips it
# (longhauld then serves a page that says how to build the UI).
if [ -z "${LONGHAUL_SKIP_UI:-}" ]; then deploy/build-ui.sh; fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # shellcheck disable=SC2086
  cmake -S . -B "$BUILD_DIR" -G Ninja ${LONGHAUL_CMAKE_ARGS:-}
fi
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
