#!/usr/bin/env bash
# weak_scaling.sh — cg_mpi's weak-scaling benchmark: the same N columns x R rows per rank on 1, 2, ... ranks, a fixed number of iterations; prints (and writes with --out) a Markdown table of time per iteration, halo and MPI bytes per iteration (which must be equal), time in the allreduces and efficiency against one rank. The log (--log) keeps cg_mpi's output, cg_model_inputs lines included, for bench/scaling_model.py.
#
# Usage: weak_scaling.sh --cg PATH [--mpiexec PATH] [--ranks "1 2"] [--n N] [--rows R]
#            [--iters K] [--warmup W] [--repeat K] [--path auto|host|device|staged] [--no-overlap]
#            [--title TEXT] [--out FILE.md] [--log FILE] [--timeout SECONDS] [-- EXTRA MPIEXEC FLAGS]
# Each rank count runs K times (--repeat); the table gives the median time per
# iteration (the slowest rank's, warm-up iterations left out). The runs do
# K iterations whatever the residual (--tol 1e-300): a weak-scaling run's
# grid grows with the ranks, and so would its iteration count. Exits
# non-zero when a run fails or moves other bytes than the halo.
set -uo pipefail

# shellcheck source=examples/weak_scaling_options.sh
. "$(dirname "$0")/../weak_scaling_options.sh"
cg="" n=4096 iters=100 title="cg_mpi weak scaling"
while [ $# -gt 0 ]; do
  case "$1" in
    --cg) cg=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) ws_option "$@" || exit 2; shift "$ws_shift" ;;
  esac
done
[ -x "$cg" ] || { echo "weak_scaling: --cg must name the cg_mpi executable (got '$cg')" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$log" ] && : > "$log"

# value KEY FILE: the first number after "KEY " at the start of a line.
value() { sed -n "s/^$1 \([0-9.e+-]*\).*/\1/p" "$2" | head -n1; }

lines=() status=0 t1=""
for np in $ranks; do
  times=()
  for ((k = 1; k <= repeat; k++)); do
    cmd=("$mpiexec" -n "$np" "${extra[@]}" "$cg" --n "$n" --ny "$((rows * np))" --tol 1e-300 --max-iters "$iters"
         --warmup "$warmup" --path "$path" "${overlap[@]}")
    if ! timeout -k 10 "$limit" "${cmd[@]}" > "$tmp/out" 2> "$tmp/err"; then
      echo "weak_scaling: $np rank(s), run $k failed: ${cmd[*]}" >&2
      tail -n 20 "$tmp/err" >&2
      [ -n "$log" ] && { echo "=== FAILED: ${cmd[*]}"; cat "$tmp/out" "$tmp/err"; } >> "$log"
      status=1
      continue 2
    fi
    [ -n "$log" ] && { echo "=== ${cmd[*]}"; cat "$tmp/out"; } >> "$log"
    times+=("$(value time_per_iteration_s "$tmp/out")")
  done
  halo=$(value halo_bytes_per_iteration "$tmp/out")
  mpi=$(value mpi_bytes_per_iteration "$tmp/out")
  ar=$(sed -n 's/^time_per_iteration_s .*allreduces \([0-9.]*\) s an iteration.*/\1/p' "$tmp/out" | head -n1)
  pathname=$(sed -n 's/^path \([a-z]*\):.*/\1/p' "$tmp/out" | head -n1)
  devices=$(sed -n 's/^rank [0-9]*: \([^,]*\), rows.*/\1/p' "$tmp/out" | sort -u | paste -sd, -)
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  [ -z "$t1" ] && t1=$median
  eff=$(awk -v a="$t1" -v b="$median" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
  ms=$(awk -v t="$median" 'BEGIN { printf "%.4f", t * 1000 }')
  arms=$(awk -v t="$ar" 'BEGIN { printf "%.4f", t * 1000 }')
  check=ok
  [ "$halo" = "$mpi" ] || { check="MPI moved $mpi B, the halo is $halo B"; status=1; }
  lines+=("| $np | $devices | $pathname | $n x $((rows * np)) | $ms | $arms | $halo | $mpi | $check | **$eff** |")
done
{
  echo "### $title"
  echo
  echo "$iters iterations, the first $warmup left out; median of $repeat runs; the slowest rank's time."
  echo
  echo "| ranks | devices | path | grid (columns x rows) | ms/iteration | in allreduces, ms | halo B/iteration | MPI B/iteration | check | efficiency |"
  echo "|---:|---|---|---|---:|---:|---:|---:|---|---:|"
  printf '%s\n' "${lines[@]}"
} > "$tmp/table"
cat "$tmp/table"
[ -n "$out" ] && cp "$tmp/table" "$out"
exit $status
