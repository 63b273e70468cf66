#!/usr/bin/env bash
# gpu-launch.sh — one short call on the NVIDIA machine for launch-path work: builds the library and bench_gpu only (no Criterion needed) and runs bench_gpu --launch-only RUNS times (default 2), which prints the launch-overhead row and where a launch's time goes.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-$(pwd)/build-gpu-launch}
# OpenSSL's headers: the machine's own, else the carried libssl-dev (ci/fetch-debs.sh).
OPENSSL_ARGS=()
if [ ! -e /usr/include/openssl/evp.h ]; then
  PREFIX=$BUILD/ssl-root
  mkdir -p "$PREFIX"
  for d in .debs/libssl-dev_*.deb .debs/libssl3_*.deb; do dpkg -x "$d" "$PREFIX"; done
  OPENSSL_ARGS=(-DOPENSSL_ROOT_DIR="$PREFIX/usr" -DOPENSSL_INCLUDE_DIR="$PREFIX/usr/include"
                -DOPENSSL_CRYPTO_LIBRARY="$PREFIX/usr/lib/x86_64-linux-gnu/libcrypto.so")
  export CPATH="$PREFIX/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
  export LD_LIBRARY_PATH="$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${OPENSSL_ARGS[@]}" > /tmp/gpu-launch-configure.log 2>&1 ||
  { tail -n 30 /tmp/gpu-launch-configure.log; exit 1; }
cmake --build "$BUILD" -j"$(nproc)" --target bench_gpu > /tmp/gpu-launch-build.log 2>&1 ||
  { grep -E 'error|Error' /tmp/gpu-launch-build.log | head -n 30; exit 1; }
rc=0
for i in $(seq "${RUNS:-2}"); do
  echo "=== run $i"
  "$BUILD/bench/bench_gpu" --launch-only --out /tmp 2>&1 | grep -E 'launch|long batch|host cost|FAIL|error' || rc=1
done
exit "$rc"
