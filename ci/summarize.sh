#!/usr/bin/env bash
# summarize.sh — prints one line of Criterion test counts (passed/failed/skipped) from a build directory's last ctest run.
# Usage: ci/summarize.sh BUILD_DIR LABEL. Needs the tests to have run with CRITERION_VERBOSITY_LEVEL=1.
set -uo pipefail
build=$1
label=${2:-tests}
log="$build/Testing/Temporary/LastTest.log"
if [ ! -f "$log" ]; then
  echo "$label: no test log ($log)"
  exit 0
fi
passed=$(grep -c '^\[PASS\] ' "$log" || true)
failed=$(grep -c '^\[FAIL\] ' "$log" || true)
skipped=$(grep -c '^\[SKIP\] ' "$log" || true)
echo "$label: $passed passed, $failed failed, $skipped skipped"
if [ "$failed" -gt 0 ]; then
  grep '^\[FAIL\] ' "$log" | sed 's/^/  /'
fi
if [ "$skipped" -gt 0 ]; then
  # Skip reasons, once each, with how many tests gave it.
  # "Test is disabled": where no GPU is listed, test/support.c disables the
  # tests' GPU variants before the run ("[----] support: no GPU present").
  grep '^\[SKIP\] ' "$log" | sed 's/^\[SKIP\] [^ ]*: //' |
    sed 's/^Test is disabled$/disabled before the run: no GPU present (the GPU variants; test\/support.c)/' |
    sort | uniq -c | sed 's/^ */  skipped /'
fi
