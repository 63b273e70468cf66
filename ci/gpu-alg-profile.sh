#!/usr/bin/env bash
# gpu-alg-profile.sh — ci/gpu-algo.sh (algorithm tests, bench_gpu's algorithms section with CUB and a SWEEP), then Nsight Compute, where it reads the counters, on one scan, one sort pass and one histogram launch of that benchmark; logs under $OUT (ncu-<kernel>.txt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-gpu-algo/logs}
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-algo}
ci/gpu-algo.sh
rc=$?
command -v ncu > /dev/null || { echo "ncu is not installed: no profiles" | tee -a "$OUT/algo-summary.txt"; exit "$rc"; }
for k in amp_alg_scan amp_alg_sort_pass amp_alg_sort_hist; do
  HIPAMP_BENCH_NO_CUB=1 timeout 150 ncu --clock-control none -k "regex:^$k\$" --launch-skip 3 -c 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section SchedulerStats "$BUILD_DIR/bench/bench_gpu" --algorithms-only \
    > "$OUT/ncu-$k.txt" 2>&1
  echo "ncu $k: exit $?" | tee -a "$OUT/algo-summary.txt"
done
exit "$rc"
