#!/usr/bin/env bash
# The sanitizer and fuzz run (docs/testing.md "Sanitizers and fuzzing"): configures a clang
# build with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer in ./build-asan (or
# $LONGHAUL_ASAN_BUILD_DIR), builds only the unit tests and the fuzzers (target `sanitize`),
# runs the unit tests (ctest -L unit) and then each fuzzer for a bounded time, seeded from
# tests/fuzz/corpus. Exits non-zero on any test failure, sanitizer report or fuzzer crash.
#   LONGHAUL_FUZZ_SECONDS   seconds per fuzzer (default 60; 0 skips the fuzzers)
#   LONGHAUL_FUZZ_TARGETS   which fuzzers (default: all, e.g. "event http")
#   LONGHAUL_JOBS           build jobs (default: nproc)
# A crashing input is written to build-asan/fuzz/NAME/crash-*; replay it with
# build-asan/bin/NAME_fuzzer FILE, then add it to tests/fuzz/corpus/NAME with a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${LONGHAUL_ASAN_BUILD_DIR:-build-asan}
JOBS=${LONGHAUL_JOBS:-$(nproc)}
SECONDS_EACH=${LONGHAUL_FUZZ_SECONDS:-60}
TARGETS=${LONGHAUL_FUZZ_TARGETS:-event template workflow http}
CC_BIN=${LONGHAUL_CLANG:-clang}
CXX_BIN=${LONGHAUL_CLANGXX:-clang++}
for tool in "$CC_BIN" "$CXX_BIN"; do
  command -v "$tool" >/dev/null || {
    echo "sanitize: $tool not found; deploy/install-deps.sh --with-sanitizers installs clang" >&2
    exit 1
  }
done

start=$(date +%s)
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1 and line tables only: sanitizer reports with file:line, at a fraction of -O2 -g's
  # build time; lld links the instrumented binaries faster. No benchmarks.
  flags="-O1 -gline-tables-only"
  link=()
  if command -v ld.lld >/dev/null; then link=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld); fi
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Sanitize \
    -DCMAKE_C_COMPILER="$CC_BIN" -DCMAKE_CXX_COMPILER="$CXX_BIN" \
    -DCMAKE_CXX_FLAGS_SANITIZE="$flags" -DCMAKE_C_FLAGS_SANITIZE="$flags" "${link[@]}" \
    -DLONGHAUL_FUZZ=ON -DLONGHAUL_BUILD_BENCH=OFF
fi
cmake --build "$BUILD_DIR" -j "$JOBS" --target sanitize
built=$(date +%s)

# halt_on_error: the first report fails the test; detect_leaks: LeakSanitizer too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
(cd "$BUILD_DIR" && ctest --output-on-failure -L unit -j "${LONGHAUL_TEST_JOBS:-2}")
tested=$(date +%s)

if [ "$SECONDS_EACH" -gt 0 ]; then
  for name in $TARGETS; do
    work="$BUILD_DIR/fuzz/$name"
    mkdir -p "$work/corpus"
    echo "sanitize: fuzzing $name for ${SECONDS_EACH}s"
    # New inputs go to $work/corpus (seeded from the committed corpus, which stays as it is).
    # -timeout: one input running longer is a hang; -rss_limit_mb: a memory blow-up is a crash.
    dict=()
    if [ -f "tests/fuzz/$name.dict" ]; then dict=(-dict="tests/fuzz/$name.dict"); fi
    if ! "$BUILD_DIR/bin/${name}_fuzzer" "$work/corpus" "tests/fuzz/corpus/$name" "${dict[@]}" \
        -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$work/" -print_final_stats=1 >"$work/log" 2>&1; then
      tail -n 60 "$work/log" >&2
      echo "sanitize: FAILED: ${name}_fuzzer found a crash; the input is in $work/" >&2
      exit 1
    fi
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/log" |
      sed "s/^/sanitize: $name /"
  done
fi
end=$(date +%s)
echo "sanitize: build $((built - start))s, unit tests $((tested - built))s, fuzzers $((end - tested))s"
