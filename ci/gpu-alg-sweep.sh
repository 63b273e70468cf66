#!/usr/bin/env bash
# gpu-alg-sweep.sh — a short call on the NVIDIA machine for the algorithms' speed (issue 22): builds bench_gpu alone (no tests; Release) and the CUB reference for this GPU's architecture, runs bench_gpu --algorithms-only with CUB, then once per SWEEP setting (HIPAMP_BENCH_ALGORITHMS picks part of the section, e.g. "reduce"); logs and the one-file summary sweep-summary.txt under $OUT.
#
#   OUT=/tmp/out SWEEP="AMP_ALG_REDUCE_TILES=32;AMP_ALG_SCAN_ITEMS=24 HIPAMP_BENCH_ALGORITHMS=scan" ci/gpu-alg-sweep.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-gpu-sweep/logs}
BUILD=${BUILD_DIR:-$(pwd)/build-gpu-sweep}
mkdir -p "$OUT"
SUMMARY="$OUT/sweep-summary.txt"
: > "$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }

arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '.')
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release ${arch:+-DHIPAMP_CUB_ARCHS=$arch} > "$OUT/configure.log" 2>&1 ||
  { note "configure failed (configure.log)"; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target bench_gpu > "$OUT/build.log" 2>&1 || { note "bench_gpu did not build"; exit 1; }
if [ "${CUB:-1}" != 0 ] && cmake --build "$BUILD" --target cub_ref > "$OUT/cub-build.log" 2>&1; then
  note "cub_ref built for sm_${arch:-?}"
else
  note "no CUB reference (CUB=0, or see cub-build.log)"
fi
run() { # log name, then VAR=value words
  local log="$OUT/$1.txt"
  shift
  timeout 240 env "$@" "$BUILD/bench/bench_gpu" --algorithms-only > "$log" 2>&1
  note "=== $(basename "$log" .txt) ($*): exit $?"
  grep -E '^\| (reduce|dot|exclusive|copy_if|sort)|^Checks|^CUB' "$log" | sed 's/^/  /' | tee -a "$SUMMARY" > /dev/null
}
[ "${DEFAULT:-1}" != 0 ] && run algo-default
IFS=';' read -r -a settings <<< "${SWEEP:-}"
for s in "${settings[@]}"; do
  # shellcheck disable=SC2086
  run "algo-$(echo "$s" | tr ' =,' '_-_')" HIPAMP_BENCH_NO_CUB=1 $s
done
note "ci/gpu-alg-sweep.sh: done $(date)"
