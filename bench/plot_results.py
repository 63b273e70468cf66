# plot_results.py — draws bench_gpu's (or bench_gpu_hip's) chart with matplotlib: one bar panel per workload from its CSV, bars per variant (hipamp, raw), each ceiling (device copy, vendor SGEMM) as a dashed line.
"""Reads bench_gpu's CSV (panel,label,series,value,unit) and writes a PNG.

usage: plot_results.py RESULTS.csv OUT.png [--title TEXT] [--raw-label CALL]
--raw-label names the raw launch in the legend (default cuLaunchKernel).
Exits 2 when matplotlib is missing (bench_gpu then draws the PNG itself).
"""
import csv
import sys


def main(argv):
    args = [a for a in argv[1:]]
    title = None
    if "--title" in args:
        i = args.index("--title")
        title = args[i + 1] if i + 1 < len(args) else None
        del args[i:i + 2]
    raw_label = "cuLaunchKernel"
    if "--raw-label" in args:
        i = args.index("--raw-label")
        raw_label = args[i + 1] if i + 1 < len(args) else raw_label
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    src, dst = args
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_results.py: matplotlib is not installed", file=sys.stderr)
        return 2

    panels = {}  # panel -> {"bars": {label: {series: value}}, "lines": [(label, value)], "unit": u}
    order = []
    with open(src, newline="") as f:
        for row in csv.DictReader(f):
            p = row["panel"]
            if p not in panels:
                panels[p] = {"bars": {}, "lines": [], "unit": row["unit"]}
                order.append(p)
            v = float(row["value"])
            if row["series"] == "ceiling":
                panels[p]["lines"].append((row["label"], v))
            else:
                panels[p]["bars"].setdefault(row["label"], {})[row["series"]] = v
    if not order:
        print("plot_results.py: no rows in " + src, file=sys.stderr)
        return 1

    ncol = min(len(order), 2)
    nrow = (len(order) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7 * ncol, 4.5 * nrow), squeeze=False)
    colors = {"hipamp": "#1f77b4", "raw": "#ff7f0e"}
    for k, p in enumerate(order):
        ax = axes[k // ncol][k % ncol]
        d = panels[p]
        labels = list(d["bars"].keys())
        series = []
        for lab in labels:
            for s in d["bars"][lab]:
                if s not in series:
                    series.append(s)
        width = 0.8 / max(len(series), 1)
        for si, s in enumerate(series):
            xs = [i + (si - (len(series) - 1) / 2) * width for i in range(len(labels))]
            ys = [d["bars"][lab].get(s, 0.0) for lab in labels]
            bars = ax.bar(xs, ys, width, label=s + (" (%s)" % raw_label if s == "raw" else ""),
                          color=colors.get(s))
            for b, y in zip(bars, ys):
                ax.annotate("%.0f" % y, (b.get_x() + b.get_width() / 2, y), ha="center", va="bottom",
                            fontsize=7)
        for lab, v in d["lines"]:
            ax.axhline(v, color="#d62728", linestyle="--", linewidth=1.5)
            ax.annotate("%s %.0f" % (lab, v), (len(labels) - 0.5, v), ha="right", va="bottom",
                        color="#d62728", fontsize=8)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_title(p)
        ax.set_ylabel(d["unit"])
        top = max([max(v.values()) for v in d["bars"].values()] + [v for _, v in d["lines"]] + [1.0])
        ax.set_ylim(0, top * 1.15)
        ax.legend(fontsize=8, loc="upper left")
    for k in range(len(order), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print("plot_results.py: wrote " + dst)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
