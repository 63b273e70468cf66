#!/usr/bin/env bash
# gpu-test.sh — runs the test suite ON a GPU machine with no Criterion and no package registry (Ubuntu 24.04, CUDA, cmake, gcc): unpacks the Criterion .debs carried in .debs/, builds, runs ctest and prints passed/failed/skipped counts; logs go to $OUT when set.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD_DIR:-$ROOT/build-gpu-ci}
PREFIX=${CRITERION_PREFIX:-$BUILD/criterion-root}
LOGS=${OUT:-$BUILD/logs}
JOBS=${JOBS:-$(nproc)}
START=$(date +%s)

mkdir -p "$LOGS"
summary() {
  local elapsed=$(( $(date +%s) - START ))
  echo "$1 in $((elapsed / 60))m$((elapsed % 60))s" | tee -a "$LOGS/summary.txt"
}

# 1. Criterion from the carried .debs (ci/fetch-debs.sh on a Debian 12 machine).
shopt -s nullglob
debs=("$ROOT"/.debs/*.deb)
if [ "${#debs[@]}" -eq 0 ]; then
  summary "ci/gpu-test.sh: FAILED (no .deb files in $ROOT/.debs: run ci/fetch-debs.sh on Debian 12 first)"
  exit 1
fi
rm -rf "$BUILD"
mkdir -p "$LOGS"
mkdir -p "$PREFIX"
for d in "${debs[@]}"; do
  if command -v dpkg >/dev/null 2>&1; then
    dpkg -x "$d" "$PREFIX"
  else
    # No dpkg: a .deb is an ar archive holding data.tar.*.
    tmp=$(mktemp -d)
    (cd "$tmp" && ar x "$d" && tar -xf data.tar.* -C "$PREFIX")
    rm -rf "$tmp"
  fi
done
CRIT_LIB="$PREFIX/usr/lib/x86_64-linux-gnu"
if [ ! -e "$CRIT_LIB/libcriterion.so" ]; then
  summary "ci/gpu-test.sh: FAILED (libcriterion.so not found under $CRIT_LIB after unpacking)"
  exit 1
fi
# Criterion's own dependencies (libgit2, nanomsg, mbedtls, ...) live there too.
export LD_LIBRARY_PATH="$CRIT_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

{
  echo "host: $(uname -a)"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi
  cmake --version | head -n1
  ${CC:-cc} --version | head -n1
} > "$LOGS/machine.txt" 2>&1

# 2. Configure and build.
# OpenSSL's headers: the machine's own, else the carried libssl-dev.
OPENSSL_ARGS=()
if [ ! -e /usr/include/openssl/evp.h ] && [ -e "$PREFIX/usr/include/openssl/evp.h" ]; then
  OPENSSL_ARGS=(-DOPENSSL_ROOT_DIR="$PREFIX/usr" -DOPENSSL_INCLUDE_DIR="$PREFIX/usr/include"
                -DOPENSSL_CRYPTO_LIBRARY="$CRIT_LIB/libcrypto.so")
  export CPATH="$PREFIX/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
fi
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRITERION_ROOT="$PREFIX" "${OPENSSL_ARGS[@]}" \
     > "$LOGS/configure.log" 2>&1; then
  tail -n 40 "$LOGS/configure.log"
  summary "ci/gpu-test.sh: FAILED (configure; see $LOGS/configure.log)"
  exit 1
fi
if ! cmake --build "$BUILD" -j"$JOBS" > "$LOGS/build.log" 2>&1; then
  grep -E 'error|Error' "$LOGS/build.log" | head -n 40
  summary "ci/gpu-test.sh: FAILED (build; see $LOGS/build.log)"
  exit 1
fi

# 3. What the library sees on this machine.
"$BUILD/hipamp-info" 2>&1 | tee "$LOGS/hipamp-info.txt"

# 4. The suite, one test executable at a time (they share the GPU).
export CRITERION_VERBOSITY_LEVEL=1
rc=0
# CTEST_ARGS adds ctest options (e.g. "-j4 -E device_code_compiles" for a
# short device session).
# shellcheck disable=SC2086
(cd "$BUILD" && ctest --output-on-failure ${CTEST_ARGS:-}) 2>&1 | tee "$LOGS/ctest.log"
rc=${PIPESTATUS[0]}
cp "$BUILD/Testing/Temporary/LastTest.log" "$LOGS/LastTest.log" 2>/dev/null || true

counts=$(ci/summarize.sh "$BUILD" "gpu suite")
echo "$counts" | tee "$LOGS/counts.txt"
if [ "$rc" -eq 0 ]; then
  summary "ci/gpu-test.sh: PASSED ($(echo "$counts" | head -n1))"
else
  summary "ci/gpu-test.sh: FAILED ($(echo "$counts" | head -n1); ctest exit $rc)"
fi
exit "$rc"
