#!/usr/bin/env bash
# gpu-alg-quick.sh — after ci/gpu-alg-profile.sh on the same warm machine: rebuilds its build incrementally, reruns test_algorithms on the GPU and the algorithms benchmark (with CUB, then once per SWEEP setting without it); logs under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${BUILD_DIR:-build-gpu-prof}
export LD_LIBRARY_PATH="$PWD/$B/criterion-root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S="$OUT/quick-summary.txt"
note() { echo "$*" | tee -a "$S"; }
cmake --build "$B" -j"$(nproc)" --target bench_gpu test_algorithms > "$OUT/build.log" 2>&1 || { note "build failed"; tail -30 "$OUT/build.log"; exit 1; }
if [ "${TESTS:-1}" = 1 ]; then
  (cd "$B" && ctest -R '^test_algorithms$' --output-on-failure > "$OUT/ctest.log" 2>&1)
  note "test_algorithms: exit $? $(grep -E 'tests passed|Synthesis' "$OUT/ctest.log" | tail -2 | tr '\n' ' ')"
fi
bench() {
  local name=$1; shift
  env "$@" timeout 300 "$B/bench/bench_gpu" --algorithms-only > "$OUT/bench-$name.txt" 2>&1
  note "=== $name ($*): exit $?"
  grep -E '^\| (reduce|dot|exclusive|sort)|^Checks' "$OUT/bench-$name.txt" | grep -v "Sasum\|Sdot\|bytes read" | sed 's/^/  /' >> "$S"
}
[ "${DEFAULT:-1}" = 1 ] && bench default
if [ -n "${SWEEP:-}" ]; then
  IFS=';' read -r -a settings <<< "$SWEEP"
  for s in "${settings[@]}"; do
    # shellcheck disable=SC2086
    bench "$(echo "$s" | tr ' =' '_-')" HIPAMP_BENCH_NO_CUB=1 $s
  done
fi
cat "$S"
