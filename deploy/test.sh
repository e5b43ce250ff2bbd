#!/usr/bin/env bash
# Installs, builds and runs every test through ctest, then deploy/sanitize.sh (the unit tests
# under ASan and UBSan, and each fuzzer for LONGHAUL_FUZZ_SECONDS, default 60). The README's
# second command. LONGHAUL_SKIP_SANITIZE=1 runs the plain suite only. As root it also starts the
# local Slurm (deploy/slurm-local.sh) for the tests labelled `slurm`.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh --with-browser --with-sanitizers --with-slurm
deploy/build.sh
# The one-node Slurm the `slurm` tests use (they skip, saying why, when it is not up).
if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null 2>&1; then
  deploy/slurm-local.sh start || echo "test.sh: no local Slurm; the slurm tests will skip" >&2
fi
BUILD_DIR=${LONGHAUL_BUILD_DIR:-build}
(cd "$BUILD_DIR" && ctest --output-on-failure -j "${LONGHAUL_TEST_JOBS:-2}" "$@")
if [ -z "${LONGHAUL_SKIP_SANITIZE:-}" ]; then deploy/sanitize.sh; fi
