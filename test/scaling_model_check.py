#!/usr/bin/env python3
# scaling_model_check.py — CTest's check of bench/scaling_model.py: the projection of figures given by hand against the model's equations worked out here, heat_mpi's model_inputs lines read from a log (two sizes: the validation table), cg_mpi's cg_model_inputs lines (alone and with heat's), and refusals of bad input.
import os
import re
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "scaling_model.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, check=False)


def row(text, first):
    """The cells of the first Markdown table row starting with | first |."""
    for line in text.splitlines():
        if line.startswith(f"| {first} |"):
            return [c.strip().strip("*") for c in line.strip("|").split("|")]
    raise AssertionError(f"no row '| {first} |' in:\n{text}")


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}")
        sys.exit(1)


# 1. By hand: t1 = 250 us, t2 = 322 us (x = 72 us), 1 GPU a node, 25 GB/s,
#    2 us: the network adds 2 us + 2 x 16384 x 4 B / 25 GB/s = 7.24288 us.
r = run("--nx", "16384", "--rows", "4096", "--t1", "0.250e-3", "--t2", "0.322e-3", "--nodes", "1,2,1024")
check(r.returncode == 0, f"hand figures: exit {r.returncode}: {r.stderr}")
n = 2e-6 + 2 * 16384 * 4 / 25e9
t = 0.250e-3 + 0.072e-3 + n
cells = row(r.stdout, 1024)
check(abs(float(cells[2]) - t * 1e3) < 1e-4, f"1024 nodes, not overlapped: {cells[2]} ms, want {t * 1e3:.4f}")
check(abs(float(cells[3]) - 0.250e-3 / t) < 1e-3, f"efficiency {cells[3]}, want {0.250e-3 / t:.3f}")
check(float(row(r.stdout, 1)[3]) == 1.0, "one node, one rank: efficiency 1")
check("## Where it stops scaling" in r.stdout and "CG, weak" in r.stdout, "no verdicts:\n" + r.stdout)

# 2. From a log, two sizes on 1 and 2 ranks, both modes: the validation
#    predicts the larger size from the smaller one's exchange overheads.
lines = []
for rows, t1, t2n, t2o in ((4096, 250e-6, 322e-6, 262e-6), (16384, 970e-6, 1048e-6, 985e-6)):
    for ranks, ov, t in ((1, 0, t1), (1, 1, t1 + 6e-6), (2, 0, t2n), (2, 1, t2o)):
        lines.append(f"model_inputs nx 16384 rows_per_rank {rows} ranks {ranks} overlap {ov} path staged "
                     f"time_per_step_s {t:.9f} exchange_s_per_step 0.0 row_bytes 65536 "
                     f"halo_bytes_per_rank_per_step {0 if ranks == 1 else 131072}\n")
with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
    f.write("heat_mpi: noise that is not an input\n" + "".join(lines))
    log = f.name
try:
    r = run("--log", log)
    check(r.returncode == 0, f"log: exit {r.returncode}: {r.stderr}")
    check("## Validation" in r.stdout, "no validation section:\n" + r.stdout)
    v = row(r.stdout, "16384 x 16384 | not overlapped")
    # not overlapped: t1(16384) + x(4096) = 970 + 72 = 1042 us against 1048.
    check(abs(float(v[2]) - 1.042) < 1e-3, f"predicted {v[2]} ms, want 1.042")
    check(re.fullmatch(r"-0\.6%", v[4]) is not None, f"error {v[4]}, want -0.6%")
finally:
    os.unlink(log)

# 3. cg_mpi's lines: two sizes (16384 x 1024 and x 4096 per rank) on 1 and 2
#    ranks. Compute line: (3.97 - 1.00) ms / 3072 rows, 10 us fixed; the split
#    adds x = 50 us; at 1024 nodes the halo (2 us + 2 x 131072 B / 25 GB/s)
#    hides behind 0.15 of the interior's compute, and two allreduces cost
#    2 x 2 x 2 us x log2(1024) = 80 us: 1.00 + 0.05 + 0.08 = 1.13 ms.
cg_lines = []
for rows, t1, t2 in ((1024, 1.00e-3, 1.05e-3), (4096, 3.97e-3, 4.03e-3)):
    for ranks, t in ((1, t1), (2, t2)):
        cg_lines.append(f"cg_model_inputs nx 16384 rows_per_rank {rows} ranks {ranks} overlap 1 path staged "
                        f"time_per_iteration_s {t:.9f} exchange_s_per_iteration 0.00002 allreduce_s_per_iteration "
                        f"0.00001 allreduces_per_iteration 2 row_bytes 131072 halo_bytes_per_rank_per_iteration "
                        f"{0 if ranks == 1 else 262144} iterations 100\n")
with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
    f.write("cg_mpi: noise\n" + "".join(cg_lines))
    cg_log = f.name
with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
    f.write("".join(lines))
    heat_log = f.name
try:
    r = run("--log", cg_log, "--nodes", "1,2,8,1024")
    check(r.returncode == 0, f"cg log: exit {r.returncode}: {r.stderr}")
    check("# CG (cg_mpi), from its own measurements" in r.stdout, "no CG section:\n" + r.stdout)
    check("## CG validation" in r.stdout, "no CG validation:\n" + r.stdout)
    val = r.stdout[r.stdout.index("## CG validation"):]
    v = row(val, "16384 x 4096")
    check(abs(float(v[1]) - 4.02) < 1e-3, f"CG predicted {v[1]} ms, want 4.020")
    check(v[3] == "-0.2%", f"CG error {v[3]}, want -0.2%")
    weak = r.stdout[r.stdout.index("## CG weak scaling: 16384 x 1024"):]
    c = row(weak, 1024)
    check(abs(float(c[2]) - 1.13) < 1e-3, f"CG at 1024 nodes: {c[2]} ms, want 1.130")
    check(abs(float(c[4]) - 80.0) < 0.05, f"CG allreduces at 1024 nodes: {c[4]} us, want 80.0")
    check(float(row(weak, 1)[3]) == 1.0, "CG on one rank: efficiency 1")
    check("## Where CG stops scaling" in r.stdout and "allreduce" in r.stdout, "no CG verdict:\n" + r.stdout)
    check("## Weak scaling: 16384" not in r.stdout, "heat tables without heat runs:\n" + r.stdout)
    # With heat's lines too: both, the estimated CG columns marked as such.
    r = run("--log", heat_log, "--log", cg_log)
    check(r.returncode == 0, f"heat and cg logs: exit {r.returncode}: {r.stderr}")
    check("## Validation" in r.stdout and "## CG validation" in r.stdout and "estimated from heat" in r.stdout,
          "heat and CG sections:\n" + r.stdout)
    # A cg_model_inputs line that lacks a field, or has a word for a number.
    with open(cg_log, "a") as f:
        f.write("cg_model_inputs nx 16384 rows_per_rank 1024 ranks 2 overlap 1 path staged\n")
    r = run("--log", cg_log)
    check(r.returncode != 0 and "lacks a field" in r.stderr, f"a short cg line: exit {r.returncode}, {r.stderr}")
    with open(cg_log, "w") as f:
        f.write(cg_lines[0].replace("time_per_iteration_s 0.001000000", "time_per_iteration_s fast"))
    r = run("--log", cg_log)
    check(r.returncode != 0 and "not a number" in r.stderr, f"a word for a number: exit {r.returncode}, {r.stderr}")
finally:
    os.unlink(cg_log)
    os.unlink(heat_log)

# 4. Refusals.
r = run("--log", "/nonexistent/heat.log")
check(r.returncode != 0 and "cannot read" in r.stderr, f"a missing log: exit {r.returncode}, {r.stderr}")
r = run("--nx", "16384")
check(r.returncode != 0 and "--t1" in r.stderr, f"missing figures: exit {r.returncode}, {r.stderr}")
r = run("--nx", "16384", "--rows", "4096", "--t1", "1", "--t2", "2", "--nodes", "8,x")
check(r.returncode != 0 and "--nodes" in r.stderr, f"bad --nodes: exit {r.returncode}, {r.stderr}")
print("scaling_model.py: ok")
