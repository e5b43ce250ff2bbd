#!/usr/bin/env bash
# Installs everything longhaul needs to build and test, from Debian 12's packages (python3:
# stage_protocol_test runs docs/stage-protocol.md's Python example stage).
# Idempotent and non-interactive: packages already present are left alone.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3
  libboost-dev libboost-filesystem-dev libboost-system-dev
  libspdlog-dev libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libcli11-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  procps
  python3
)
# The web UI is built with node and npm (web/package-lock.json pins the rest): Debian's when
# no node is installed.
if ! command -v node >/dev/null 2>&1; then PACKAGES+=(nodejs npm); fi
# Optional parts, for the tests (deploy/test.sh passes them): --with-browser for the UI tests
# (Debian's chromium, driven by playwright-core), --with-sanitizers for deploy/sanitize.sh's
# clang build with ASan, UBSan and libFuzzer, --with-slurm for Slurm's packages.
for arg in "$@"; do
  case "$arg" in
    --with-browser) PACKAGES+=(chromium) ;;
    --with-sanitizers) PACKAGES+=(clang lld libclang-rt-14-dev) ;;
    --with-slurm) PACKAGES+=(slurm-wlm munge) ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
