#!/usr/bin/env bash
# run.sh — builds ci/consumer-mpi against an installed hipamp (find_package(hipamp COMPONENTS mpi), then pkg-config hipamp_mpi with the MPI compiler wrapper) and runs each with 2 ranks, with the mpiexec the build found, no LD_LIBRARY_PATH. Usage: ci/consumer-mpi/run.sh BUILD_DIR INSTALL_PREFIX (ci/test.sh calls it where BUILD_DIR built hipamp::mpi).
set -uo pipefail
dir=${1:?usage: run.sh BUILD_DIR INSTALL_PREFIX} prefix=${2:?usage: run.sh BUILD_DIR INSTALL_PREFIX}
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=$(sed -n 's/^MPIEXEC_EXECUTABLE:[A-Z]*=//p' "$dir/CMakeCache.txt")
mpiexec=${mpiexec:-mpiexec}
over=""
"$mpiexec" --version 2>&1 | grep -q "Open MPI" && over=--oversubscribe
rm -rf "$dir/consumer-mpi"
cmake -S "$here" -B "$dir/consumer-mpi" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
  cmake --build "$dir/consumer-mpi" >/dev/null &&
  env -u LD_LIBRARY_PATH AMP_CACHE_DIR="$dir/consumer-mpi/cache" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
    timeout -k 5 120 "$mpiexec" -n 2 $over "$dir/consumer-mpi/consumer_mpi"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"
# The same program through pkg-config and the MPI's compiler wrapper.
mpicc=$(sed -n 's/^MPI_C_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt")
mpicc=${mpicc:-mpicc}
pc=$(dirname "$(find "$prefix" -name hipamp_mpi.pc | head -n1)")
[ -n "$pc" ] && [ -e "$pc/hipamp_mpi.pc" ] || { echo "run.sh: no hipamp_mpi.pc under $prefix"; exit 1; }
PKG_CONFIG_PATH="$pc" sh -c '"$1" -std=c11 -o "$2/consumer-mpi/consumer_mpi_pc" "$3/main.c" $(pkg-config --cflags --libs hipamp_mpi)' \
  _ "$mpicc" "$dir" "$here" &&
  env -u LD_LIBRARY_PATH AMP_CACHE_DIR="$dir/consumer-mpi/cache" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 \
    timeout -k 5 120 "$mpiexec" -n 2 $over "$dir/consumer-mpi/consumer_mpi_pc"
