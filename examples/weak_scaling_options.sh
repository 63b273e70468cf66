# weak_scaling_options.sh — the options both weak-scaling scripts share (examples/cg and examples/mpi_heat), sourced by them: their defaults and ws_option, which takes one of them off the command line.
# shellcheck shell=bash
#
# ws_option "$@": when $1 is a shared option, sets its variable and sets
# ws_shift to the words it took (after "--", all that remain: they are
# extra mpiexec flags, in the array extra); for any other word, or a
# missing value, says so on stderr and returns 1.

# shellcheck disable=SC2034 # the sourcing script reads them
mpiexec=${MPIEXEC:-mpiexec} ranks="1 2" rows=1024 warmup=10 repeat=3 path=auto
# shellcheck disable=SC2034
out="" log="" limit=600 overlap=() extra=() ws_shift=0

ws_option() {
  case "$1" in
    --no-overlap) overlap=(--no-overlap); ws_shift=1; return 0 ;;
    --) shift; extra=("$@"); ws_shift=$(($# + 1)); return 0 ;;
    --mpiexec | --ranks | --rows | --warmup | --repeat | --path | --title | --out | --log | --timeout) ;;
    *) echo "weak_scaling: unknown argument $1" >&2; return 1 ;;
  esac
  if [ $# -lt 2 ]; then
    echo "weak_scaling: $1 needs a value" >&2
    return 1
  fi
  ws_shift=2
  case "$1" in
    --mpiexec) mpiexec=$2 ;;
    --ranks) ranks=$2 ;;
    --rows) rows=$2 ;;
    --warmup) warmup=$2 ;;
    --repeat) repeat=$2 ;;
    --path) path=$2 ;;
    --title) title=$2 ;;
    --out) out=$2 ;;
    --log) log=$2 ;;
    --timeout) limit=$2 ;;
  esac
}
