#!/usr/bin/env bash
# gpu-figures.sh — the figures of issues 22 and 24 in one short call on the NVIDIA machine: one build by ci/gpu-test.sh with a few quick tests (graphs, the CPU pool, the device compiles of the algorithms, examples/cg with a graph) and test_algorithms' sorts, then side by side: bench_gpu --graph-only with and without programmatic launches, bench_cpu --graph-only with the pool's spinning on and off (AMP_CPU_SPIN_US=0) and per CPU_SWEEP setting, bench_gpu --algorithms-only with CUB and again per FIGURE_SWEEP setting; every step bounded, each log under $OUT as it is written, the one-file summary figures-summary.txt.
#
#   OUT=/tmp/out ci/gpu-figures.sh     # FIGURE_SWEEP="AMP_ALG_SORT_MIN_TILES=1;..." (default: that one), CPU_SWEEP (default: none)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-gpu-figures/logs}
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-figures}
mkdir -p "$OUT"
SUMMARY="$OUT/figures-summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
rc=0

CTEST_ARGS="${CTEST_ARGS:--j4 -R ^(test_graph|test_cpu|test_async|test_alg_device|example_cg_graph)$}" ci/gpu-test.sh || rc=1
note "tests: $(head -n1 "$OUT/counts.txt" 2>/dev/null)"
# The sorts of test_algorithms on every accelerator (the whole file takes
# about 7 minutes on the GPU: too long for this call).
export LD_LIBRARY_PATH="$BUILD_DIR/criterion-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
timeout 240 "$BUILD_DIR/test/test_algorithms" --filter '*sort*' -j4 > "$OUT/test-algorithms-sort.txt" 2>&1 || rc=1
note "test_algorithms sorts: $(tail -n1 "$OUT/test-algorithms-sort.txt")"

B="$BUILD_DIR/bench"
step() { # seconds, log name, then the command (VAR=value words first)
  local secs=$1 log="$OUT/$2"
  shift 2
  timeout "$secs" env "$@" > "$log" 2>&1
  local r=$?
  note "=== $(basename "$log" .txt): exit $r"
  [ "$r" -eq 0 ] || rc=1
}
step 120 graph-gpu.txt "$B/bench_gpu" --graph-only
step 120 graph-gpu-plain.txt AMP_GRAPH_PROGRAMMATIC=0 "$B/bench_gpu" --graph-only
grep -hE '^\| (chain|CG|examples)' "$OUT"/graph-gpu*.txt | tee -a "$SUMMARY" > /dev/null
step 150 graph-cpu.txt "$B/bench_cpu" --graph-only
step 150 graph-cpu-nospin.txt AMP_CPU_SPIN_US=0 "$B/bench_cpu" --graph-only
# CPU_SWEEP="AMP_CPU_SPIN_US=20;AMP_CPU_SPIN_US=500;AMP_CPU_GRAPH_ALONE=4096": more
# settings of the pool side by side (the spin shorter and longer than its
# default, the CG's launches replayed on the spinning pool rather than alone).
if [ -n "${CPU_SWEEP:-}" ]; then
  IFS=';' read -r -a cpu_settings <<< "$CPU_SWEEP"
  for s in "${cpu_settings[@]}"; do
    # shellcheck disable=SC2086
    step 150 "graph-cpu-$(echo "$s" | tr ' =' '_-').txt" $s "$B/bench_cpu" --graph-only
  done
fi
grep -E '^\| (chain|CG|examples)' "$OUT"/graph-cpu*.txt | sed "s|^$OUT/||" | tee -a "$SUMMARY" > /dev/null

if cmake --build "$BUILD_DIR" --target cub_ref > "$OUT/cub-build.log" 2>&1; then
  note "cub_ref built"
else
  note "cub_ref did not build (see cub-build.log): the CUB rows say so"
fi
step 150 algo-default.txt "$B/bench_gpu" --algorithms-only
IFS=';' read -r -a settings <<< "${FIGURE_SWEEP:-AMP_ALG_SORT_MIN_TILES=1}"
for s in "${settings[@]}"; do
  # shellcheck disable=SC2086
  step 120 "algo-$(echo "$s" | tr ' =' '_-').txt" HIPAMP_BENCH_NO_CUB=1 $s "$B/bench_gpu" --algorithms-only
done
for f in "$OUT"/algo-*.txt; do
  note "--- $(basename "$f")"
  grep -E '^\| (reduce|dot|exclusive|sort)|^CUB' "$f" | sed 's/^/  /' | tee -a "$SUMMARY" > /dev/null
done
note "ci/gpu-figures.sh: $([ "$rc" -eq 0 ] && echo PASSED || echo FAILED) $(date)"
exit "$rc"
