#!/usr/bin/env bash
# gpu-algo.sh — one call on the NVIDIA machine for the algorithms (issue 22): builds the suite (Criterion from the carried .debs, as ci/gpu-test.sh), runs test_algorithms, test_alg_device and the CG example on the GPU, builds bench_gpu and the CUB reference (cub_ref, nvcc), runs the benchmark's algorithms section with the default tuning and CUB, then once per setting of a small sweep of the AMP_ALG_* knobs (without CUB); every log and a one-file summary under $OUT.
#
#   OUT=/tmp/out ci/gpu-algo.sh            # SWEEP="AMP_ALG_REDUCE_ITEMS=8;..." replaces the sweep
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
export OUT=${OUT:-$ROOT/build-gpu-algo/logs}
export BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu-algo}
mkdir -p "$OUT"
SUMMARY="$OUT/algo-summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

# 1. Build and the tests on the GPU (ci/gpu-test.sh does the Criterion set-up,
# configure, build and ctest; its logs go to $OUT too).
CTEST_ARGS="-R ^(test_algorithms|test_alg_device|example_cg)$" ci/gpu-test.sh
test_rc=$?
note "tests: ci/gpu-test.sh exit $test_rc ($(head -n1 "$OUT/counts.txt" 2>/dev/null))"
grep -E '^\[(FAIL|SKIP)\]|Assertion|algorithms::.*(gpu)' "$OUT/LastTest.log" 2>/dev/null | grep -E 'FAIL|gpu' |
  head -n 60 > "$OUT/algo-tests.txt"
"$BUILD_DIR/examples/cg" --n 512 --check > "$OUT/cg-512.txt" 2>&1
note "cg --n 512 --check on the GPU: exit $? ($(tail -n1 "$OUT/cg-512.txt"))"

# 2. The benchmark and the CUB reference.
if ! cmake --build "$BUILD_DIR" -j"$(nproc)" --target bench_gpu > "$OUT/bench-build.log" 2>&1; then
  note "bench_gpu did not build (see bench-build.log)"
  exit 1
fi
if cmake --build "$BUILD_DIR" --target cub_ref > "$OUT/cub-build.log" 2>&1; then
  note "cub_ref built"
else
  note "cub_ref did not build (see cub-build.log): the CUB rows will say so"
fi
BENCH="$BUILD_DIR/bench/bench_gpu"
run_setting() { # name, then VAR=value words
  local name=$1
  shift
  local log="$OUT/bench-algorithms-$name.txt"
  env "$@" timeout 600 "$BENCH" --algorithms-only > "$log" 2>&1
  local rc=$?
  note "=== $name ($*): exit $rc"
  grep -E '^\| (reduce|dot|exclusive|sort)|^Checks|^CUB' "$log" | sed "s/^/  /" | tee -a "$SUMMARY" > /dev/null
}
run_setting default

# 3. The sweep (no CUB: its figures do not change with hipamp's knobs).
if [ -n "${SWEEP:-}" ]; then
  IFS=';' read -r -a settings <<< "$SWEEP"
else
  settings=(
    "AMP_ALG_REDUCE_ITEMS=8"
    "AMP_ALG_REDUCE_ITEMS=32"
    "AMP_ALG_REDUCE_TILES=4"
    "AMP_ALG_REDUCE_TILES=16"
    "AMP_ALG_SCAN_ITEMS=8"
    "AMP_ALG_SCAN_ITEMS=11"
    "AMP_ALG_SCAN_ITEMS=15"
    "AMP_ALG_TILE=128 AMP_ALG_SCAN_ITEMS=16"
    "AMP_ALG_TILE=512 AMP_ALG_SCAN_ITEMS=8"
    "AMP_ALG_SORT_ITEMS=12"
    "AMP_ALG_SORT_ITEMS=24"
    "AMP_ALG_SORT_TILE=512 AMP_ALG_SORT_ITEMS=8"
    "AMP_ALG_RADIX_BITS=7"
  )
fi
for s in "${settings[@]}"; do
  # shellcheck disable=SC2086
  run_setting "$(echo "$s" | tr ' =' '_-')" HIPAMP_BENCH_NO_CUB=1 $s
done
note "done: $(date)"
exit "$test_rc"
