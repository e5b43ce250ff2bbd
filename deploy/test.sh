#!/usr/bin/env bash
# Installs, builds and runs every test through ctest, then deploy/sanitize.sh (the unit tests
# under ASan and UBSan, and each fuzzer for LONGHAUL_FUZZ_SECONDS, default 60). The README's
# second command. LONGHAUL_SKIP_SANITIZE=1 runs the plain suite only.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --with-browser --with-sanitizers
deploy/build.sh
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${LONGHAUL_TEST_JOBS:-2}" "$@")
if [ -z "${LONGHAUL_SKIP_SANITIZE:-}" ]; then deploy/sanitize.sh; fi
