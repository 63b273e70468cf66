#!/usr/bin/env bash
# install-deps.sh — installs the Debian 12 (or Ubuntu) packages hipamp needs to build, test, check and run its demo (idempotent; as root or through sudo).
set -euo pipefail

# Needed: without these nothing builds or tests.
REQUIRED=(
  build-essential cmake pkg-config g++     # toolchain; g++ also compiles CPU-accelerator kernels
  libcriterion-dev                          # the test framework
  python3                                   # ci/check-spack-recipe.py
  libssl-dev                                # libcrypto: SHA-256 and HMAC of the compile cache
)
# Wanted where the distribution has them (all of them on Debian 12, where CI
# runs; ci/test.sh fails there if the HIP headers are missing, through
# HIPAMP_ABI_REQUIRED): HIP runtime + hipRTC and comgr (loaded at run time,
# headers for the ABI test), llvm-readelf-15 / llvm-objdump-15 for the
# code-object checks, Open MPI for hipamp::mpi, heat_mpi, test_mpi and the
# MPI Makefile example, node + npm for the workflow linter.
OPTIONAL=(llvm-15 openmpi-bin libopenmpi-dev
  clang libclang-rt-14-dev                  # libFuzzer for ci/fuzz.sh
  libopenblas0                              # the CBLAS of the BLAS interop example on the CPU accelerator
  libclang1-14 libclang-common-14-dev       # the CPU accelerator's loop transformation (dlopen'ed libclang + its headers)
  valgrind                                  # ci/fiber-tools.sh: memcheck over tiled kernels
)
# A ROCm installation (the ROCm runner's container) brings its own HIP and
# comgr; Debian's would be a second, older runtime beside it.
if [ -e "${ROCM_PATH:-/opt/rocm}/include/hip/hip_runtime_api.h" ]; then
  echo "install-deps: ROCm at ${ROCM_PATH:-/opt/rocm}: not installing the distribution's HIP packages"
else
  OPTIONAL+=(libamdhip64-dev libamd-comgr-dev)
fi
# Any node with npm will do for the linter (some machines carry their own).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  OPTIONAL+=(nodejs npm)
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${REQUIRED[@]}" "${OPTIONAL[@]}"; do
  installed "$p" || missing+=("$p")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all $((${#REQUIRED[@]} + ${#OPTIONAL[@]})) packages already installed"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
install=()
for p in "${missing[@]}"; do
  is_required=false
  for r in "${REQUIRED[@]}"; do [ "$p" = "$r" ] && is_required=true; done
  if $is_required || apt-cache show "$p" >/dev/null 2>&1; then
    install+=("$p")
  else
    echo "install-deps: $p is not available here; going on without it"
  fi
done
echo "install-deps: installing ${install[*]}"
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${install[@]}"
