#!/usr/bin/env bash
# fetch-debs.sh — run on a Debian 12 machine: downloads Criterion and its runtime dependencies, OpenSSL's development files and HIP's headers (libamdhip64-dev), as .deb files into .debs/ (git-ignored), for ci/gpu.sh on a GPU machine that has neither and no package registry.
# Usage: ci/fetch-debs.sh [DEST PACKAGE...]   (with arguments: those packages into DEST; ci/fetch-mpi-debs.sh uses this)
set -euo pipefail

cd "$(dirname "$0")/.."
DEST=.debs
PACKAGES=(
  libcriterion3 libcriterion-dev libnanomsg5 libgit2-1.5 libboxfort-dev
  libhttp-parser2.9 libmbedcrypto7 libmbedtls14 libmbedx509-1 libssh2-1
  libssl-dev libssl3            # OpenSSL's headers and libcrypto, for a machine without them
  libamdhip64-dev               # HIP's NVIDIA-platform headers, for test/hip_on_nvidia (GPU_DRIVER=hip)
)
if [ "$#" -gt 0 ]; then
  DEST=$1
  shift
  PACKAGES=("$@")
fi

mkdir -p "$DEST"
cd "$DEST"
for p in "${PACKAGES[@]}"; do
  if ls "${p}"_*.deb >/dev/null 2>&1; then
    echo "fetch-debs: $p already in $DEST"
    continue
  fi
  # apt-get download needs no root; it fetches the candidate version's .deb.
  if [ "$(id -u)" -eq 0 ]; then
    apt-get -o APT::Sandbox::User=root download "$p"
  else
    apt-get download "$p"
  fi
done
echo "fetch-debs: $(ls ./*.deb | wc -l) packages ($(du -sh . | cut -f1)) in $(pwd):"
ls -1 ./*.deb
