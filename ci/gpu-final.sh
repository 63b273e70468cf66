#!/usr/bin/env bash
# gpu-final.sh — one call on the NVIDIA machine for the algorithms and graphs together: ci/gpu-test.sh with the graph, algorithm and CG tests, the graph sections of bench_gpu and bench_cpu, then bench_gpu's algorithms section with CUB and once per SWEEP setting; logs under $OUT, a summary in final-summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-final}
export OUT=${OUT:-$BUILD_DIR/logs}
mkdir -p "$OUT"
S="$OUT/final-summary.txt"
: > "$S"
note() { echo "$*" | tee -a "$S"; }
CTEST_ARGS="-j4 -R ^(test_graph|test_graph_discrete_cpu|test_algorithms|test_trace|example_cg|example_cg_graph)$" ci/gpu-test.sh
note "tests: exit $? ($(head -n1 "$OUT/counts.txt" 2>/dev/null))"
grep -E "^[0-9]+/[0-9]+ Test" "$OUT/ctest.log" >> "$S" 2>/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target bench_gpu bench_cpu cub_ref > "$OUT/bench-build.log" 2>&1 || note "bench build: exit $?"
B="$BUILD_DIR/bench"
timeout 150 "$B/bench_gpu" --graph-only > "$OUT/bench-gpu-graph.txt" 2>&1; note "bench_gpu --graph-only: exit $?"
grep -E "^\|.*(chain|CG|cg|goal|met|missed)" "$OUT/bench-gpu-graph.txt" | head -20 >> "$S"
timeout 100 "$B/bench_cpu" --graph-only > "$OUT/bench-cpu-graph.txt" 2>&1; note "bench_cpu --graph-only: exit $?"
grep -E "^\|.*(chain|CG|cg|goal|met|missed)" "$OUT/bench-cpu-graph.txt" | head -20 >> "$S"
bench() {
  local name=$1; shift
  env "$@" timeout 200 "$B/bench_gpu" --algorithms-only > "$OUT/bench-alg-$name.txt" 2>&1
  note "=== algorithms $name ($*): exit $?"
  grep -E '^\| (reduce|dot|exclusive|sort)|^Checks' "$OUT/bench-alg-$name.txt" | grep -v "CUB.*— |" >> "$S"
}
bench default
if [ -n "${SWEEP:-}" ]; then
  IFS=';' read -r -a settings <<< "$SWEEP"
  for s in "${settings[@]}"; do
    # shellcheck disable=SC2086
    bench "$(echo "$s" | tr ' =' '_-')" HIPAMP_BENCH_NO_CUB=1 $s
  done
fi
note "done: $(date)"
