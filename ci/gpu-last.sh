#!/usr/bin/env bash
# gpu-last.sh — the closing check on the NVIDIA machine: ci/gpu-test.sh with the algorithm, graph and CG tests (the GPU defaults of the algorithms as committed), then bench_cpu's graph section on that machine's host with the default small-launch threshold and with AMP_CPU_GRAPH_ALONE=32768 side by side; logs under $OUT, a summary in last-summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-last}
export OUT=${OUT:-$BUILD_DIR/logs}
mkdir -p "$OUT"
S="$OUT/last-summary.txt"
: > "$S"
note() { echo "$*" | tee -a "$S"; }
CTEST_ARGS="-j8 -R ^(test_algorithms|test_alg_device|test_graph|test_graph_discrete_cpu|example_cg|example_cg_graph)$" ci/gpu-test.sh
note "tests: exit $? ($(head -n1 "$OUT/counts.txt" 2>/dev/null))"
grep -E "^ *[0-9]+/[0-9]+ Test" "$OUT/ctest.log" >> "$S" 2>/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" --target bench_cpu > "$OUT/bench-build.log" 2>&1 || note "bench_cpu build: exit $?"
i=0
for a in default 32768 default; do
  i=$((i + 1))
  log="$OUT/bench-cpu-graph-$i-$a.txt"
  if [ "$a" = default ]; then env -u AMP_CPU_GRAPH_ALONE timeout 100 "$BUILD_DIR/bench/bench_cpu" --graph-only > "$log" 2>&1
  else AMP_CPU_GRAPH_ALONE=$a timeout 100 "$BUILD_DIR/bench/bench_cpu" --graph-only > "$log" 2>&1; fi
  note "=== bench_cpu --graph-only, AMP_CPU_GRAPH_ALONE $a: exit $?"
  grep -E "^\| (chain|CG|examples)" "$log" >> "$S"
done
note "done: $(date)"
