#!/usr/bin/env bash
# gpu-all.sh — one call on the NVIDIA machine: the GPU test suite (ci/gpu-test.sh), then the study and the benchmark report (bench_gpu), with logs and results under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=${OUT:-$ROOT/build-gpu-ci-out}
mkdir -p "$OUT"
export BUILD_DIR=${BUILD_DIR:-$ROOT/build-gpu-ci}
LOGS=$BUILD_DIR-logs
mkdir -p "$LOGS"

# gpu-test.sh writes many logs; they travel back as one archive (the device
# tool returns at most 8 files).
OUT= bash ci/gpu-test.sh > "$LOGS/gpu-test.log" 2>&1
test_rc=$?
tail -n 25 "$LOGS/gpu-test.log"
cp -r "$BUILD_DIR/logs" "$LOGS/suite" 2>/dev/null

echo "=== study (default accelerator)"
"$BUILD_DIR/examples/study" > "$LOGS/study.log" 2>&1
study_rc=$?
tail -n 24 "$LOGS/study.log"

echo "=== bench_gpu"
if [ -x "$BUILD_DIR/bench/bench_gpu" ]; then
  "$BUILD_DIR/bench/bench_gpu" --out "$OUT" > "$LOGS/bench.log" 2>&1
  bench_rc=$?
  grep -E '^\| |goal|met|miss' "$LOGS/bench.log" | tail -n 40
else
  echo "bench_gpu was not built (no CUDA toolkit found)"
  bench_rc=1
fi
tar -czf "$OUT/logs.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
echo "gpu-all: tests rc=$test_rc study rc=$study_rc bench rc=$bench_rc"
[ "$test_rc" -eq 0 ] && [ "$study_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
