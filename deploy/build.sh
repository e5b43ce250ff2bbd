#!/usr/bin/env bash
# Configures and builds longhaul into ./build (or $LONGHAUL_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
JOBS=${LONGHAUL_JOBS:-$(nproc)}
# The web UI first: longhauld embeds web/dist when it is compiled. LONGHAUL_SKIP_UI=1 skips it
# (longhauld then serves a page that says how to build the UI).
if [ -z "${LONGHAUL_SKIP_UI:-}" ]; then deploy/build-ui.sh; fi
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
