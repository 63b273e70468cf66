#!/usr/bin/env bash
# cpu-host-figures.sh — the CPU accelerator's benchmark figures (issues 22 and 24) on the GPU machine's 16-thread host, which this project's 2-core CI machine cannot give: builds bench_cpu (Release), then runs bench_cpu --algorithms-only and --graph-only in turn, RUNS times each (default 3); logs and the one-file summary cpu-figures.txt under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-cpu-figures/logs}
BUILD=${BUILD_DIR:-$(pwd)/build-cpu-figures}
mkdir -p "$OUT"
SUMMARY="$OUT/cpu-figures.txt"
: > "$SUMMARY"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release > "$OUT/configure.log" 2>&1 &&
  cmake --build "$BUILD" -j"$(nproc)" --target bench_cpu > "$OUT/build.log" 2>&1 ||
  { echo "bench_cpu did not build (configure.log, build.log)" | tee -a "$SUMMARY"; exit 1; }
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$SUMMARY"
for r in $(seq 1 "${RUNS:-3}"); do
  for part in algorithms graph; do
    log="$OUT/bench-cpu-$part-$r.txt"
    timeout 280 "$BUILD/bench/bench_cpu" "--$part-only" > "$log" 2>&1
    echo "=== bench_cpu --$part-only, run $r: exit $?" | tee -a "$SUMMARY"
    grep -E '^\| ' "$log" | grep -E 'met|missed|reported|faster' | sed 's/^/  /' | tee -a "$SUMMARY"
  done
done
