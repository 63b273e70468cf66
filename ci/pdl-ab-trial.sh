#!/usr/bin/env bash
# pdl-ab-trial.sh — one call on the NVIDIA machine: bench_gpu --graph-only built from this tree (A) and from a copy whose prelude swaps its two griddepcontrol instructions (B), run alternately twice; logs under $AB_LOGS (default /tmp/logs3). For judging the order of grid_dependency_enter's two steps.
set -u
cd "$(dirname "$0")/.." || exit 1
L=${AB_LOGS:-/tmp/logs3}; mkdir -p "$L"
rm -rf /tmp/b && mkdir /tmp/b && cp -r . /tmp/b/ 2>/dev/null; rm -rf /tmp/b/build*
python3 - <<'PY'
p='/tmp/b/hip_kernels/amp_prelude.hip'
s=open(p).read()
w = '''    asm volatile("griddepcontrol.wait;" ::: "memory");\n'''
d = '''    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");\n'''
assert (w + d in s) != (d + w in s)
open(p, 'w').write(s.replace(w + d, d + w) if w + d in s else s.replace(d + w, w + d))
PY
for t in . /tmp/b; do
  (cmake -S "$t" -B "$t/build-ab" -DCMAKE_BUILD_TYPE=Release > /dev/null &&
    cmake --build "$t/build-ab" -j"$(nproc)" --target bench_gpu > /dev/null) 2>&1 | tail -3 &
done
wait
for r in 1 2; do
  for t in A B; do
    d=.; [ $t = B ] && d=/tmp/b
    timeout 120 "$d/build-ab/bench/bench_gpu" --graph-only > "$L/graph-$t-$r.txt" 2>&1
    echo "== $t run $r: $(grep -E '^\| (chain|CG|examples)' "$L/graph-$t-$r.txt" | head -3 | cut -c1-200 | tr '\n' ' ')"
  done
done
