#!/usr/bin/env bash
# check-device-code.sh — compiles every kernel file of the repository (test/kernels, examples/kernels, examples/cg, examples/tealeaf) for the AMD and NVIDIA targets whose runtime compiler is installed here, with no GPU: hipRTC for gfx90a and gfx1030, NVRTC for sm_90; fails on any compile error. Usage: ci/check-device-code.sh BUILD_DIR
set -uo pipefail
build=${1:?usage: ci/check-device-code.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
tool="$build/hipamp-compile"
[ -x "$tool" ] || { echo "check-device-code: $tool not built"; exit 1; }
known=$("$tool" --list-targets 2>/dev/null)
targets=()
for t in gfx90a gfx1030 sm_90; do
  if grep -qx "$t" <<<"$known"; then targets+=("$t"); else echo "check-device-code: $t skipped (its runtime compiler is not installed)"; fi
done
[ "${#targets[@]}" -gt 0 ] || { echo "check-device-code: no runtime compiler installed (hipRTC or NVRTC)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0; n=0
for t in "${targets[@]}"; do
  for f in "$root"/test/kernels/*.hip "$root"/examples/kernels/*.hip "$root"/examples/cg/*.hip "$root"/examples/tealeaf/*.hip; do
    n=$((n + 1))
    if ! "$tool" --target "$t" -o "$tmp/out.co" "$f" > "$tmp/log" 2>&1; then
      echo "check-device-code: FAILED $f for $t:"; head -n 20 "$tmp/log"; fail=$((fail + 1))
    fi
  done
done
echo "check-device-code: $((n - fail)) of $n compiles passed (${targets[*]})"
[ "$fail" -eq 0 ]
