#!/usr/bin/env bash
# weak_scaling.sh — heat_mpi's weak-scaling benchmark: the same rows per rank on 1, 2, ... ranks; prints (and writes with --out) a Markdown table of time per step, bytes exchanged per step (hipamp's statistics and MPI's, against the halo they must equal) and efficiency against one rank. The log (--log) keeps heat_mpi's output, model_inputs lines included, for bench/scaling_model.py.
#
# Usage: weak_scaling.sh --heat PATH [--mpiexec PATH] [--ranks "1 2"] [--nx N] [--rows R]
#            [--steps S] [--warmup W] [--repeat K] [--path auto|host|device|staged] [--no-overlap]
#            [--title TEXT] [--out FILE.md] [--log FILE] [--timeout SECONDS] [-- EXTRA MPIEXEC FLAGS]
# --no-overlap runs heat_mpi's old step (exchange, then every row) instead of
# the overlapped one (interior rows while the halos move).
# Each rank count runs K times (--repeat); the table gives the median time per
# step (the slowest rank's, warm-up steps left out). Efficiency is t(1 rank) /
# t(N ranks): 1.0 means the exchange costs nothing. Exits non-zero when a run
# fails or when a run's bytes do not match the halo (see the check column).
set -uo pipefail

# shellcheck source=examples/weak_scaling_options.sh
. "$(dirname "$0")/../weak_scaling_options.sh"
heat="" nx=4096 steps=100 title="heat_mpi weak scaling"
while [ $# -gt 0 ]; do
  case "$1" in
    --heat) heat=$2; shift 2 ;;
    --nx) nx=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    *) ws_option "$@" || exit 2; shift "$ws_shift" ;;
  esac
done
[ -x "$heat" ] || { echo "weak_scaling: --heat must name the heat_mpi executable (got '$heat')" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -n "$log" ] && : > "$log"

# value KEY FILE: the first number after "KEY " at the start of a line.
value() { sed -n "s/^$1 \([0-9.na/]*\).*/\1/p" "$2" | head -n1; }

rows_md=() status=0 t1="" library="" pathname=""
for np in $ranks; do
  ny=$((rows * np))
  times=()
  for ((k = 1; k <= repeat; k++)); do
    cmd=("$mpiexec" -n "$np" "${extra[@]}" "$heat" "$nx" "$ny" "$steps" --warmup "$warmup" --path "$path" --no-checksum "${overlap[@]}")
    if ! timeout -k 10 "$limit" "${cmd[@]}" > "$tmp/out" 2> "$tmp/err"; then
      echo "weak_scaling: $np rank(s), run $k failed: ${cmd[*]}" >&2
      tail -n 20 "$tmp/err" >&2
      [ -n "$log" ] && { echo "=== FAILED: ${cmd[*]}"; cat "$tmp/out" "$tmp/err"; } >> "$log"
      status=1
      continue 2
    fi
    [ -n "$log" ] && { echo "=== ${cmd[*]}"; cat "$tmp/out"; } >> "$log"
    times+=("$(value time_per_step_s "$tmp/out")")
  done
  # The last run's byte counts (every run moves the same bytes).
  halo=$(value halo_bytes_per_step "$tmp/out")
  copied=$(value copied_bytes_per_step "$tmp/out")
  staged=$(value staged_bytes_per_step "$tmp/out")
  mpi=$(value mpi_bytes_per_step "$tmp/out")
  exch=$(sed -n 's/^time_per_step_s .*exchange \([0-9.]*\) s\/step.*/\1/p' "$tmp/out" | head -n1)
  pathname=$(sed -n 's/^path \([a-z]*\):.*/\1/p' "$tmp/out" | head -n1)
  step=$(sed -n 's/^step \([a-z ]*\):.*/\1/p' "$tmp/out" | head -n1)
  library=$(sed -n 's/^mpi: \([^;]*\);.*/\1/p' "$tmp/out" | head -n1)
  devices=$(sed -n 's/^rank [0-9]*: \([^ ]*\) (\(.*\)), rows.*/\1/p' "$tmp/out" | sort -u | paste -sd, -)
  desc=$(sed -n 's/^rank 0: [^ ]* (\(.*\)), rows.*/\1/p' "$tmp/out" | head -n1)
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  [ -z "$t1" ] && t1=$median
  eff=$(awk -v a="$t1" -v b="$median" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
  ms=$(awk -v t="$median" 'BEGIN { printf "%.4f", t * 1000 }')
  spread=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR] = $1} END {printf "%.4f-%.4f", a[1] * 1000, a[NR] * 1000}')
  exms=$(awk -v t="$exch" 'BEGIN { printf "%.4f", t * 1000 }')
  # What the statistics must show: MPI moves exactly the halo on every path;
  # hipamp copies exactly the halo when staged, nothing in place or by pointer.
  want_copied=0
  [ "$pathname" = staged ] && want_copied=$halo
  check=ok
  if [ "$mpi" != "$halo" ] || [ "$copied" != "$want_copied" ]; then check="MISMATCH"; status=1; fi
  rows_md+=("| $np | $devices | $pathname | $step | ${nx} x ${ny} | $ms ($spread) | $exms | $halo | $copied | $staged | $mpi | $check | **$eff** |")
  echo "weak_scaling: $np rank(s) on $devices: $ms ms/step, halo $halo B/step, copied $copied, mpi $mpi, efficiency $eff" >&2
done

{
  echo "## $title"
  echo
  echo "$desc; $library; $nx columns x $rows rows per rank, $steps steps ($warmup warm-up steps not timed), median of $repeat runs; exchange path: $path (took: ${pathname:-?})."
  echo
  echo "| ranks | accelerators | path | step | grid (NX x NY) | ms/step, median (min-max) | exchange ms/step | halo B/step | copied B/step (hipamp stats) | staged B/step | MPI B/step | bytes check | efficiency vs 1 rank |"
  echo "|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|"
  printf '%s\n' "${rows_md[@]}"
} > "$tmp/table.md"
cat "$tmp/table.md"
[ -n "$out" ] && cp "$tmp/table.md" "$out"
exit "$status"
