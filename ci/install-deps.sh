#!/usr/bin/env bash
# install-deps.sh — installs the Debian 12 packages hipamp needs to build, test and run its demo (idempotent; as root or through sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config g++     # toolchain; g++ also compiles CPU-accelerator kernels
  libcriterion-dev                          # the test framework
  libamdhip64-dev libamd-comgr-dev          # HIP runtime + hipRTC and comgr (loaded at run time)
  llvm-15                                   # llvm-readelf-15 / llvm-objdump-15 for code-object checks
  libclang1-14 libclang-common-14-dev       # the CPU accelerator's loop transformation (dlopen'ed libclang + its headers)
  valgrind                                  # ci/fiber-tools.sh: memcheck over tiled kernels
)

missing=()
for p in "${PACKAGES[@]}"; do
  # A package counts as present only when dpkg says it is fully installed.
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
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

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
