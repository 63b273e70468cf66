#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer harnesses (fuzz/) with clang and runs them at once for a bounded time: the signature-record check, the AMD code-object readers, the CPU split compile's source scan, the CPU accelerator's ELF reader, the include scan's lexer, the prebuilt packs' reader, the disk cache's entry reader, the environment and option readers (and stream's command line), and TeaLeaf's deck, tea.problems and output readers. Seeds: real code objects compiled here with hipRTC (gfx90a, gfx1030) when hipamp-compile can, the harness's own near-valid records, the project's kernel sources, and a shared object and an object file the C++ compiler makes here (thread-locals, a kernel body's local static, a needed library). Prints executions and findings per harness; exits non-zero on a finding (its reproducer is kept under the build dir).
# Usage: ci/fuzz.sh [SECONDS_PER_HARNESS]   (default 60; FUZZ_BUILD overrides the build dir)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
SECS=${1:-60}
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
CC_FUZZ=${CC_FUZZ:-}
# Undefined behaviour anywhere (the library's objects recover by default) is a
# finding, as it is in ci/test.sh's environment.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
for c in clang-15 clang-14 clang; do
  if [ -z "$CC_FUZZ" ] && command -v "$c" >/dev/null 2>&1; then CC_FUZZ=$c; fi
done
[ -n "$CC_FUZZ" ] || { echo "fuzz.sh: no clang found (apt-get install clang)"; exit 1; }
CXX_FUZZ=${CC_FUZZ/clang/clang++}
echo "=== fuzz: building with $CC_FUZZ in $BUILD"
if ! CC=$CC_FUZZ CXX=$CXX_FUZZ cmake -S "$ROOT" -B "$BUILD" -DHIPAMP_FUZZ=ON -DHIPAMP_BUILD_TESTS=OFF \
       -DHIPAMP_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$BUILD.configure.log" 2>&1 ||
   ! cmake --build "$BUILD" -j"$(nproc)" --target fuzz_signature fuzz_codeobject fuzz_split_scan fuzz_cpu_elf fuzz_include_lex \
       fuzz_prebuilt_pack fuzz_disk_cache_entry fuzz_env fuzz_tea_deck > "$BUILD.build.log" 2>&1; then
  tail -n 30 "$BUILD.configure.log" "$BUILD.build.log" 2>/dev/null
  echo "fuzz.sh: FAILED to build the harnesses"; exit 1
fi

# Seeds for the code-object reader: what hipRTC really produces.
corpus_co="$BUILD/corpus-codeobject"
corpus_sig="$BUILD/corpus-signature"
corpus_scan="$BUILD/corpus-split-scan"
corpus_elf="$BUILD/corpus-cpu-elf"
corpus_lex="$BUILD/corpus-include-lex"
corpus_pack="$BUILD/corpus-prebuilt-pack"
corpus_dc="$BUILD/corpus-disk-cache-entry"
corpus_env="$BUILD/corpus-env"
corpus_tea="$BUILD/corpus-tea-deck"
mkdir -p "$corpus_co" "$corpus_sig" "$corpus_scan" "$corpus_elf" "$corpus_lex" "$corpus_pack" "$corpus_dc" "$corpus_env" \
  "$corpus_tea"
# Seeds for the split scan: the project's own kernel sources.
cp "$ROOT"/examples/*/*.hip "$ROOT"/test/kernels/*.hip "$ROOT"/hip_kernels/alg/*.hip "$corpus_scan/" 2>/dev/null
# The lexer's seeds: the same sources (its own corpus: each harness grows its own).
cp "$corpus_scan"/* "$corpus_lex/" 2>/dev/null
NORMAL_BUILD=${NORMAL_BUILD:-}
compile_tool=""
for t in "$NORMAL_BUILD/hipamp-compile" "$ROOT/build-ci/hipamp-compile" "$ROOT/build/hipamp-compile"; do
  [ -x "$t" ] && { compile_tool=$t; break; }
done
# This tree's own only where no other build has one.
if [ -z "$compile_tool" ] && cmake --build "$BUILD" --target hipamp-compile > /dev/null 2>&1; then
  compile_tool=$BUILD/hipamp-compile
fi
if [ -n "$compile_tool" ]; then
  for target in gfx90a gfx1030; do
    for k in "$ROOT"/test/kernels/seeds.hip "$ROOT"/test/kernels/tiled.hip; do
      "$compile_tool" --target "$target" -o "$corpus_co/$(basename "$k" .hip)-$target.co" "$k" > /dev/null 2>&1 || true
    done
  done
fi
echo "fuzz: $(ls "$corpus_co" | wc -l) code-object seeds"
# Seeds for the CPU ELF reader: what a module and a split build's part look
# like (thread-locals, a kernel body's local static, writable locals; a
# module linked as the library links them, with its call graph's
# relocations: a helper called, one whose address is taken).
elf_seed="$BUILD/cpu-elf-seed.cpp"
printf '%s\n' 'static thread_local int helper_ts[64];' 'static int counter;' \
  '__attribute__((noinline)) static int *helper() { static thread_local int h[32]; return h; }' \
  '__attribute__((noinline)) static int pointed(int i) { static thread_local int p[8]; return p[i & 7]++; }' \
  'int (*volatile fp)(int) = pointed;' \
  'static int k__amp_body(int i) { static thread_local int s[16]; s[i & 15] = i; return s[0] + helper_ts[i & 63]; }' \
  'extern "C" int entry(int i) { return k__amp_body(i) + ++counter + helper()[i & 31]; }' \
  'extern "C" int entry__amp_tiles(int i) { return fp(i); }' > "$elf_seed"
${CXX_SEED:-c++} -shared -fPIC -O1 -o "$corpus_elf/module.so" "$elf_seed" > /dev/null 2>&1 || true
${CXX_SEED:-c++} -shared -fPIC -O1 -ffunction-sections -Wl,--emit-relocs -o "$corpus_elf/module-graph.so" "$elf_seed" \
  > /dev/null 2>&1 || true
${CXX_SEED:-c++} -c -fPIC -O1 -o "$corpus_elf/part.o" "$elf_seed" > /dev/null 2>&1 || true
echo "fuzz: $(ls "$corpus_elf" | wc -l) CPU ELF seeds"
# A pack and a disk-cache entry: near-valid records whose first byte asks the
# harness to repair magic, version, target, count, offsets and digests (MAC).
{ printf '\077HIPAMPK1\001\000\000\000\002\000\000\000'; head -c 400 /dev/zero | tr '\0' 'k'; } > "$corpus_pack/two"
{ printf '\017HIPAMPC2\002\000\000\000'; head -c 76 /dev/zero; printf 'payload'; } > "$corpus_dc/entry"
# The environment readers: a selector byte (see fuzz/fuzz_env.c), then a value.
printf '\000on' > "$corpus_env/flag"; printf '\001alg' > "$corpus_env/word"; printf '\002 86400' > "$corpus_env/uint"
printf '\00364MiB' > "$corpus_env/size"; printf '\004-O2 -I /x -D A=1 f.c' > "$corpus_env/options"
printf '\005root,0' > "$corpus_env/users"; printf '\006rel/%%p.json' > "$corpus_env/trace"
printf '\007-s 2147483648 --rank2 -n 10 --block-size 1024 --dot alg' > "$corpus_env/stream"
# TeaLeaf's decks (beside the project, when there) and one of its own; the
# first byte picks the solver.
for f in "$ROOT"/../shared/tealeaf/*.in "$ROOT"/../shared/tealeaf/tea.problems "$ROOT"/../shared/tealeaf/tea_bm_1.out; do
  [ -f "$f" ] && { printf '\000'; cat "$f"; } > "$corpus_tea/$(basename "$f")"
done
printf '\000*tea\nstate 1 density=100.0 energy=0.0001\nstate 2 density=0.1 energy=25.0 geometry=circle xmin=1 ymin=1 radius=2\nx_cells=4\ny_cells=4\nend_step=2\n*endtea\n4 4 2 1.5\n x_cells=4\n y_cells=4\n step: 2 1 2 3 4 5\n' \
  > "$corpus_tea/own"
printf '\000' > "$corpus_sig/shape0"; printf '\001' > "$corpus_sig/shape1"; printf '\002' > "$corpus_sig/shape2"

status=0
harnesses=(fuzz_signature fuzz_codeobject fuzz_split_scan fuzz_cpu_elf fuzz_include_lex fuzz_prebuilt_pack fuzz_disk_cache_entry
           fuzz_env fuzz_tea_deck)
# All at once: each runs SECS of wall time, so the step takes SECS however
# many there are (on 2 cores four share them).
declare -A pids
for h in "${harnesses[@]}"; do
  corpus=$corpus_sig; [ "$h" = fuzz_codeobject ] && corpus=$corpus_co; [ "$h" = fuzz_split_scan ] && corpus=$corpus_scan; [ "$h" = fuzz_include_lex ] && corpus=$corpus_lex; [ "$h" = fuzz_cpu_elf ] && corpus=$corpus_elf
  [ "$h" = fuzz_prebuilt_pack ] && corpus=$corpus_pack; [ "$h" = fuzz_disk_cache_entry ] && corpus=$corpus_dc
  [ "$h" = fuzz_env ] && corpus=$corpus_env; [ "$h" = fuzz_tea_deck ] && corpus=$corpus_tea
  # fuzz_env's readers say each bad value on stderr, by design.
  quiet=(); [ "$h" = fuzz_env ] && quiet=(-close_fd_mask=2)
  art="$BUILD/findings-$h"; rm -rf "$art"; mkdir -p "$art"
  "$BUILD/fuzz/$h" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${quiet[@]}" \
    -artifact_prefix="$art/" "$corpus" > "$BUILD/$h.log" 2>&1 &
  pids[$h]=$!
done
for h in "${harnesses[@]}"; do
  art="$BUILD/findings-$h"
  log="$BUILD/$h.log"
  wait "${pids[$h]}"
  rc=$?
  execs=$(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}')
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n1)
  found=$(ls "$art" 2>/dev/null | wc -l)
  echo "fuzz: $h: ${execs:-?} executions in ${SECS}s, ${cov:-cov: ?}, $found finding(s), exit $rc"
  if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    status=1
    grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -n 20
    ls "$art"
  fi
done
[ "$status" -eq 0 ] && echo "fuzz.sh: PASSED" || echo "fuzz.sh: FAILED"
exit "$status"
