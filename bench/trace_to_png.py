# trace_to_png.py — renders a hipamp trace file (AMP_TRACE, Chrome trace-event JSON) as a PNG timeline: one row per track (host threads, then each accelerator's queues), builds, copies, launches and waits as coloured slices, copies avoided as markers; Python's standard library only.
"""Renders an AMP_TRACE file as a PNG timeline.

usage: trace_to_png.py TRACE.json OUT.png [--title TEXT] [--width PIXELS]
                       [--from MS] [--to MS]
--from/--to: the window to draw, in milliseconds since the library was
loaded (default: from the first event to the last). Text is drawn in
capitals with a built-in 5x7 font.
"""
import json
import struct
import sys
import zlib

# 5x7 glyphs, one integer of 5 bits a row (bit 4 = leftmost pixel).
FONT = {
    "A": "0e 11 11 1f 11 11 11", "B": "1e 11 11 1e 11 11 1e", "C": "0e 11 10 10 10 11 0e",
    "D": "1e 11 11 11 11 11 1e", "E": "1f 10 10 1e 10 10 1f", "F": "1f 10 10 1e 10 10 10",
    "G": "0e 11 10 17 11 11 0f", "H": "11 11 11 1f 11 11 11", "I": "0e 04 04 04 04 04 0e",
    "J": "07 02 02 02 02 12 0c", "K": "11 12 14 18 14 12 11", "L": "10 10 10 10 10 10 1f",
    "M": "11 1b 15 15 11 11 11", "N": "11 11 19 15 13 11 11", "O": "0e 11 11 11 11 11 0e",
    "P": "1e 11 11 1e 10 10 10", "Q": "0e 11 11 11 15 12 0d", "R": "1e 11 11 1e 14 12 11",
    "S": "0f 10 10 0e 01 01 1e", "T": "1f 04 04 04 04 04 04", "U": "11 11 11 11 11 11 0e",
    "V": "11 11 11 11 11 0a 04", "W": "11 11 11 15 15 15 0a", "X": "11 11 0a 04 0a 11 11",
    "Y": "11 11 11 0a 04 04 04", "Z": "1f 01 02 04 08 10 1f",
    "0": "0e 11 13 15 19 11 0e", "1": "04 0c 04 04 04 04 0e", "2": "0e 11 01 02 04 08 1f",
    "3": "1f 02 04 02 01 11 0e", "4": "02 06 0a 12 1f 02 02", "5": "1f 10 1e 01 01 11 0e",
    "6": "06 08 10 1e 11 11 0e", "7": "1f 01 02 04 08 08 08", "8": "0e 11 11 0e 11 11 0e",
    "9": "0e 11 11 0f 01 02 0c",
    ".": "00 00 00 00 00 0c 0c", ",": "00 00 00 00 0c 04 08", ":": "00 0c 0c 00 0c 0c 00",
    "-": "00 00 00 1f 00 00 00", "_": "00 00 00 00 00 00 1f", "+": "00 04 04 1f 04 04 00",
    "(": "02 04 08 08 08 04 02", ")": "08 04 02 02 02 04 08", "[": "0e 08 08 08 08 08 0e",
    "]": "0e 02 02 02 02 02 0e", "/": "00 01 02 04 08 10 00", "%": "18 19 02 04 08 13 03",
    ">": "08 04 02 01 02 04 08", "<": "02 04 08 10 08 04 02", "=": "00 00 1f 00 1f 00 00",
    "*": "00 04 15 0e 15 04 00", "#": "0a 0a 1f 0a 1f 0a 0a", "'": "04 04 08 00 00 00 00",
    '"': "0a 0a 00 00 00 00 00", "?": "0e 11 01 02 04 00 04", "!": "04 04 04 04 04 00 04",
    ";": "00 0c 0c 00 0c 04 08",
    " ": "00 00 00 00 00 00 00",
}
GLYPHS = {c: [int(h, 16) for h in rows.split()] for c, rows in FONT.items()}
ADVANCE = 6  # pixels a character, gap included
LINE = 9

BACKGROUND = (255, 255, 255)
INK = (40, 40, 40)
GRID = (225, 225, 225)
ROW_SHADE = (246, 247, 250)
COLORS = {
    "build": (59, 111, 216),
    "wait": (154, 154, 154),
    "host->device": (216, 69, 59),
    "device->host": (150, 70, 190),
    "device->device": (160, 110, 40),
    "host->host": (230, 140, 120),
    "avoided": (120, 20, 20),
}
# Launches: one of these greens/teals per kernel name.
KERNEL_COLORS = [(59, 165, 92), (32, 128, 120), (110, 180, 60), (20, 150, 160), (70, 120, 50), (140, 190, 120),
                 (30, 100, 80), (90, 200, 170)]


class Image:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(bytes(BACKGROUND) * (w * h))

    def rect(self, x0, y0, x1, y1, rgb):
        x0, y0 = max(0, int(x0)), max(0, int(y0))
        x1, y1 = min(self.w, int(x1)), min(self.h, int(y1))
        if x1 <= x0 or y1 <= y0:
            return
        row = bytes(rgb) * (x1 - x0)
        for y in range(y0, y1):
            at = (y * self.w + x0) * 3
            self.px[at:at + len(row)] = row

    def text(self, x, y, s, rgb=INK):
        for i, ch in enumerate(s.upper()):
            g = GLYPHS.get(ch, GLYPHS["?"])
            for r, bits in enumerate(g):
                for c in range(5):
                    if bits & (0x10 >> c):
                        self.rect(x + i * ADVANCE + c, y + r, x + i * ADVANCE + c + 1, y + r + 1, rgb)

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            body = kind + data
            return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def nice_step(span, target):
    """A 1/2/5 x 10^k step giving about target ticks over span."""
    raw = span / max(target, 1)
    k = 1.0
    while k * 10 <= raw:
        k *= 10
    while k > raw and k > 1e-9:
        k /= 10
    for m in (1, 2, 5, 10):
        if k * m >= raw:
            return k * m
    return k * 10


def fmt_time(us):
    if us >= 1e6:
        return "%g S" % round(us / 1e6, 6)
    if us >= 1e3:
        return "%g MS" % round(us / 1e3, 6)
    return "%g US" % round(us, 6)


def main(argv):
    args = argv[1:]
    opts = {"--title": None, "--width": "1600", "--from": None, "--to": None}
    for key in list(opts):
        if key in args:
            i = args.index(key)
            if i + 1 >= len(args):
                print(__doc__, file=sys.stderr)
                return 1
            opts[key] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 1
    src, dst = args
    with open(src) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc

    procs, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    timed = [e for e in events if e.get("ph") in ("X", "i")]
    if not timed:
        print("trace_to_png.py: no events in " + src, file=sys.stderr)
        return 1
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + e.get("dur", 0) for e in timed)
    if opts["--from"] is not None:
        t0 = float(opts["--from"]) * 1e3
    if opts["--to"] is not None:
        t1 = float(opts["--to"]) * 1e3
    if t1 <= t0:
        t1 = t0 + 1

    # Rows: the host's threads first, then each accelerator's queues.
    keys = sorted({(e["pid"], e["tid"]) for e in timed} | set(threads), key=lambda k: (k[0] != 1, k[0], k[1]))
    width = max(800, int(opts["--width"]))
    label_w, top, row_h = 300, 58, 26
    kernels = []
    for e in timed:
        if e.get("cat") == "launch" and e["name"] not in kernels:
            kernels.append(e["name"])
    legend_items = [("build", COLORS["build"]), ("wait", COLORS["wait"])]
    for d in ("host->device", "device->host", "device->device", "host->host"):
        if any(e.get("cat") == "copy" and e.get("args", {}).get("direction") == d and e["ph"] == "X" for e in timed):
            legend_items.append(("copy " + d, COLORS[d]))
    if any(e.get("ph") == "i" for e in timed):
        legend_items.append(("copy avoided (discard)", COLORS["avoided"]))
    kcolor = {k: KERNEL_COLORS[i % len(KERNEL_COLORS)] for i, k in enumerate(kernels)}
    legend_items += [("launch " + k, kcolor[k]) for k in kernels]
    per_line = max(1, (width - 20) // 260)
    legend_h = 16 + ((len(legend_items) + per_line - 1) // per_line) * 14
    height = top + len(keys) * row_h + 24 + legend_h
    img = Image(width, height)
    plot_x0, plot_x1 = label_w, width - 12
    scale = (plot_x1 - plot_x0) / (t1 - t0)

    def x_of(ts):
        return plot_x0 + (ts - t0) * scale

    title = opts["--title"] or ("hipamp trace: " + src.rsplit("/", 1)[-1])
    img.text(12, 10, title[: (width - 24) // ADVANCE])
    other = doc.get("otherData", {}) if isinstance(doc, dict) else {}
    img.text(12, 24, ("%d events, %s shown (time since the library was loaded); device slices: device time "
                      "measured with events, placed on the host clock" % (len(timed), fmt_time(t1 - t0)))
             [: (width - 24) // ADVANCE], (110, 110, 110))
    if other.get("dropped"):
        img.text(12, 36, "%d events dropped" % other["dropped"], (180, 0, 0))

    # Time axis and grid.
    step = nice_step(t1 - t0, (plot_x1 - plot_x0) // 110)
    tick = (t0 // step) * step
    while tick <= t1:
        if tick >= t0:
            x = int(x_of(tick))
            img.rect(x, top - 4, x + 1, top + len(keys) * row_h, GRID)
            img.text(x + 2, top - 12, fmt_time(tick))
        tick += step

    for r, key in enumerate(keys):
        y = top + r * row_h
        if r % 2 == 0:
            img.rect(0, y, width, y + row_h, ROW_SHADE)
        name = threads.get(key, "tid %d" % key[1])
        proc = procs.get(key[0], "pid %d" % key[0])
        label = ("host: " + name) if key[0] == 1 else (proc.split(":")[0] + ": " + name)
        img.text(8, y + 9, label[: (label_w - 16) // ADVANCE])

    row_of = {k: i for i, k in enumerate(keys)}
    # Longest first, so that short slices stay visible on top.
    for e in sorted(timed, key=lambda e: -e.get("dur", 0)):
        r = row_of[(e["pid"], e["tid"])]
        y = top + r * row_h
        if e["ph"] == "i":
            x = x_of(e["ts"])
            if plot_x0 <= x <= plot_x1:
                for k in range(6):
                    img.rect(x - 5 + k, y + 2 + k, x + 6 - k, y + 3 + k, COLORS["avoided"])
            continue
        a, b = e["ts"], e["ts"] + e.get("dur", 0)
        if b < t0 or a > t1:
            continue
        cat = e.get("cat")
        if cat == "launch":
            rgb = kcolor.get(e["name"], KERNEL_COLORS[0])
        elif cat == "copy":
            rgb = COLORS.get(e.get("args", {}).get("direction"), COLORS["host->device"])
        else:
            rgb = COLORS.get(cat, (120, 120, 120))
        xa, xb = max(x_of(a), plot_x0), min(x_of(b), plot_x1)
        if xb - xa < 1:
            xb = xa + 1
        img.rect(xa, y + 4, xb, y + row_h - 4, rgb)
        text = e["name"]
        if xb - xa >= len(text) * ADVANCE + 6:
            img.text(int(xa) + 3, y + 9, text, (255, 255, 255))

    # Legend.
    ly = top + len(keys) * row_h + 24
    for i, (name, rgb) in enumerate(legend_items):
        x = 12 + (i % per_line) * 260
        y = ly + (i // per_line) * 14
        img.rect(x, y, x + 10, y + 8, rgb)
        img.text(x + 16, y, name[:38])
    img.png(dst)
    print("wrote %s (%dx%d, %d tracks, %d events)" % (dst, width, height, len(keys), len(timed)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
