#!/usr/bin/env bash
# demo.sh — on a fresh Debian 12 machine: install dependencies, build hipamp, show the accelerators (hipamp-info) and run the transpose/matmul study on the default accelerator.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD_DIR:-$ROOT/build-demo}

ci/install-deps.sh
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHIPAMP_BUILD_TESTS=OFF
cmake --build "$BUILD" -j"$(nproc)"
echo
"$BUILD/hipamp-info"
echo
"$BUILD/examples/study" "$@"
