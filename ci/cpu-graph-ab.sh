#!/usr/bin/env bash
# cpu-graph-ab.sh — the CPU accelerator's launch-graph figures (issue 24) side by side on the GPU machine's 16-thread host: builds bench_cpu (Release) from this tree, and from $BASE when set (another tree's sources, e.g. `git archive` of an earlier commit, carried in an ignored folder), then runs bench_cpu --graph-only (--$PART-only when PART is set, e.g. algorithms) alternately, RUNS times each (default 3): this tree against $BASE, or this tree under each of $SETTINGS (space-separated; each is VAR=value[,VAR=value...], or "default"); logs and the summary ab-summary.txt under $OUT.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export OUT=${OUT:-$(pwd)/build-graph-ab/logs}
BASE=${BASE:-}
SETTINGS=${SETTINGS:-}
[ -n "$BASE" ] || [ -n "$SETTINGS" ] || { echo "set BASE to another tree, or SETTINGS to the settings to compare" >&2; exit 1; }
mkdir -p "$OUT"
SUMMARY="$OUT/ab-summary.txt"
: > "$SUMMARY"
build() { # source dir, build dir, log name
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release > "$OUT/$3-configure.log" 2>&1 &&
    cmake --build "$2" -j"$(nproc)" --target bench_cpu > "$OUT/$3-build.log" 2>&1
}
trees=(this)
if [ -n "$BASE" ]; then
  trees+=(base)
  build . /tmp/ab-this this & build "$BASE" /tmp/ab-base base & wait
else
  build . /tmp/ab-this this
fi
for t in "${trees[@]}"; do
  [ -x /tmp/ab-$t/bench/bench_cpu ] || { echo "bench_cpu of $t did not build ($t-build.log)" | tee -a "$SUMMARY"; exit 1; }
done
# A variant: a tree and a setting.
variants=()
if [ -n "$BASE" ]; then variants=("this default" "base default")
else for s in $SETTINGS; do variants+=("this $s"); done
fi
echo "host: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)" | tee -a "$SUMMARY"
for r in $(seq 1 "${RUNS:-3}"); do
  for v in "${variants[@]}"; do
    t=${v%% *} s=${v#* }
    envs=()
    [ "$s" = default ] || IFS=, read -r -a envs <<< "$s"
    log="$OUT/${PART:-graph}-$t-${s//[^A-Za-z0-9_=]/_}-$r.txt"
    env "${envs[@]}" timeout 280 /tmp/ab-$t/bench/bench_cpu "--${PART:-graph}-only" > "$log" 2>&1
    echo "=== $t, $s, run $r: exit $?" | tee -a "$SUMMARY"
    grep -E '^\| ' "$log" | grep -E 'met|missed|reported|faster' | sed 's/^/  /' | tee -a "$SUMMARY"
  done
done
