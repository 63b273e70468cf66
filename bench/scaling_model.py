#!/usr/bin/env python3
# scaling_model.py — projects heat_mpi's and the distributed CG's (cg_mpi) weak and strong scaling past one node from measured 1- and 2-rank figures (heat_mpi's model_inputs lines, cg_mpi's cg_model_inputs lines) and a stated network; Python 3 standard library only. docs/scaling.md explains the model.
"""Scaling model for hipamp's distributed examples.

Reads heat_mpi's `model_inputs` lines (from its output, or from the logs of
examples/mpi_heat/weak_scaling.sh), or takes the same figures as options,
and cg_mpi's `cg_model_inputs` lines from the same logs, and projects time
per step (iteration) and efficiency to 8..1024 nodes for a network of a
given bandwidth and latency. Prints Markdown: the inputs, weak and strong
scaling tables for heat_mpi (overlapped and not) and CG (measured, or
estimated from heat's step where cg_mpi was not run), where each stops
scaling and why, and a validation of the model against the measurements it
was given (one grid size predicted from another).

Example:
  scaling_model.py --log weak-4096.log --log weak-16384.log --log cg.log
  scaling_model.py --nx 16384 --rows 4096 --t1 0.250e-3 --t2 0.322e-3 --nic-gbs 50
"""

import argparse
import math
import sys

KEYS = ("nx", "rows_per_rank", "ranks", "overlap", "path", "time_per_step_s", "exchange_s_per_step", "row_bytes",
        "halo_bytes_per_rank_per_step")
INTEGERS = ("nx", "rows_per_rank", "ranks", "overlap", "row_bytes", "halo_bytes_per_rank_per_step")
CG_KEYS = ("nx", "rows_per_rank", "ranks", "overlap", "path", "time_per_iteration_s", "exchange_s_per_iteration",
           "allreduce_s_per_iteration", "allreduces_per_iteration", "row_bytes", "halo_bytes_per_rank_per_iteration")


def parse_logs(paths, prefix="model_inputs", keys=KEYS):
    """Every `prefix` line of the files: a list of dicts."""
    runs = []
    for path in paths:
        try:
            f = open(path, encoding="utf-8", errors="replace")
        except OSError as e:
            sys.exit(f"scaling_model: cannot read {path}: {e.strerror}")
        with f:
            for line in f:
                if not line.startswith(prefix + " "):
                    continue
                words = line.split()[1:]
                run = dict(zip(words[0::2], words[1::2]))
                if not all(k in run for k in keys):
                    sys.exit(f"scaling_model: {path}: a {prefix} line lacks a field: {line.strip()}")
                try:
                    for k in keys:
                        if k != "path":
                            run[k] = int(run[k]) if k in INTEGERS else float(run[k])
                except ValueError:
                    sys.exit(f"scaling_model: {path}: a {prefix} line has a field that is not a number: "
                             f"{line.strip()}")
                runs.append(run)
    return runs


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


class Size:
    """The measurements of one grid size per rank (NX columns x R rows)."""

    def __init__(self, nx, rows):
        self.nx, self.rows = nx, rows
        self.t1 = {}  # overlap (0/1) -> seconds per step on 1 rank
        self.t2 = {}  # overlap -> seconds per step on 2 ranks
        self.path = "?"

    def x(self, ov):
        """What the exchange adds to a step on the measuring machine (2 ranks)."""
        return max(0.0, self.t2[ov] - self.t1[ov])

    def complete(self):
        return all(k in self.t1 and k in self.t2 for k in (0, 1))


def sizes_from_runs(runs):
    """Medians per (nx, rows, ranks, overlap)."""
    groups = {}
    for r in runs:
        groups.setdefault((r["nx"], r["rows_per_rank"], r["ranks"], r["overlap"]), []).append(r)
    sizes = {}
    for (nx, rows, ranks, ov), rs in groups.items():
        if ranks not in (1, 2):
            continue
        s = sizes.setdefault((nx, rows), Size(nx, rows))
        (s.t1 if ranks == 1 else s.t2)[ov] = median([r["time_per_step_s"] for r in rs])
        if ranks == 2:
            s.path = rs[0]["path"]
    return sizes


class Model:
    def __init__(self, a, sizes, fit):
        self.a = a
        self.sizes = sizes
        # Compute per step on one rank: fixed + per_row * rows, per mode.
        self.fixed, self.per_row = fit
        self.ref = sizes[0]

    def t1(self, ov, rows):
        return self.fixed[ov] + self.per_row * rows

    def interior(self, rows):
        return self.per_row * max(0, rows - 2)

    def net(self, nodes):
        """Network time a step adds for the rank at a node boundary."""
        if nodes <= 1:
            return 0.0
        rows_out = 2 if self.a.gpus_per_node == 1 else 1  # one NIC carries both neighbours' rows
        return self.a.latency_us * 1e-6 + rows_out * self.ref.nx * 4 / (self.a.nic_gbs * 1e9)

    def heat_parts(self, ov, rows, nodes, ranks=None, compute_scale=1.0):
        """A step's parts, in seconds: compute (the rank's rows alone), the
        exchange's local part (what it adds on the measuring machine) and
        the network time left exposed."""
        ranks = ranks if ranks is not None else nodes * self.a.gpus_per_node
        parts = {"compute": compute_scale * self.t1(ov, rows), "local": 0.0, "network": 0.0}
        if ranks == 1:
            return parts
        x_no, x_ov = self.ref.x(0), self.ref.x(1)
        tn = self.net(nodes)
        if not ov:
            parts.update(local=x_no, network=tn)
            return parts
        # The interior kernel's window, less what the local exchange already
        # hid in it at the measurement: what is left can hide network time.
        window = max(0.0, compute_scale * self.interior(rows) - (x_no - x_ov))
        parts.update(local=x_ov, network=max(0.0, tn - window))
        return parts

    def heat(self, ov, rows, nodes, ranks=None):
        """Seconds per step of heat_mpi with `rows` rows per rank on `nodes`
        nodes (ranks: all of them, default nodes x GPUs per node)."""
        return sum(self.heat_parts(ov, rows, nodes, ranks).values())

    def allreduce(self, ranks):
        if ranks <= 1:
            return self.a.allreduce_overhead_us * 1e-6
        return self.a.allreduce_overhead_us * 1e-6 + 2 * self.a.latency_us * 1e-6 * math.ceil(math.log2(ranks))

    def cg_parts(self, rows, nodes, ranks=None):
        """A CG iteration's parts: compute, the SpMV's halo exchange
        (overlapped as heat's), and its allreduces, which overlap nothing."""
        ranks = ranks if ranks is not None else nodes * self.a.gpus_per_node
        scale = self.a.cg_compute_s / self.t1(0, self.ref.rows) if self.a.cg_compute_s else self.a.cg_factor
        parts = self.heat_parts(1, rows, nodes, ranks, compute_scale=scale)
        parts["compute"] = scale * self.t1(0, rows)
        parts["allreduce"] = self.a.cg_allreduces * self.allreduce(ranks)
        return parts

    def cg(self, rows, nodes, ranks=None):
        """Seconds per CG iteration."""
        return sum(self.cg_parts(rows, nodes, ranks).values())


class CgSize:
    """cg_mpi's measurements at one grid size per rank (NX columns x R rows),
    overlapped (its default): medians of the 1- and 2-rank runs."""

    def __init__(self, nx, rows):
        self.nx, self.rows = nx, rows
        self.t1 = self.t2 = None
        self.allreduce2 = self.exchange2 = 0.0  # 2 ranks: seconds per iteration inside them
        self.allreduces = 2.0
        self.row_bytes = 8 * nx
        self.path = "?"

    def x(self):
        """What the row split adds to an iteration on the measuring machine."""
        return max(0.0, self.t2 - self.t1)


def cg_sizes_from_runs(runs):
    groups = {}
    for r in runs:
        if r["overlap"] == 1 and r["ranks"] in (1, 2):
            groups.setdefault((r["nx"], r["rows_per_rank"], r["ranks"]), []).append(r)
    sizes = {}
    for (nx, rows, ranks), rs in groups.items():
        s = sizes.setdefault((nx, rows), CgSize(nx, rows))
        t = median([r["time_per_iteration_s"] for r in rs])
        if ranks == 1:
            s.t1 = t
        else:
            s.t2 = t
            s.allreduce2 = median([r["allreduce_s_per_iteration"] for r in rs])
            s.exchange2 = median([r["exchange_s_per_iteration"] for r in rs])
            s.allreduces = rs[0]["allreduces_per_iteration"]
            s.row_bytes = rs[0]["row_bytes"]
            s.path = rs[0]["path"]
    return [s for s in sizes.values() if s.t1 is not None and s.t2 is not None]


class CgModel:
    """The distributed CG from its own measurements: compute per iteration
    c(R) = fixed + per_row R (1 rank), the row split's local cost x = t2 - t1
    (2 ranks on one node: the halo exchange left exposed, the allreduces
    through shared memory), and per node count the network: the SpMV's halo
    (hidden behind the interior rows' share of the iteration, --cg-apply-share)
    and each allreduce's ceil(log2 nodes) rounds of 2 x latency."""

    def __init__(self, a, sizes):
        self.a = a
        self.sizes = sorted(sizes, key=lambda s: s.rows)
        self.ref = self.sizes[0]
        lo, hi = self.sizes[0], self.sizes[-1]
        self.how = None
        if hi.rows != lo.rows:
            self.per_row = (hi.t1 - lo.t1) / (hi.rows - lo.rows)
            self.fixed = lo.t1 - self.per_row * lo.rows
            self.how = f"a line through the 1-rank times of {lo.rows} and {hi.rows} rows"
            if self.fixed < 0 or self.per_row <= 0:
                self.how = None
                why = (f"the 1-rank times of {lo.rows} and {hi.rows} rows do not make a line with a fixed part >= 0 "
                       f"(noisy): ")
        else:
            why = f"one size ({hi.rows} rows); "
        if self.how is None:
            self.fixed = min(a.fixed_us * 1e-6, 0.5 * hi.t1)
            self.per_row = max(1e-12, (hi.t1 - self.fixed) / hi.rows)
            self.how = why + f"{self.fixed * 1e6:g} us taken as the fixed part (--fixed-us), {hi.rows} rows"

    def t1(self, rows):
        return self.fixed + self.per_row * rows

    def window(self, rows):
        return self.a.cg_apply_share * self.per_row * max(0, rows - 2)

    def net_halo(self, nodes):
        if nodes <= 1:
            return 0.0
        rows_out = 2 if self.a.gpus_per_node == 1 else 1
        return self.a.latency_us * 1e-6 + rows_out * self.ref.row_bytes / (self.a.nic_gbs * 1e9)

    def net_allreduce(self, nodes):
        """One allreduce's network time: ceil(log2 nodes) rounds between nodes."""
        return 0.0 if nodes <= 1 else 2 * self.a.latency_us * 1e-6 * math.ceil(math.log2(nodes))

    def parts(self, rows, nodes, ranks=None):
        ranks = ranks if ranks is not None else nodes * self.a.gpus_per_node
        parts = {"compute": self.t1(rows), "local": 0.0, "network": 0.0, "allreduce": 0.0}
        if ranks > 1:
            parts["local"] = self.ref.x()
            parts["network"] = max(0.0, self.net_halo(nodes) - self.window(rows))
            parts["allreduce"] = self.ref.allreduces * self.net_allreduce(nodes)
        return parts

    def t(self, rows, nodes, ranks=None):
        return sum(self.parts(rows, nodes, ranks).values())


def cg_report(a, m, nodes, w, why):
    """The measured CG's sections: inputs, validation, weak and strong
    scaling, where it stops."""
    ref = m.ref
    w("# CG (cg_mpi), from its own measurements\n")
    w("| NX x rows per rank | path | 1 rank, ms/iteration | 2 ranks, ms/iteration | of which in the halo "
      "exchange / the allreduces (2 ranks), ms | allreduces an iteration |")
    w("|---|---|---:|---:|---:|---:|")
    for s in m.sizes:
        w(f"| {s.nx} x {s.rows} | {s.path} | {fmt_t(s.t1)} | {fmt_t(s.t2)} | {fmt_t(s.exchange2)} / "
          f"{fmt_t(s.allreduce2)} | {s.allreduces:g} |")
    w("")
    w(f"Compute per iteration: {m.fixed * 1e6:.1f} us fixed + {m.per_row * 1e9:.2f} ns a row of {ref.nx} columns "
      f"({m.how}). The row split adds {ref.x() * 1e6:.1f} us an iteration on one node (2 ranks at "
      f"{ref.nx} x {ref.rows}: the exchange left exposed and {ref.allreduces:g} allreduces through shared "
      f"memory). Network at a node boundary: the halo {m.net_halo(2) * 1e6:.2f} us (hidden behind "
      f"{a.cg_apply_share:g} of the compute of the interior rows), each allreduce 2 x {a.latency_us:g} us a round, "
      f"ceil(log2 nodes) rounds.\n")
    if len(m.sizes) > 1:
        w("## CG validation\n")
        w(f"Each size's 2-rank time predicted from the compute line and the row split's cost measured at "
          f"{ref.nx} x {ref.rows}, against its measurement:\n")
        w("| NX x rows | predicted ms/iteration | measured ms/iteration | error | predicted efficiency | "
          "measured efficiency |")
        w("|---|---:|---:|---:|---:|---:|")
        for s in m.sizes[1:]:
            pred = m.t(s.rows, 1, ranks=2)
            w(f"| {s.nx} x {s.rows} | {fmt_t(pred)} | {fmt_t(s.t2)} | {(pred - s.t2) / s.t2 * 100:+.1f}% | "
              f"{m.t1(s.rows) / pred:.3f} | {s.t1 / s.t2:.3f} |")
        w("")
    for s in m.sizes:
        w(f"## CG weak scaling: {s.nx} x {s.rows} cells per rank (efficiency against 1 rank)\n")
        w("| nodes | ranks | ms/iteration | efficiency | allreduces, us | exposed halo network, us |")
        w("|---:|---:|---:|---:|---:|---:|")
        for n in nodes:
            p = m.parts(s.rows, n)
            t = sum(p.values())
            w(f"| {n} | {n * a.gpus_per_node} | {fmt_t(t)} | {m.t1(s.rows) / t:.3f} | {p['allreduce'] * 1e6:.1f} | "
              f"{p['network'] * 1e6:.2f} |")
        w("")
    base, total = strong_problem(a, nodes, ref.rows)
    w(f"## CG strong scaling: {ref.nx} x {total} cells in all (efficiency against {base} nodes)\n")
    w("| nodes | rows per rank | ms/iteration | efficiency | compute, us | allreduces, us |")
    w("|---:|---:|---:|---:|---:|---:|")
    t_base, half, ar_over = None, None, None
    for n in nodes:
        rows = total // (n * a.gpus_per_node)
        if rows < 1:
            w(f"| {n} | 0 | - | - | - | - |")
            continue
        p = m.parts(rows, n)
        t = sum(p.values())
        if n == base:
            t_base = t * n
        e = t_base / (t * n) if t_base and n >= base else None
        if e is not None and half is None and e < 0.5:
            half = (n, rows, p)
        if n >= base and ar_over is None and p["allreduce"] > p["compute"]:
            ar_over = (n, rows, p)
        w(f"| {n} | {rows} | {fmt_t(t)} | {f'{e:.3f}' if e is not None else '-'} | {p['compute'] * 1e6:.1f} | "
          f"{p['allreduce'] * 1e6:.1f} |")
    w("")
    w("## Where CG stops scaling\n")
    big = max(nodes)
    pb = m.parts(ref.rows, big)
    w(f"- CG, weak ({ref.nx} x {ref.rows} per rank): efficiency {m.t1(ref.rows) / sum(pb.values()):.3f} at {big} "
      f"nodes. The halo, as heat's, costs the same at every node count; what grows is the {ref.allreduces:g} "
      f"allreduces an iteration, which overlap nothing (each result decides the next step): "
      f"{pb['allreduce'] * 1e6:.1f} us at {big} nodes against {pb['compute'] * 1e6:.1f} us of compute and "
      f"{ref.x() * 1e6:.1f} us the split costs on one node.")
    frac = next((n for n in nodes if n > 1 and m.parts(ref.rows, n)["allreduce"] >= 0.1 * m.t(ref.rows, n)), None)
    if frac:
        w(f"  The allreduces pass a tenth of the iteration at {frac} nodes.")
    else:
        w(f"  The allreduces stay below a tenth of the iteration at every node count listed.")
    if half:
        w(f"- CG, strong: efficiency falls below 0.5 at {half[0]} nodes ({half[1]} rows per rank; {why(half[2])})."
          + (f" The allreduces outweigh the compute from {ar_over[0]} nodes ({ar_over[1]} rows per rank): "
             f"allreduce latency dominates." if ar_over else ""))
    else:
        w("- CG, strong: efficiency stays above 0.5 at every node count listed"
          + (f"; the allreduces outweigh the compute from {ar_over[0]} nodes." if ar_over else "."))


def fit_compute(sizes, a):
    """fixed[ov] + per_row * rows through the 1-rank times: a line through two
    sizes where there are two, else through the origin with --fixed-us."""
    nx = sizes[0].nx
    same = sorted([s for s in sizes if s.nx == nx], key=lambda s: s.rows)
    if len(same) >= 2 and same[-1].rows != same[0].rows:
        lo, hi = same[0], same[-1]
        per_row = (hi.t1[0] - lo.t1[0]) / (hi.rows - lo.rows)
        fixed = {ov: lo.t1[ov] - per_row * lo.rows for ov in (0, 1)}
        how = f"a line through the 1-rank times of {lo.rows} and {hi.rows} rows"
        if min(fixed.values()) < 0 or per_row <= 0:
            # Noisy times: a line through them would make small sizes free.
            per_row = max(1e-12, hi.t1[0] / hi.rows)
            fixed = {ov: max(0.0, hi.t1[ov] - per_row * hi.rows) for ov in (0, 1)}
            how = (f"the 1-rank times of {lo.rows} and {hi.rows} rows do not make a line with a fixed part >= 0 "
                   f"(noisy): {hi.rows} rows through the origin")
    else:
        s = sizes[0]
        fixed0 = a.fixed_us * 1e-6
        per_row = max(1e-12, (s.t1[0] - fixed0) / s.rows)
        fixed = {ov: s.t1[ov] - per_row * s.rows for ov in (0, 1)}
        how = f"one size ({s.rows} rows); {a.fixed_us:g} us taken as the fixed part (--fixed-us)"
    return (fixed, max(per_row, 1e-12)), how


def strong_problem(a, nodes, rows):
    """The strong-scaling base (the smallest node count of 8 or more) and
    the global rows: --strong-rows, else `rows` per rank at the base."""
    base = min([n for n in nodes if n >= 8] or [nodes[-1]])
    return base, a.strong_rows or rows * base * a.gpus_per_node


def why(parts):
    """The parts of a step in words, the largest cost besides compute named."""
    names = {"local": "the exchange's local part (staging copies, waits, MPI on the node)",
             "network": "network time the interior no longer hides", "allreduce": "the allreduces"}
    txt = ", ".join(f"{k} {v * 1e6:.1f} us" for k, v in parts.items())
    worst = max((k for k in parts if k != "compute"), key=lambda k: parts[k])
    return f"{txt}; the largest cost besides compute: {names[worst]}"


def fmt_t(s):
    return f"{s * 1e3:.4f}"


def node_list(text):
    try:
        nodes = sorted({int(v) for v in text.split(",") if v.strip()})
    except ValueError:
        sys.exit(f"scaling_model: --nodes {text!r}: a comma-separated list of whole numbers")
    if not nodes or nodes[0] < 1:
        sys.exit("scaling_model: --nodes needs numbers >= 1")
    return nodes


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--log", action="append", default=[], help="a file with heat_mpi model_inputs lines (repeatable)")
    p.add_argument("--nx", type=int, help="columns (with --rows, --t1, --t2: figures given by hand)")
    p.add_argument("--rows", type=int, help="rows per rank of the measurement")
    p.add_argument("--t1", type=float, help="seconds per step, 1 rank, not overlapped")
    p.add_argument("--t2", type=float, help="seconds per step, 2 ranks, not overlapped")
    p.add_argument("--t1-overlap", type=float, help="seconds per step, 1 rank, overlapped (default: --t1)")
    p.add_argument("--t2-overlap", type=float, help="seconds per step, 2 ranks, overlapped (default: --t2: no overlap)")
    p.add_argument("--nic-gbs", type=float, default=25.0, help="network bandwidth per node, GB/s (default 25)")
    p.add_argument("--latency-us", type=float, default=2.0, help="network latency per message, us (default 2)")
    p.add_argument("--gpus-per-node", type=int, default=1, help="ranks (GPUs) per node (default 1)")
    p.add_argument("--nodes", default="1,2,8,16,32,64,128,256,512,1024", help="node counts to project")
    p.add_argument("--strong-rows", type=int,
                   help="global rows of the strong-scaling problem (default: the measured rows per rank x the "
                        "smallest node count >= 8, x GPUs per node)")
    p.add_argument("--fixed-us", type=float, default=10.0,
                   help="fixed part of a step (launches, waits), us, when one size cannot tell (default 10)")
    p.add_argument("--cg-compute-s", type=float,
                   help="seconds per CG iteration on 1 rank at the measured size (default: --cg-factor x a heat step)")
    p.add_argument("--cg-factor", type=float, default=7.5,
                   help="CG iteration / heat step compute time when CG was not measured (default 7.5: the memory "
                        "passes of an SpMV, two dot products and three updates against one stencil pass)")
    p.add_argument("--cg-allreduces", type=int, default=2, help="MPI_Allreduce calls per CG iteration (default 2)")
    p.add_argument("--cg-apply-share", type=float, default=0.15,
                   help="with cg_mpi measured: the share of an iteration's compute that the interior rows' stencil "
                        "takes, the window the halo hides behind (default 0.15: 2 of the about 14 vector passes of "
                        "an iteration)")
    p.add_argument("--allreduce-overhead-us", type=float, default=15.0,
                   help="host cost of one allreduce besides the network (the dot product's result to the host, "
                        "the call), us (default 15)")
    a = p.parse_args(argv)
    if a.nic_gbs <= 0 or a.latency_us < 0 or a.gpus_per_node < 1 or not 0 <= a.cg_apply_share <= 1:
        sys.exit("scaling_model: --nic-gbs must be > 0, --latency-us >= 0, --gpus-per-node >= 1, "
                 "--cg-apply-share from 0 to 1")
    nodes = node_list(a.nodes)

    cg_sizes = cg_sizes_from_runs(parse_logs(a.log, "cg_model_inputs", CG_KEYS)) if a.log else []
    if cg_sizes:
        cg_nx = min(s.nx for s in cg_sizes)
        cg_model = CgModel(a, [s for s in cg_sizes if s.nx == cg_nx])
    if a.log:
        sizes = [s for s in sizes_from_runs(parse_logs(a.log)).values() if s.complete()]
        if not sizes and cg_sizes:
            out = []
            w = out.append
            w(f"Inputs from {', '.join(a.log)} (no heat_mpi runs). Network: {a.nic_gbs:g} GB/s and {a.latency_us:g} us "
              f"per message, {a.gpus_per_node} rank(s) (GPUs) per node.\n")
            cg_report(a, cg_model, nodes, w, why)
            print("\n".join(out))
            return 0
        if not sizes:
            sys.exit("scaling_model: the logs need, for one grid size, runs on 1 and 2 ranks, overlapped and not "
                     "(ci/gpu.sh mpi's weak-scaling logs have them), or cg_mpi's runs on 1 and 2 ranks")
        source = ", ".join(a.log)
    elif None not in (a.nx, a.rows, a.t1, a.t2):
        s = Size(a.nx, a.rows)
        s.t1 = {0: a.t1, 1: a.t1_overlap if a.t1_overlap else a.t1}
        s.t2 = {0: a.t2, 1: a.t2_overlap if a.t2_overlap else a.t2}
        sizes = [s]
        source = "the command line"
    else:
        p.error("give --log FILE, or --nx, --rows, --t1 and --t2")
    nx = sizes[0].nx
    sizes = sorted([s for s in sizes if s.nx == nx], key=lambda s: s.rows)
    fit, how = fit_compute(sizes, a)
    # The exchange overheads come from the smallest size: the one where they weigh most.
    m = Model(a, sizes, fit)
    ref = m.ref
    out = []
    w = out.append
    w("# Scaling model: heat_mpi and CG past one node\n")
    w(f"Inputs from {source}. Network: {a.nic_gbs:g} GB/s and {a.latency_us:g} us per message, "
      f"{a.gpus_per_node} rank(s) (GPUs) per node.\n")
    w("| NX x rows per rank | path | 1 rank, ms/step (not overlapped / overlapped) | 2 ranks, ms/step | "
      "exchange adds, ms (not / overlapped) |")
    w("|---|---|---:|---:|---:|")
    for s in sizes:
        w(f"| {s.nx} x {s.rows} | {s.path} | {fmt_t(s.t1[0])} / {fmt_t(s.t1[1])} | {fmt_t(s.t2[0])} / "
          f"{fmt_t(s.t2[1])} | {fmt_t(s.x(0))} / {fmt_t(s.x(1))} |")
    w("")
    w(f"Compute per step: {fit[0][0] * 1e6:.1f} us fixed + {fit[1] * 1e9:.2f} ns a row of {nx} columns "
      f"({how}). Exchange overheads from {ref.nx} x {ref.rows}: {ref.x(0) * 1e6:.1f} us not overlapped, "
      f"{ref.x(1) * 1e6:.1f} us left exposed when overlapped. Network time per step at a node boundary: "
      f"{m.net(2) * 1e6:.2f} us.\n")

    # Validation: each other size predicted from the reference size's overheads.
    if len(sizes) > 1:
        w("## Validation\n")
        w(f"Each size's 2-rank time predicted from the 1-rank fit and the exchange overheads measured at "
          f"{ref.nx} x {ref.rows}, against its measurement:\n")
        w("| NX x rows | mode | predicted ms/step | measured ms/step | error | predicted efficiency | "
          "measured efficiency |")
        w("|---|---|---:|---:|---:|---:|---:|")
        for s in sizes[1:]:
            for ov in (0, 1):
                pred = m.heat(ov, s.rows, 1, ranks=2)  # as measured: 2 ranks on one node
                meas = s.t2[ov]
                w(f"| {s.nx} x {s.rows} | {'overlapped' if ov else 'not overlapped'} | {fmt_t(pred)} | {fmt_t(meas)} | "
                  f"{(pred - meas) / meas * 100:+.1f}% | {m.t1(ov, s.rows) / pred:.3f} | {s.t1[ov] / meas:.3f} |")
        w("")

    # Weak scaling: the same rows per rank; efficiency against one rank.
    for s in sizes:
        w(f"## Weak scaling: {nx} x {s.rows} cells per rank (efficiency against 1 rank)\n")
        w("| nodes | ranks | heat, not overlapped: ms/step | efficiency | heat, overlapped: ms/step | efficiency | "
          "CG: ms/iteration | efficiency |")
        w("|---:|---:|---:|---:|---:|---:|---:|---:|")
        cg1 = m.cg(s.rows, 1, ranks=1)
        for n in nodes:
            t0, t1, tc = m.heat(0, s.rows, n), m.heat(1, s.rows, n), m.cg(s.rows, n)
            w(f"| {n} | {n * a.gpus_per_node} | {fmt_t(t0)} | {m.t1(0, s.rows) / t0:.3f} | {fmt_t(t1)} | "
              f"{m.t1(1, s.rows) / t1:.3f} | {fmt_t(tc)} | {cg1 / tc:.3f} |")
        w("")

    # Strong scaling: one global problem, rows per rank shrinking.
    base, total = strong_problem(a, nodes, ref.rows)
    w(f"## Strong scaling: {nx} x {total} cells in all (efficiency against {base} nodes)\n")
    w("| nodes | rows per rank | heat, not overlapped: ms/step | efficiency | heat, overlapped: ms/step | efficiency | "
      "CG: ms/iteration | efficiency | interior window, us | network, us |")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lost = half_ov = half_cg = None
    t_base = None
    for n in nodes:
        r = n * a.gpus_per_node
        rows = total // r
        if rows < 1:
            w(f"| {n} | 0 | - | - | - | - | - | - | - | - |")
            continue
        t0, t1, tc = m.heat(0, rows, n), m.heat(1, rows, n), m.cg(rows, n)
        if n == base:
            t_base = (t0 * n, t1 * n, tc * n)
        window = max(0.0, m.interior(rows) - (ref.x(0) - ref.x(1)))
        e = [t_base[i] / (t * n) for i, t in enumerate((t0, t1, tc))] if t_base and n >= base else None
        if n >= base and lost is None and n > 1 and m.net(n) > window:
            lost = (n, rows, window, m.net(n))
        if e and half_ov is None and e[1] < 0.5:
            half_ov = (n, rows, m.heat_parts(1, rows, n))
        if e and half_cg is None and e[2] < 0.5:
            half_cg = (n, rows, m.cg_parts(rows, n))
        es = [f"{v:.3f}" for v in e] if e else ["-"] * 3
        w(f"| {n} | {rows} | {fmt_t(t0)} | {es[0]} | {fmt_t(t1)} | {es[1]} | {fmt_t(tc)} | {es[2]} | "
          f"{window * 1e6:.1f} | {m.net(n) * 1e6:.2f} |")
    w("")

    # Where each stops scaling, and why.
    w("## Where it stops scaling\n")
    big = max(nodes)
    e_heat = m.t1(1, ref.rows) / m.heat(1, ref.rows, big)
    tn = m.net(2)
    win = max(0.0, m.interior(ref.rows) - (ref.x(0) - ref.x(1)))
    w(f"- heat_mpi, weak: each rank talks to at most two neighbours however many nodes there are, so the "
      f"time per step does not grow with the node count: efficiency {e_heat:.3f} at {big} nodes "
      f"({nx} x {ref.rows} per rank). The network adds {tn * 1e6:.1f} us a step, which "
      + (f"hides behind the {win * 1e6:.0f} us of interior compute left when overlapped."
         if tn <= win else f"exceeds the {win * 1e6:.0f} us of interior compute left: {max(0, tn - win) * 1e6:.1f} us "
         f"stay exposed even overlapped.")
      + f" What it costs is the exchange's local part: {ref.x(1) * 1e6:.1f} us a step overlapped, "
      f"{ref.x(0) * 1e6:.1f} us not.")
    if lost:
        w(f"- heat_mpi, strong: the exchange stops hiding behind the interior at {lost[0]} nodes ({lost[1]} rows "
          f"per rank: {lost[2] * 1e6:.1f} us of interior left against {lost[3] * 1e6:.1f} us of network)"
          + (f"; overlapped efficiency falls below 0.5 at {half_ov[0]} nodes ({half_ov[1]} rows per rank; "
             f"{why(half_ov[2])})." if half_ov else "."))
    else:
        w("- heat_mpi, strong: the exchange hides behind the interior at every node count listed"
          + (f"; overlapped efficiency falls below 0.5 at {half_ov[0]} nodes ({half_ov[1]} rows per rank; "
             f"{why(half_ov[2])})." if half_ov else "."))
    ar = m.allreduce(big * a.gpus_per_node)
    tc1 = m.cg(ref.rows, 1, ranks=1)
    w(f"- CG, weak: {a.cg_allreduces} allreduces an iteration cannot overlap anything (each result decides "
      f"the next step); each costs {a.allreduce_overhead_us:g} us on the host plus 2 x {a.latency_us:g} us x "
      f"log2(ranks) on the network: {ar * 1e6:.1f} us at {big} nodes against a {tc1 * 1e3:.3f} ms iteration, "
      f"efficiency {tc1 / m.cg(ref.rows, big):.3f}. Allreduce latency is what limits it"
      + (" (CG's compute time is estimated from heat's; measure the distributed CG to replace it)."
         if not a.cg_compute_s else "."))
    if half_cg:
        w(f"- CG, strong: efficiency falls below 0.5 at {half_cg[0]} nodes ({half_cg[1]} rows per rank; "
          f"{why(half_cg[2])}).")
    else:
        w("- CG, strong: efficiency stays above 0.5 at every node count listed.")
    if cg_sizes:
        w("\n(The CG columns and verdicts above are estimated from heat's step; cg_mpi's own measurements "
          "follow.)\n")
        cg_report(a, cg_model, nodes, w, why)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
