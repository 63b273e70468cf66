#!/usr/bin/env bash
# gpu-graph.sh — launch graphs (issue 24) on the GPU machine in one call: ci/gpu-test.sh with the graph tests only (test_graph, the ABI rows, the trace, examples/cg with and without --graph on the default accelerator), test_algorithms' recording tests (algorithms recorded into a graph), then the graph sections of bench_gpu (--graph-only: the 1000-launch chain against the raw driver, the CG iteration with and without a graph, both goals; again with AMP_GRAPH_PROGRAMMATIC=0) and of bench_cpu, from that build; logs under $OUT (gpu-test.sh's, bench-gpu-graph.txt, bench-cpu-graph.txt).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export BUILD_DIR=${BUILD_DIR:-$(pwd)/build-gpu-graph}
LOGS=${OUT:-$BUILD_DIR/logs}
rc=0
CTEST_ARGS="${CTEST_ARGS:--R ^(test_graph|test_graph_discrete_cpu|test_abi_cuda|test_abi_hip|test_trace|example_cg|example_cg_graph)$}" \
  ci/gpu-test.sh || rc=1
mkdir -p "$LOGS"
# Criterion and its libraries, where ci/gpu-test.sh unpacked them.
export LD_LIBRARY_PATH="$BUILD_DIR/criterion-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$BUILD_DIR/test/test_algorithms" --filter 'algorithms/recording*' --verbose 2>&1 | tee "$LOGS/test-algorithms-recording.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
for bench in bench_gpu bench_gpu_hip; do
  [ -x "$BUILD_DIR/bench/$bench" ] || continue
  "$BUILD_DIR/bench/$bench" --graph-only 2>&1 | tee "$LOGS/bench-gpu-graph${bench#bench_gpu}.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
  # The same with every recorded launch a plain one (no programmatic
  # dependent launch), right after: the two replays side by side.
  AMP_GRAPH_PROGRAMMATIC=0 "$BUILD_DIR/bench/$bench" --graph-only 2>&1 |
    tee "$LOGS/bench-gpu-graph${bench#bench_gpu}-plain.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
done
if [ -x "$BUILD_DIR/bench/bench_cpu" ]; then
  "$BUILD_DIR/bench/bench_cpu" --graph-only 2>&1 | tee "$LOGS/bench-cpu-graph.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
else
  echo "ci/gpu-graph.sh: bench_cpu was not built" | tee -a "$LOGS/summary.txt"
  rc=1
fi
echo "ci/gpu-graph.sh: $([ "$rc" -eq 0 ] && echo PASSED || echo FAILED)" | tee -a "$LOGS/summary.txt"
exit "$rc"
