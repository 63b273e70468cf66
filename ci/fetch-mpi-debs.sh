#!/usr/bin/env bash
# fetch-mpi-debs.sh — run on a Debian 12 machine: downloads Open MPI (openmpi-bin, libopenmpi-dev, libopenmpi3) and its runtime dependencies as .deb files into .debs/openmpi/ (git-ignored with .debs/), for ci/gpu.sh mpi (and two-gpus) on a GPU machine that has no MPI and no package registry. ci/gpu.sh's other subcommands do not unpack this subfolder.
set -euo pipefail

cd "$(dirname "$0")/.."
DEST=.debs/openmpi
# The closure of what Open MPI needs at run time that an Ubuntu 24.04 CUDA
# image may lack (libc, libstdc++, libgcc, zlib, libudev and libuuid are
# taken from the system). ci/mpi-prefix.sh unpacks them with dpkg -x.
PACKAGES=(
  openmpi-bin libopenmpi-dev libopenmpi3 openmpi-common
  libpmix2 libhwloc15 libhwloc-plugins libevent-core-2.1-7 libevent-pthreads-2.1-7
  libfabric1 libucx0 libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200
  libpsm2-2 libpsm-infinipath1 libmunge2 libnuma1
)

exec ci/fetch-debs.sh "$DEST" "${PACKAGES[@]}"
