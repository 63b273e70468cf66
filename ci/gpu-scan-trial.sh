#!/usr/bin/env bash
# gpu-scan-trial.sh — one GPU call for a scan change (issue 22): builds the tests (ci/gpu-test.sh, no ctest run), runs test_algorithms on the GPU once per TEST_ENVS setting (';'-separated VAR=value words), then ci/gpu-alg-sweep.sh with $SWEEP; every log goes into $OUT/trial.tgz and the summaries into $OUT/summary.txt (a device call brings back few files).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
FINAL=${OUT:?set OUT}
LOGS=/tmp/scan-trial
rm -rf "$LOGS"; mkdir -p "$LOGS"
S="$FINAL/summary.txt"
OUT=$LOGS/build BUILD_DIR=/tmp/bt CTEST_ARGS="-R ^none$" ci/gpu-test.sh > "$LOGS/gpu-test.txt" 2>&1
tail -n 1 "$LOGS/gpu-test.txt" >> "$S"
LIBS=/tmp/bt/criterion-root/usr/lib/x86_64-linux-gnu
IFS=';' read -r -a envs <<< "${TEST_ENVS:-}"
for e in "" "${envs[@]}"; do
  log="$LOGS/test_algorithms-$(echo "${e:-default}" | tr ' =' '_-').txt"
  # shellcheck disable=SC2086
  (cd /tmp/bt/test && env $e LD_LIBRARY_PATH=$LIBS timeout 300 ./test_algorithms -j16 > "$log" 2>&1)
  echo "test_algorithms ${e:-(defaults)}: exit $?; $(grep -E '^\[====\] Synthesis' "$log")" >> "$S"
  grep -E '\[FAIL\]' "$log" | head -n 20 >> "$S"
done
OUT=$LOGS/sweep ci/gpu-alg-sweep.sh > /dev/null 2>&1
cat "$LOGS/sweep/sweep-summary.txt" >> "$S"
tar -C "$LOGS" -czf "$FINAL/trial.tgz" .
