#!/usr/bin/env bash
# mpi-prefix.sh — sourced by ci/gpu.sh mpi (and runnable to check a prefix here): Debian 12's Open MPI unpacked from carried .debs (ci/fetch-mpi-debs.sh) into a prefix with dpkg -x and made usable from there: OPAL_PREFIX and PMIx's paths relocate it, PATH and LD_LIBRARY_PATH find it, and single-node settings keep it off network fabrics.
# Usage as a check: ci/mpi-prefix.sh DEB_DIR PREFIX — unpacks, then runs a 2-rank MPI program built with the prefix's mpicc, with only the prefix's MPI visible.

# mpi_prefix_unpack DEB_DIR PREFIX: 0 when the prefix holds mpicc and mpirun.
mpi_prefix_unpack() {
  local debdir=$1 prefix=$2 d tmp
  local debs=()
  for d in "$debdir"/*.deb; do [ -e "$d" ] && debs+=("$d"); done
  [ "${#debs[@]}" -gt 0 ] || { echo "mpi-prefix: no .deb files in $debdir (run ci/fetch-mpi-debs.sh on Debian 12)" >&2; return 1; }
  rm -rf "$prefix" && mkdir -p "$prefix" || return 1
  for d in "${debs[@]}"; do
    if command -v dpkg >/dev/null 2>&1; then
      dpkg -x "$d" "$prefix" || return 1
    else
      # No dpkg: a .deb is an ar archive holding data.tar.*.
      tmp=$(mktemp -d)
      (cd "$tmp" && ar x "$d" && tar -xf data.tar.* -C "$prefix") || { rm -rf "$tmp"; return 1; }
      rm -rf "$tmp"
    fi
  done
  # What the packages' maintainer scripts would have set up (alternatives).
  local psm="$prefix/usr/lib/libpsm1"
  if [ -d "$psm" ] && [ ! -e "$psm/libpsm_infinipath.so.1" ]; then
    for d in "$psm"/libpsm_infinipath.so.1.*; do [ -e "$d" ] && ln -sf "$(basename "$d")" "$psm/libpsm_infinipath.so.1"; done
  fi
  [ -x "$prefix/usr/bin/opal_wrapper" ] && [ -x "$prefix/usr/bin/orterun" ] ||
    { echo "mpi-prefix: no mpicc/mpirun under $prefix/usr/bin after unpacking" >&2; return 1; }
}

# mpi_prefix_env PREFIX: export what relocates the unpacked Open MPI, and set
# MPI_PREFIX_MPICC and MPI_PREFIX_MPIEXEC.
mpi_prefix_env() {
  local p=$1/usr
  local pmix=$p/lib/x86_64-linux-gnu/pmix2
  export OPAL_PREFIX=$p
  export PMIX_PREFIX=$pmix PMIX_INSTALL_PREFIX=$pmix
  export PMIX_MCA_mca_base_component_path=$pmix/lib/pmix
  export PATH="$p/bin${PATH:+:$PATH}"
  export LD_LIBRARY_PATH="$p/lib/x86_64-linux-gnu:$1/lib/x86_64-linux-gnu:$pmix/lib:$p/lib/libpsm1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  MPI_PREFIX_MPICC=$p/bin/mpicc.openmpi
  MPI_PREFIX_MPIEXEC=$p/bin/mpirun.openmpi
}

# mpi_single_node_env: Open MPI on one node, as root, in a container: shared
# memory between ranks (no network fabrics probed), no ptrace-based single
# copy, quiet about plugins whose libraries are absent. Callers' own values win.
mpi_single_node_env() {
  export OMPI_ALLOW_RUN_AS_ROOT=${OMPI_ALLOW_RUN_AS_ROOT:-1}
  export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:-1}
  export OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
  export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
  export OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
  export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
  export OMPI_MCA_mca_base_component_show_load_errors=${OMPI_MCA_mca_base_component_show_load_errors:-0}
}

# Run as a program: check a prefix with the system's MPI hidden (the
# prefix's libraries and programs first, compilers from /usr/bin).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  debdir=${1:?usage: ci/mpi-prefix.sh DEB_DIR PREFIX}
  prefix=${2:?usage: ci/mpi-prefix.sh DEB_DIR PREFIX}
  mpi_prefix_unpack "$debdir" "$prefix" || exit 1
  mpi_prefix_env "$prefix"
  mpi_single_node_env
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cat > "$tmp/ring.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, got = -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Get_library_version(lib, &len);
    if (rank == 0) printf("mpi-prefix: %d ranks passed a ring (%.60s)\n", size, lib);
    MPI_Finalize();
    return got == (rank + size - 1) % size ? 0 : 1;
}
C
  "$MPI_PREFIX_MPICC" "$tmp/ring.c" -o "$tmp/ring" || exit 1
  echo "mpi-prefix: libmpi used: $(ldd "$tmp/ring" | grep libmpi)"
  timeout -k 5 60 "$MPI_PREFIX_MPIEXEC" -n 2 --oversubscribe "$tmp/ring"
fi
