#!/usr/bin/env bash
# Times a cold build and test of longhaul from a clean clone, phase by phase, the way a new user
# and CI meet it (docs/performance.md "Build and test time" holds the current figures):
#   install     deploy/install-deps.sh with the test extras (a no-op where they are installed)
#   ui          deploy/build-ui.sh: npm ci and the Vite build
#   configure   cmake
#   main_job    what deploy/quickstart.sh builds (the daemons, the CLI, the stage binaries)
#   campaign    the rest of deploy/quickstart.sh: daemons up, the campaign, its pivot, the table
#   all         the rest of the build: tests and benchmarks
#   ctest       the suite, as deploy/test.sh runs it (local Slurm up when root)
#   sanitize    deploy/sanitize.sh (ASan/UBSan unit tests, each fuzzer LONGHAUL_FUZZ_SECONDS)
# "quickstart" is install + ui + configure + main_job + campaign: the README's first command.
# ccache is disabled for every phase (CCACHE_DISABLE=1), so the figures are cold whatever the
# machine built before; page cache and installed packages are not cleared.
# Then it prints the 15 slowest build steps from ninja's log, with the heavy headers each
# compile includes (ninja -t deps).
#
#   bench/build/cold.sh [--repo DIR] [--dir DIR] [--keep] [--skip PHASE]...
#     --repo DIR   the repository to clone (default: this checkout; its HEAD is cloned)
#     --dir DIR    where the clone goes (default: a new folder under ${TMPDIR:-/tmp})
#     --keep       leave the clone (and its stopped daemons' state) for a look afterwards
#     --skip PHASE leave out a phase (campaign, all, ctest, sanitize), e.g. --skip sanitize
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
repo=$here
dir=""
keep=""
skip=" "
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) repo=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --skip) skip+="$2 "; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "cold.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$dir" ]; then dir=$(mktemp -d "${TMPDIR:-/tmp}/longhaul-cold.XXXXXX"); fi
if [ -e "$dir/.git" ]; then echo "cold.sh: $dir already holds a clone; give an empty --dir" >&2; exit 2; fi
git clone -q "$repo" "$dir"
cd "$dir"
export CCACHE_DISABLE=1
export LONGHAUL_STATE_DIR="$dir/.longhaul"
# Free ports, so a measurement runs beside daemons already on 7070 and 8080.
export LONGHAUL_LISTEN=127.0.0.1:0 LONGHAUL_HTTP=127.0.0.1:0
commit=$(git rev-parse --short HEAD)
echo "cold.sh: commit $commit in $dir, $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"

names=()
secs=()
phase() {  # phase NAME COMMAND...: runs it, its output in $dir/cold-NAME.log, and times it
  local name=$1; shift
  if [[ "$skip" == *" $name "* ]]; then return 0; fi
  local t0 t1
  t0=$(date +%s%N)
  echo "cold.sh: $name ..."
  if ! "$@" >"$dir/cold-$name.log" 2>&1; then
    tail -n 40 "$dir/cold-$name.log" >&2
    echo "cold.sh: phase $name failed; its log: $dir/cold-$name.log" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  names+=("$name")
  secs+=($(((t1 - t0) / 1000000000)))
}
stop_daemons() { deploy/daemons.sh stop >/dev/null 2>&1 || true; }
trap stop_daemons EXIT

phase install deploy/install-deps.sh --with-browser --with-sanitizers --with-slurm
phase ui deploy/build-ui.sh
phase configure cmake -S . -B build -G Ninja
phase main_job ninja -C build main_job
phase campaign deploy/quickstart.sh
stop_daemons
phase all ninja -C build
ctest_phase() {
  if [ "$(id -u)" -eq 0 ] && command -v slurmctld >/dev/null 2>&1; then
    deploy/slurm-local.sh start
  fi
  (cd build && ctest -j "${LONGHAUL_TEST_JOBS:-2}" --output-on-failure)
}
phase ctest ctest_phase
phase sanitize deploy/sanitize.sh

echo
echo "| phase | seconds |"
echo "| --- | ---: |"
total=0
quick=0
for i in "${!names[@]}"; do
  printf '| %s | %d |\n' "${names[$i]}" "${secs[$i]}"
  total=$((total + secs[i]))
  case "${names[$i]}" in install|ui|configure|main_job|campaign) quick=$((quick + secs[i])) ;; esac
done
printf '| quickstart (install to the comparison table) | %d |\n' "$quick"
printf '| everything above | %d |\n' "$total"
grep -E '^[0-9]+ passed, ' "$dir/cold-ctest.log" 2>/dev/null || grep -E 'tests passed' "$dir/cold-ctest.log" 2>/dev/null || true

# The slowest steps of the release build, and what each compile pulls in.
echo
echo "The 15 slowest build steps (build/.ninja_log; seconds, output):"
awk -F'\t' '!/^#/ {printf "%8.1f  %s\n", ($2 - $1) / 1000, $4}' build/.ninja_log |
  sort -rn | head -n 15 | tee "$dir/cold-slowest.txt"
echo
echo "Heavy headers each of those compiles includes (ninja -t deps; count of headers from each):"
while read -r _ out; do
  case "$out" in *.o) ;; *) continue ;; esac
  deps=$(ninja -C build -t deps "$out" 2>/dev/null | tail -n +2 | sed 's/^ *//')
  n=$(printf '%s\n' "$deps" | grep -c . || true)
  summary=$(printf '%s\n' "$deps" | awk '
    /\/grpcpp?\//                 {c["grpc"]++; next}
    /\/google\/protobuf\/|\.pb\.h$/ {c["protobuf"]++; next}
    /\/boost\/beast\//            {c["beast"]++; next}
    /\/boost\/asio\//             {c["asio"]++; next}
    /\/boost\//                   {c["boost-other"]++; next}
    /\/absl\//                    {c["absl"]++; next}
    /\/spdlog\/|\/fmt\//          {c["spdlog+fmt"]++; next}
    /\/nlohmann\//                {c["nlohmann"]++; next}
    /\/gtest\/|\/gmock\//         {c["gtest"]++; next}
    /\/yaml-cpp\//                {c["yaml-cpp"]++; next}
    END {for (k in c) printf "%s %d, ", k, c[k]}')
  printf '%s: %d headers (%s)\n' "$out" "$n" "${summary%, }"
done <"$dir/cold-slowest.txt"

if [ -z "$keep" ]; then
  stop_daemons
  trap - EXIT
  cd / && rm -rf "$dir"
else
  echo "cold.sh: the clone stays in $dir"
fi
