#!/usr/bin/env bash
# gpu-alg-profile.sh — one call on the NVIDIA machine to tune the algorithms (issue 22): ci/gpu-test.sh's build with test_algorithms on the GPU, bench_gpu's algorithms section with CUB, then Nsight Compute (where it reads the counters) on one scan, one sort pass and one histogram launch of that benchmark; logs under $OUT.
#
#   OUT=/tmp/out ci/gpu-alg-profile.sh     # NCU=0 skips the profiles; SWEEP="A=1;B=2" adds bench runs per setting
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
export OUT=${OUT:-$ROOT/build-gpu-prof/logs}
export BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu-prof}
mkdir -p "$OUT"
S="$OUT/profile-summary.txt"
: > "$S"
note() { echo "$*" | tee -a "$S"; }
CTEST_ARGS="${CTEST_ARGS:--R ^(test_algorithms)$ -j4}" ci/gpu-test.sh
note "tests: exit $? ($(head -n1 "$OUT/counts.txt" 2>/dev/null))"
cmake --build "$BUILD_DIR" -j"$(nproc)" --target bench_gpu > "$OUT/bench-build.log" 2>&1 || { note "bench_gpu did not build"; exit 1; }
cmake --build "$BUILD_DIR" --target cub_ref > "$OUT/cub-build.log" 2>&1 || note "cub_ref did not build"
BENCH="$BUILD_DIR/bench/bench_gpu"
bench() { # name, VAR=value words
  local name=$1; shift
  env "$@" timeout 300 "$BENCH" --algorithms-only > "$OUT/bench-$name.txt" 2>&1
  note "=== $name ($*): exit $?"
  grep -E '^\| (reduce|dot|exclusive|sort)|^Checks' "$OUT/bench-$name.txt" | sed 's/^/  /' >> "$S"
}
bench default
if [ -n "${SWEEP:-}" ]; then
  IFS=';' read -r -a settings <<< "$SWEEP"
  for s in "${settings[@]}"; do
    # shellcheck disable=SC2086
    bench "$(echo "$s" | tr ' =' '_-')" HIPAMP_BENCH_NO_CUB=1 $s
  done
fi
if [ "${NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  for k in amp_alg_scan amp_alg_sort_pass amp_alg_sort_hist; do
    HIPAMP_BENCH_NO_CUB=1 timeout 150 ncu --clock-control none -k "regex:^$k\$" --launch-skip 3 -c 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section MemoryWorkloadAnalysis --section SchedulerStats "$BENCH" --algorithms-only > "$OUT/ncu-$k.txt" 2>&1
    note "ncu $k: exit $?"
  done
fi
note "done: $(date)"
