#!/usr/bin/env bash
# gpu-all.sh — one call on the NVIDIA machine: the GPU test suite (ci/gpu-test.sh), then the study and the benchmark report (bench_gpu), with logs and results under $OUT.
# Knobs: CTEST_ARGS (e.g. "-j8": the suite in parallel; passed to gpu-test.sh),
# STUDY=0 skips the study, BENCH_ARGS (e.g. "--launch-only") narrows bench_gpu,
# BENCH=0 skips it, BENCH_TIMEOUT bounds it (seconds), TRACE_TESTS (a ctest -R pattern) reruns those tests with
# AMP_TRACE writing a file, to check the suite with tracing on.
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

study_rc=0
if [ -n "${TRACE_TESTS:-}" ]; then
  echo "=== with AMP_TRACE: $TRACE_TESTS"
  # Criterion's libraries, unpacked by gpu-test.sh.
  (cd "$BUILD_DIR" && LD_LIBRARY_PATH="$BUILD_DIR/criterion-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" AMP_TRACE="$LOGS/trace-%p.json" ctest -j8 -R "$TRACE_TESTS" --output-on-failure) > "$LOGS/trace-tests.log" 2>&1
  trace_rc=$?
  tail -n 6 "$LOGS/trace-tests.log"
  [ "$trace_rc" -eq 0 ] || test_rc=$trace_rc
  echo "trace files: $(ls "$LOGS"/trace-*.json 2>/dev/null | wc -l)"
  rm -f "$LOGS"/trace-*.json
fi

if [ "${STUDY:-1}" != 0 ]; then
  echo "=== study (default accelerator)"
  "$BUILD_DIR/examples/study" > "$LOGS/study.log" 2>&1
  study_rc=$?
  tail -n 24 "$LOGS/study.log"
fi

echo "=== bench_gpu ${BENCH_ARGS:-}"
if [ "${BENCH:-1}" = 0 ]; then
  bench_rc=0
elif [ -x "$BUILD_DIR/bench/bench_gpu" ]; then
  # shellcheck disable=SC2086
  timeout "${BENCH_TIMEOUT:-3000}" "$BUILD_DIR/bench/bench_gpu" ${BENCH_ARGS:-} --out "$OUT" > "$LOGS/bench.log" 2>&1
  bench_rc=$?
  grep -E '^\| |goal|met|miss' "$LOGS/bench.log" | tail -n 40
else
  echo "bench_gpu was not built (no CUDA toolkit found)"
  bench_rc=1
fi
tar -czf "$OUT/logs.tar.gz" -C "$(dirname "$LOGS")" "$(basename "$LOGS")"
echo "gpu-all: tests rc=$test_rc study rc=$study_rc bench rc=$bench_rc"
[ "$test_rc" -eq 0 ] && [ "$study_rc" -eq 0 ] && [ "$bench_rc" -eq 0 ]
