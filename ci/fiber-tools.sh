#!/usr/bin/env bash
# fiber-tools.sh — runs ci/tiled_stress.c (threads launching tiled kernels on the CPU accelerator's loop versions and fibers, and replaying graphs of them; then threads replaying one graph at once, and recordings whose thread exited ended by another thread or discarded with their view) under valgrind memcheck against BUILD_DIR's library and under ThreadSanitizer against a TSan build of the library (once more with the pool's threads spinning and sleeping at nearly every launch, and once with them spinning long enough to join graph replays' teams), then a long run of tiled launches (synchronous and asynchronous, loop version and fibers) under ThreadSanitizer, and ci/handle_stress.c (stale handles racing their destroy) under ThreadSanitizer; fails unless all report nothing. Prints one closing line. Bounded to a few minutes on 2 cores.
# Usage: ci/fiber-tools.sh BUILD_DIR
# Criterion cannot run under ThreadSanitizer ("Could not initialize inheritable arena"), hence the plain program.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${1:-$ROOT/build}
TSAN_BUILD=$BUILD-tsan
WORK=$(mktemp -d /tmp/hipamp-fiber-tools-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
CC=${CC:-cc}
fails=()

# Kernels for valgrind must not use instructions it cannot emulate
# (AVX-512): no -march=native here.
export AMP_CPU_NATIVE=0
export AMP_CACHE_DIR=$WORK/cache

# -------------------------------------------------------------- memcheck
# Run in the background while the ThreadSanitizer build below compiles:
# valgrind runs a program's threads one at a time, so it keeps one core
# busy and the build has the other (on CI's 2 cores the step was the sum
# of both). Its failures go to $WORK/memcheck.fails, its output to
# $WORK/memcheck.out; both are read after the build.
memcheck() {
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind not installed" >>"$WORK/memcheck.fails"
    return
  fi
  if ! "$CC" -std=c11 -O1 -g -I"$ROOT/include" -I"$BUILD/include" ci/tiled_stress.c -o "$WORK/stress" \
       -L"$BUILD" -lhipamp -lpthread -Wl,-rpath,"$BUILD"; then
    echo "memcheck: could not build ci/tiled_stress.c against $BUILD" >>"$WORK/memcheck.fails"
    return
  fi
  for mode in auto fibers; do
    # Compile outside valgrind (the compiler is a child process it would
    # not follow anyway); the run under it loads the cached module.
    if ! AMP_CPU_TILED=$mode timeout 300 "$WORK/stress" >"$WORK/warm-$mode.log" 2>&1; then
      echo "memcheck ($mode): the program failed natively" >>"$WORK/memcheck.fails"; cat "$WORK/warm-$mode.log"
      continue
    fi
    if AMP_CPU_TILED=$mode timeout 600 valgrind -q --error-exitcode=9 --log-file="$WORK/vg-$mode.log" \
         "$WORK/stress" >/dev/null 2>&1; then
      echo "fiber-tools: memcheck, AMP_CPU_TILED=$mode: 0 errors"
    else
      echo "memcheck ($mode): errors reported" >>"$WORK/memcheck.fails"; cat "$WORK/vg-$mode.log"
    fi
  done
}
: >"$WORK/memcheck.fails"
memcheck >"$WORK/memcheck.out" 2>&1 &
memcheck_pid=$!

# The memcheck runs' output and failures, once they are over (before the
# ThreadSanitizer runs, which want both cores).
wait_for_memcheck() {
  wait "$memcheck_pid"
  cat "$WORK/memcheck.out"
  local f
  while IFS= read -r f; do fails+=("$f"); done <"$WORK/memcheck.fails"
}

# ------------------------------------------------------- ThreadSanitizer
# No algorithm pack (HIPAMP_PREBUILT_TARGETS empty): the stress program
# builds its own kernels, and a pack for every default target would take
# many minutes of NVRTC and hipRTC when the script runs on its own.
if cmake -S "$ROOT" -B "$TSAN_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPAMP_BUILD_TESTS=OFF \
     -DHIPAMP_BUILD_EXAMPLES=OFF -DHIPAMP_PREBUILT_TARGETS= -DCMAKE_C_FLAGS=-fsanitize=thread \
     -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >"$WORK/tsan-cmake.log" 2>&1 &&
   cmake --build "$TSAN_BUILD" -j"${JOBS:-2}" --target hipamp >"$WORK/tsan-build.log" 2>&1 &&
   "$CC" -std=c11 -O1 -g -fsanitize=thread -I"$ROOT/include" -I"$TSAN_BUILD/include" ci/tiled_stress.c \
     -o "$WORK/stress-tsan" -L"$TSAN_BUILD" -lhipamp -lpthread -Wl,-rpath,"$TSAN_BUILD"; then
  wait_for_memcheck
  for mode in auto fibers; do
    if AMP_CPU_TILED=$mode TSAN_OPTIONS="halt_on_error=1 exitcode=9 ${TSAN_OPTIONS:-}" timeout 600 \
         "$WORK/stress-tsan" >"$WORK/tsan-$mode.log" 2>&1; then
      echo "fiber-tools: ThreadSanitizer, AMP_CPU_TILED=$mode: no reports"
    else
      fails+=("ThreadSanitizer ($mode): reports or failure"); cat "$WORK/tsan-$mode.log"
    fi
  done
  # The pool's spin-then-sleep hand-offs (lib/cpu/cpu_pool.c): off by
  # default on 2 cores; a spin of 1 us makes pool threads and launchers
  # spin, then sleep, at nearly every launch.
  if AMP_CPU_SPIN_US=1 AMP_CPU_THREADS=3 TSAN_OPTIONS="halt_on_error=1 exitcode=9 ${TSAN_OPTIONS:-}" timeout 600 \
       "$WORK/stress-tsan" >"$WORK/tsan-spin.log" 2>&1; then
    echo "fiber-tools: ThreadSanitizer, AMP_CPU_SPIN_US=1 (pool threads spinning and sleeping): no reports"
  else
    fails+=("ThreadSanitizer (AMP_CPU_SPIN_US=1): reports or failure"); cat "$WORK/tsan-spin.log"
  fi
  # Graph replays' teams (lib/cpu/cpu_team.c): pool threads that spin
  # long enough to wait for a replay's next launch join it as members.
  if AMP_CPU_SPIN_US=300 AMP_CPU_THREADS=3 TSAN_OPTIONS="halt_on_error=1 exitcode=9 ${TSAN_OPTIONS:-}" timeout 600 \
       "$WORK/stress-tsan" >"$WORK/tsan-team.log" 2>&1; then
    echo "fiber-tools: ThreadSanitizer, AMP_CPU_SPIN_US=300 (graph replays on teams of pool threads): no reports"
  else
    fails+=("ThreadSanitizer (AMP_CPU_SPIN_US=300): reports or failure"); cat "$WORK/tsan-team.log"
  fi
  # The long run: every launch switches onto a fiber or loop stack and back,
  # and ThreadSanitizer keeps a shadow stack per fiber of at most 65,536
  # calls, so a switch left unbalanced by even one call per launch
  # overflows it within LONG launches on one thread (it then hangs: hence
  # the time-out). Auto: ring4 on its loop version, ring4_macro on fibers.
  LONG=70000
  if AMP_CPU_TILED=auto TSAN_OPTIONS="halt_on_error=1 exitcode=9 ${TSAN_OPTIONS:-}" timeout -k 10 240 \
       "$WORK/stress-tsan" --launches "$LONG" >"$WORK/tsan-long.log" 2>&1; then
    echo "fiber-tools: ThreadSanitizer, $LONG tiled launches in a row (sync and async, loops and fibers): no reports"
  else
    fails+=("ThreadSanitizer: the long run of $LONG tiled launches failed"); tail -40 "$WORK/tsan-long.log"
  fi
  # Stale handles racing their destroy and their shells' reuse
  # (ci/handle_stress.c): the handle checks' acquire against the publish.
  if "$CC" -std=c11 -O1 -g -fsanitize=thread -I"$ROOT/include" -I"$TSAN_BUILD/include" ci/handle_stress.c \
       -o "$WORK/handle-stress-tsan" -L"$TSAN_BUILD" -lhipamp -lpthread -Wl,-rpath,"$TSAN_BUILD" \
       >"$WORK/tsan-handles.log" 2>&1 &&
     TSAN_OPTIONS="halt_on_error=1 exitcode=9 ${TSAN_OPTIONS:-}" timeout -k 10 240 "$WORK/handle-stress-tsan" \
       >>"$WORK/tsan-handles.log" 2>&1; then
    echo "fiber-tools: ThreadSanitizer, $(grep '^handle_stress:' "$WORK/tsan-handles.log"): no reports"
  else
    fails+=("ThreadSanitizer: stale handles racing their destroy"); tail -40 "$WORK/tsan-handles.log"
  fi
else
  wait_for_memcheck
  fails+=("ThreadSanitizer: could not build the library or the program")
  tail -20 "$WORK/tsan-cmake.log" "$WORK/tsan-build.log" 2>/dev/null
fi

if [ ${#fails[@]} -eq 0 ]; then
  echo "fiber-tools: PASSED (memcheck and ThreadSanitizer, loop versions and fibers, the long run, stale handles)"
  exit 0
fi
echo "fiber-tools: FAILED ($(printf '%s; ' "${fails[@]}" | sed 's/; $//'))"
exit 1
