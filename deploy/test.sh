#!/usr/bin/env bash
# Installs, builds and runs every test through ctest. The README's second command.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --with-browser
deploy/build.sh
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j "${LONGHAUL_TEST_JOBS:-2}" "$@"
