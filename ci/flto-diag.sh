#!/usr/bin/env bash
# flto-diag.sh — why gcc's -flto fails under the CPU accelerator on the GPU machine ("/usr/bin/ld: error: could not run lto-wrapper" in test_cache): the compiler the library uses there (CXX=/opt/gcc/bin/g++ in the image, GCC 13.3; `c++` is Ubuntu's own) tried with -flto outside the library, then test_cache's tests up to the -flto one under ctest as the suite runs them, then through wrappers that exec the same compiler and record its environment and `-v` output. Everything into $OUT/flto-diag.tar.gz.
#
#   OUT=/some/dir bash ci/flto-diag.sh     (from the repository root, .debs carried)
set -u
ROOT=$PWD
B=${FLTO_BUILD:-$ROOT/build-flto}
D=$(mktemp -d)/flto-diag
mkdir -p "$D" "$B"
chmod 755 "$(dirname "$D")"
finish() { tar -czf "$OUT/flto-diag.tar.gz" -C "$(dirname "$D")" flto-diag; }
trap finish EXIT
for d in "$ROOT"/.debs/*.deb; do dpkg -x "$d" "$B/criterion-root"; done
lib=$B/criterion-root/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
REAL=${AMP_CXX:-${CXX:-c++}}
{ echo "host: $(uname -a)"; echo "the compiler: $REAL"; ls -la "$(command -v "$REAL")" "$(dirname "$(command -v "$REAL")")" 2>&1 | head -30
  "$REAL" --version | head -1; echo "lto-wrapper: $("$REAL" -print-prog-name=lto-wrapper)"
  printf 'int f() { return 1; }\n' > "$D/lto.cpp"
  "$REAL" -flto -O2 -fPIC -shared -o "$D/lto.so" "$D/lto.cpp"; echo "$REAL -flto by hand: exit $?"
  env -i PATH=/usr/bin:/bin "$REAL" -flto -O2 -fPIC -shared -o "$D/lto.so" "$D/lto.cpp"; echo "the same under env -i: exit $?"
  "$REAL" -v -flto -O2 -fPIC -shared -o "$D/lto.so" "$D/lto.cpp" 2>&1 | grep -E "COLLECT_LTO|collect2 |GCC_EXEC|COMPILER_PATH" | cut -c1-300
  env | grep -E "^(GCC_EXEC_PREFIX|COMPILER_PATH|LIBRARY_PATH|CC|CXX)="
  c++ --version | head -1; ld --version | head -1; echo "strace: $(command -v strace)"; id
  echo "c++ -print-prog-name=lto-wrapper: $(c++ -print-prog-name=lto-wrapper)"; ls -l /usr/libexec/gcc/x86_64-linux-gnu/13/ 2>&1 | head -20
  ulimit -a; cat /sys/fs/cgroup/pids.max 2>&1; cat /proc/sys/kernel/pid_max; } > "$D/host.txt" 2>&1
grep -E "^the compiler|^lto-wrapper|by hand|under env -i" "$D/host.txt"
t0=$(date +%s)
[ -n "${SKIP_BUILD:-}" ] || cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRITERION_ROOT="$B/criterion-root" -DHIPAMP_PREBUILT_TARGETS=cpu > "$D/configure.log" 2>&1 &&
  cmake --build "$B" -j"$(nproc)" --target test_cache cache_helper > "$D/build.log" 2>&1 || [ -n "${SKIP_BUILD:-}" ] || { echo "build failed"; tail -30 "$D/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s" | tee -a "$D/host.txt"
w=$(mktemp -d)
chmod 755 "$w"
# Two wrappers that exec the compiler as the test's own does (the
# compiler the guardian's child, its output hipamp's pipe): cxx-tee copies
# its standard error to a file through a pipe; cxx-v adds -v and the lto
# plugin's debug output.
for v in tee v; do
  extra=""; [ "$v" = v ] && extra="-v -Wl,-plugin-opt=-debug"
  cat > "$w/cxx-$v" <<WRAP
#!/bin/bash
case " \$* " in *" -flto "*) ;; *) exec $REAL "\$@" ;; esac
n=\$\$
{ echo "== argv: \$*"; echo "== pwd: \$(pwd)"; env | sort; echo "== ulimit"; ulimit -a; echo "== fds"; ls -l /proc/\$\$/fd; } > "$D/inv-$v.\$n.txt" 2>&1
exec $REAL $extra "\$@" 2> >(tee "$D/out-$v.\$n.txt" >&2)
WRAP
  chmod 755 "$w/cxx-$v"
done
ctest_af() { # ctest_af NAME PATTERN [AMP_CXX]: test_cache's tests PATTERN under ctest, as the suite runs them
  local t0=$(date +%s) rc
  (cd "$B" && ${3:+env AMP_CXX="$3"} env CRITERION_VERBOSITY_LEVEL=1 CRITERION_TEST_PATTERN="$2" timeout 200 ctest -R '^test_cache$' --output-on-failure) > "$D/ctest-$1.log" 2>&1
  rc=$?
  echo "$1: ctest, tests $2: exit $rc in $(( $(date +%s) - t0 )) s; $(grep -h 'FAIL\]' "$D/ctest-$1.log" | head -3)" | tee -a "$D/host.txt"
  grep -h "lto-wrapper" "$D/ctest-$1.log" | head -3
}
# 1. Exactly as the suite (no wrapper of ours), 2. through cxx-tee, 3. cxx-v.
ctest_af plain 'cache/[a-f]*'
ctest_af tee 'cache/files_inline*' "$w/cxx-tee"
ctest_af v 'cache/files_inline*' "$w/cxx-v"
# 4. The -flto test alone, plain, from the test's directory.
(cd "$B/test" && timeout 60 ./test_cache --filter 'cache/files_inline_asm_reads_are_checked_and_keyed') > "$D/alone.log" 2>&1
echo "4. alone, plain: exit $?" | tee -a "$D/host.txt"
for f in "$D"/out-v.*.txt; do [ -e "$f" ] && { echo "== $f"; grep -n "lto-wrapper\|COLLECT_LTO\|collect2\|error" "$f" | head -20; }; done
