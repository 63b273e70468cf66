#!/usr/bin/env bash
# test.sh — the full test run on a fresh Debian 12 machine: install dependencies, build and run the Criterion suite, then again under ASan+UBSan; exits non-zero on any failure.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-$(nproc)}
START=$(date +%s)

ci/install-deps.sh || { echo "ci/test.sh: FAILED (could not install dependencies)"; exit 1; }

# Criterion prints a [PASS]/[FAIL]/[SKIP] line per test: ci/summarize.sh counts them.
export CRITERION_VERBOSITY_LEVEL=1
# Sanitizer settings (used by the second build only). Leaks inside the vendor
# GPU runtimes, which the library dlopens and cannot free, are suppressed.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/ci/lsan.supp:print_suppressions=0}

results=()
status=0
total_pass=0; total_fail=0; total_skip=0

# run_suite NAME BUILD_DIR CMAKE_ARGS...
run_suite() {
  local name=$1 dir=$2
  shift 2
  echo "=== $name: configure + build in $dir"
  rm -rf "$dir"
  if ! cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"; then
    results+=("$name: configure FAILED"); status=1; total_fail=$((total_fail + 1)); return
  fi
  if ! cmake --build "$dir" -j"$JOBS"; then
    results+=("$name: build FAILED"); status=1; total_fail=$((total_fail + 1)); return
  fi
  if [ -x "$dir/hipamp-info" ]; then
    echo "=== $name: hipamp-info"
    "$dir/hipamp-info" || true
  fi
  echo "=== $name: ctest"
  local rc=0
  (cd "$dir" && ctest --output-on-failure) || rc=$?
  local counts
  counts=$(ci/summarize.sh "$dir" "$name")
  echo "$counts"
  # Totals over both suites for the closing line.
  local p f k
  read -r p f k < <(echo "$counts" | head -n1 | sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
  total_pass=$((total_pass + ${p:-0})); total_fail=$((total_fail + ${f:-0})); total_skip=$((total_skip + ${k:-0}))
  if [ "$rc" -ne 0 ]; then
    status=1
    results+=("$(echo "$counts" | head -n1) (ctest FAILED)")
  else
    results+=("$(echo "$counts" | head -n1)")
  fi
}

# install_check BUILD_DIR: install into a scratch prefix, then build and run
# ci/consumer against it with find_package(hipamp) and with pkg-config.
install_check() {
  local dir=$1 prefix=$1/install-check
  rm -rf "$prefix" "$dir/consumer"
  echo "=== install: find_package(hipamp) and pkg-config from $prefix"
  if cmake --install "$dir" --prefix "$prefix" >/dev/null &&
     cmake -S "$ROOT/ci/consumer" -B "$dir/consumer" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
     cmake --build "$dir/consumer" >/dev/null &&
     AMP_CACHE_DIR="$dir/consumer/cache" LD_LIBRARY_PATH="$prefix/lib:$prefix/lib/x86_64-linux-gnu" \
       "$dir/consumer/consumer" &&
     PKG_CONFIG_PATH="$(dirname "$(find "$prefix" -name hipamp.pc | head -n1)")" \
       sh -c 'cc -std=c11 -o "$1/consumer/consumer-pc" "$2/ci/consumer/main.c" "$1/consumer/hipamp_embed/consumer_kernel.c" $(pkg-config --cflags --libs hipamp)' _ "$dir" "$ROOT" &&
     AMP_CACHE_DIR="$dir/consumer/cache" LD_LIBRARY_PATH="$prefix/lib:$prefix/lib/x86_64-linux-gnu" \
       "$dir/consumer/consumer-pc"; then
    results+=("install: find_package and pkg-config consumers passed")
  else
    results+=("install: consumer build or run FAILED"); status=1; total_fail=$((total_fail + 1))
  fi
}

run_suite release "$ROOT/build-ci"
install_check "$ROOT/build-ci"
ci/fiber-tools.sh "$ROOT/build-ci"; ft=$?  # valgrind memcheck + ThreadSanitizer over tiled kernels (loops and fibers)
if [ "$ft" -eq 0 ]; then results+=("fiber tools: memcheck and ThreadSanitizer clean"); else results+=("fiber tools: FAILED"); status=1; total_fail=$((total_fail + 1)); fi
run_suite sanitize "$ROOT/build-ci-asan" -DHIPAMP_SANITIZE=ON

END=$(date +%s)
elapsed=$((END - START))
echo
for r in "${results[@]}"; do echo "  $r"; done
joined=$(printf '%s; ' "${results[@]}")
joined=${joined%; }
if [ "$status" -eq 0 ]; then
  echo "ci/test.sh: PASSED ($joined) in $((elapsed / 60))m$((elapsed % 60))s"
else
  echo "ci/test.sh: FAILED ($joined) in $((elapsed / 60))m$((elapsed % 60))s"
fi
# The closing line CI reads: both suites' Criterion counts together.
echo "tests: $total_pass passed, $total_fail failed, $total_skip skipped"
exit "$status"
