#!/usr/bin/env bash
# demo.sh — on a fresh Debian 12 machine: install dependencies, build hipamp, show the accelerators (hipamp-info) and run the transpose/matmul study on the default accelerator.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD_DIR:-$ROOT/build-demo}

ci/install-deps.sh
# The built-in algorithms ship compiled for the CPU accelerator only here:
# each GPU target's pack takes minutes to build on a small machine (set
# HIPAMP_PREBUILT_TARGETS, e.g. "cpu;sm_90", for a GPU's; README).
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHIPAMP_BUILD_TESTS=OFF \
  "-DHIPAMP_PREBUILT_TARGETS=${HIPAMP_PREBUILT_TARGETS-cpu}"
cmake --build "$BUILD" -j"$(nproc)"
echo
"$BUILD/hipamp-info"
echo
"$BUILD/examples/study" "$@"
