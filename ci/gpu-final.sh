#!/usr/bin/env bash
# gpu-final.sh — the graphs and the algorithms in one call on the NVIDIA machine: ci/gpu-graph.sh (graph tests, examples/cg with and without --graph, both benchmarks' graph sections), then ci/gpu-algo.sh (the algorithm tests, bench_gpu's algorithms section with CUB, then once per SWEEP setting); each in its own build, logs under $OUT/graph and $OUT/algo.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$(pwd)/build-gpu-final-logs}
rc=0
OUT="$OUT/graph" BUILD_DIR="$(pwd)/build-gpu-graph" ci/gpu-graph.sh || rc=1
OUT="$OUT/algo" BUILD_DIR="$(pwd)/build-gpu-algo" ci/gpu-algo.sh || rc=1
exit "$rc"
