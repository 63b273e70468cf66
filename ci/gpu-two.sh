#!/usr/bin/env bash
# gpu-two.sh — the two-GPU session in one call: ci/gpu-mpi.sh (heat_mpi and cg_mpi with one rank per GPU, the weak-scaling tables, the scaling model), then from its build the two-GPU tests (test_peer, test_conformance: peer copies, views of arrays between two GPUs) and bench_gpu --two-gpus-only (the peer copy against the raw driver's, two kernels at once); the tables and one log archive under $OUT.
#
#   OUT=/some/dir ci/gpu-two.sh     (carry .debs: Criterion and .debs/openmpi)
# MPI_BUDGET (seconds, default 400) is gpu-mpi.sh's BUDGET, leaving the rest
# of a 10-minute slot to the tests and the benchmark.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build-gpu-two-out}
export BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu-mpi}
WORK=$BUILD_DIR-two
rm -rf "$WORK"
mkdir -p "$OUT" "$WORK"
BUDGET=${MPI_BUDGET:-400} OUT="$WORK" bash ci/gpu-mpi.sh > "$WORK/gpu-mpi.log" 2>&1
mpi_rc=$?
tail -n 40 "$WORK/gpu-mpi.log"
B=$BUILD_DIR/build
export LD_LIBRARY_PATH="$BUILD_DIR/criterion-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cmake --build "$B" -j"$(nproc)" --target test_peer test_conformance bench_gpu > "$WORK/two-build.log" 2>&1 ||
  echo "gpu-two: the build of test_peer, test_conformance and bench_gpu failed (two-build.log)"
(cd "$B" && CRITERION_VERBOSITY_LEVEL=1 ctest -R '^(test_peer|test_conformance)$' --output-on-failure) > "$WORK/two-tests.log" 2>&1
tests_rc=$?
grep -E 'tests passed|FAIL|SKIP.*GPU|Passed|Failed' "$WORK/two-tests.log" | tail -n 12
timeout 200 "$B/bench/bench_gpu" --two-gpus-only > "$WORK/two-bench.log" 2>&1
bench_rc=$?
grep -E '^\||goals met|one GPU' "$WORK/two-bench.log"
cp "$WORK"/*.md "$WORK/gpu-mpi-summary.txt" "$OUT/" 2>/dev/null
tar -czf "$OUT/gpu-two-logs.tar.gz" -C "$WORK" --exclude='*.md' . 2>/dev/null
echo "gpu-two: mpi rc=$mpi_rc tests rc=$tests_rc bench rc=$bench_rc"
[ "$mpi_rc" -eq 0 ] && [ "$tests_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
