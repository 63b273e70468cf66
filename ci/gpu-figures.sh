#!/usr/bin/env bash
# gpu-figures.sh — the figures of issues 22 and 24 in one short call on the NVIDIA machine: one build by ci/gpu-test.sh with a few quick tests (graphs, the CPU pool, examples/cg with a graph), then side by side: bench_gpu --graph-only with and without programmatic launches, bench_cpu --graph-only with the pool's spinning on, off (AMP_CPU_SPIN_US=0), at 20 and 500 us, and with AMP_CPU_GRAPH_ALONE=4096, bench_gpu --algorithms-only with CUB and again per FIGURE_SWEEP setting; every step bounded, each log under $OUT as it is written, the one-file summary figures-summary.txt.
#
#   OUT=/tmp/out ci/gpu-figures.sh     # FIGURE_SWEEP="AMP_ALG_REDUCE_INTERLEAVE=0;..." (default: that one)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-gpu-figures/logs}
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-figures}
mkdir -p "$OUT"
SUMMARY="$OUT/figures-summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
rc=0

CTEST_ARGS="${CTEST_ARGS:--j4 -R ^(test_graph|test_cpu|test_async|example_cg_graph)$}" ci/gpu-test.sh || rc=1
note "tests: $(head -n1 "$OUT/counts.txt" 2>/dev/null)"

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
# The spin shorter and longer than its default (100 us), and the graph's
# small-launch threshold lowered so that the CG's launches of 65536 points
# replay on the spinning pool rather than alone.
step 150 graph-cpu-spin20.txt AMP_CPU_SPIN_US=20 "$B/bench_cpu" --graph-only
step 150 graph-cpu-spin500.txt AMP_CPU_SPIN_US=500 "$B/bench_cpu" --graph-only
step 150 graph-cpu-alone4096.txt AMP_CPU_GRAPH_ALONE=4096 "$B/bench_cpu" --graph-only
grep -E '^\| (chain|CG|examples)' "$OUT"/graph-cpu*.txt | sed "s|^$OUT/||" | tee -a "$SUMMARY" > /dev/null

if cmake --build "$BUILD_DIR" --target cub_ref > "$OUT/cub-build.log" 2>&1; then
  note "cub_ref built"
else
  note "cub_ref did not build (see cub-build.log): the CUB rows say so"
fi
step 150 algo-default.txt "$B/bench_gpu" --algorithms-only
IFS=';' read -r -a settings <<< "${FIGURE_SWEEP:-AMP_ALG_REDUCE_INTERLEAVE=0}"
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
