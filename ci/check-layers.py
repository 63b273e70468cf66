#!/usr/bin/env python3
# check-layers.py — the library's layers, written down once (the table below), checked: every `#include "..."` under lib/ (subdirectories too) must name a header of its own layer or of a layer it may use, and with --objects BUILD_DIR every amp_ symbol an object of lib/ takes from another (nm) must come from such a layer too, so that neither an include nor a call goes upwards or sideways between peers.
#
# Usage: ci/check-layers.py [--objects BUILD_DIR]
# Exit 0: clean; 1: a violation (each one printed with the file, the line or
# symbol, and both layers); 2: the table does not cover a file, or a header
# cannot be found.
import fnmatch
import os
import re
import subprocess
import sys

# The layers, lowest first: each is a folder of lib/ (lib/backend.h alone
# is the contract between the core and the back ends; the vendor ABI
# mirrors, *_abi.h, are leaves wherever they live). A file belongs to the
# layer with the most specific pattern that matches its path (fnmatch,
# relative to the repository root; "**" spans directories; the most
# characters besides wildcards; on a tie the first such layer). A layer may
# use itself and the layers it names, all of them listed above it; peers
# (gpu, cpu) name neither each other nor the core. Inside a layer, files
# may call each other but never in a circle (check_circles).
# docs/architecture.md draws the same picture.
LAYERS = [
    # name        may use                             members
    ("vendor-abi", [],                                 ["lib/trace/trace_abi.h", "lib/gpu/*_abi.h"]),
    ("base",       [],                                 ["lib/base/**"]),
    ("contract",   ["base"],                           ["lib/backend.h"]),
    ("includes",   ["base", "contract"],               ["lib/includes/**"]),
    ("trace",      ["vendor-abi", "base", "contract"], ["lib/trace/**"]),
    ("gpu",        ["vendor-abi", "base", "contract", "includes"], ["lib/gpu/**"]),
    ("cpu",        ["base", "contract"],               ["lib/cpu/**"]),
    ("core",       ["base", "contract", "includes", "trace"], ["lib/core/**"]),
    # The algorithms sit on the core as a user would (its public calls and
    # a few internal ones); nothing below them calls them.
    ("algorithms", ["base", "contract", "core"],       ["lib/alg/**"]),
]

# The back ends' entry points (declared in lib/backend.h): the one call of
# each the core makes directly, to find the accelerators; everything else
# it reaches through their table. Symbol: the layers that may call it.
ENTRY_POINTS = {"amp__gpu_enumerate": ["core"], "amp__cpu_enumerate": ["core"]}

# Quoted includes that are generated at build time (not in the tree).
GENERATED = {"hipamp_version.h"}

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def match(path, pattern):
    if "**" in pattern:
        return path.startswith(pattern.split("**")[0])
    return fnmatch.fnmatchcase(path, pattern) and path.count("/") == pattern.count("/")


def layer_of(path):
    best, best_len = None, -1
    for name, _, members in LAYERS:
        for p in members:
            n = len(p) - p.count("*") - p.count("?")
            if match(path, p) and n > best_len:
                best, best_len = name, n
    return best


def may_use(user, used):
    return user == used or used in dict((n, u) for n, u, _ in LAYERS)[user]


def check_table():
    seen = []
    for name, uses, _ in LAYERS:
        for u in uses:
            if u not in seen:
                sys.exit(f"check-layers: layer {name} uses {u}, which is not listed above it")
        seen.append(name)


def resolve(includer, name):
    """The header a quoted include names: beside the includer, then in each
    directory above it up to lib/ (the build's -I), then include/."""
    d = os.path.dirname(includer)
    while True:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(ROOT, cand)):
            return cand
        if d in ("lib", "") or not d.startswith("lib"):
            break
        d = os.path.dirname(d)
    cand = os.path.normpath(os.path.join("include", name))
    return cand if os.path.isfile(os.path.join(ROOT, cand)) else None


def sources(top="lib"):
    for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
        for f in sorted(files):
            if f.endswith((".c", ".h", ".S")):
                yield os.path.relpath(os.path.join(dirpath, f), ROOT)


def check_includes():
    bad = unknown = 0
    for path in sorted(sources()):
        layer = layer_of(path)
        if layer is None:
            print(f"{path}: in no layer of ci/check-layers.py's table: add it")
            unknown += 1
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                header = resolve(path, m.group(1))
                if header is None:
                    if os.path.basename(m.group(1)) not in GENERATED:
                        print(f"{path}:{n}: #include \"{m.group(1)}\" found nowhere in the tree")
                        unknown += 1
                    continue
                if header.startswith("include/"):
                    continue  # the public API: every layer may use it
                used = layer_of(header)
                if used is None:
                    print(f"{header}: in no layer of ci/check-layers.py's table: add it")
                    unknown += 1
                elif not may_use(layer, used):
                    print(f"{path}:{n}: #include \"{m.group(1)}\": layer {layer} may not use {used} ({header})")
                    bad += 1
    return bad, unknown


def nm(objs, *flags):
    """Each object's symbols as nm prints them with flags: {object: [names]}.
    One nm for all of them (nm -A names the file on each line): a process
    per object cost 25 s of CI's 2 cores for 91 objects, one costs 0.3."""
    paths = sorted(set(objs))
    found = {obj: [] for obj in paths}
    out = subprocess.run(["nm", "-A", *flags, *paths], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        # "PATH:ADDRESS TYPE NAME" or "PATH:  U NAME": PATH is the first
        # prefix before a colon that is one of ours (a path may hold colons).
        cut = line.find(":")
        while cut >= 0 and line[:cut] not in found:
            cut = line.find(":", cut + 1)
        if cut < 0 or not line[cut + 1:].strip():
            continue
        found[line[:cut]].append(line[cut + 1:].split()[-1])
    return found


def check_objects(build):
    """Which layer each amp_ symbol is defined in, and which each object
    takes from where: the link-level picture of the same rule."""
    top = os.path.join(build, "CMakeFiles", "hipamp_objects.dir")
    objs = {}
    for dirpath, _, files in os.walk(os.path.join(top, "lib")):
        for f in files:
            if f.endswith(".o"):
                src = os.path.relpath(os.path.join(dirpath, f[:-2]), top)
                objs[src] = os.path.join(dirpath, f)
    if not objs:
        sys.exit(f"check-layers: no objects under {top}/lib (build the library first)")
    where = {}
    defined = nm(objs.values(), "-g", "--defined-only")
    undefined = nm(objs.values(), "-u")
    for src, obj in objs.items():
        for sym in defined[obj]:
            if sym.startswith("amp_"):
                where[sym] = src
    bad = 0
    calls = {}  # file -> {file it calls: [symbols]}
    for src, obj in sorted(objs.items()):
        layer = layer_of(src)
        if layer is None:
            continue  # said by check_includes
        for sym in undefined[obj]:
            if sym not in where:
                continue  # libc, the vendors', generated sources
            if where[sym] != src:
                calls.setdefault(src, {}).setdefault(where[sym], []).append(sym)
            used = layer_of(where[sym])
            if used and not may_use(layer, used) and layer not in ENTRY_POINTS.get(sym, []):
                print(f"{src}: calls {sym} ({where[sym]}): layer {layer} may not use {used}")
                bad += 1
    bad += check_circles(calls)
    return bad, len(objs)


def check_circles(calls):
    """Files that call each other in a loop, inside one layer too (Tarjan's
    strongly connected components over the call graph): each is printed
    with the calls that tie it, and counts as one violation."""
    index, low, on, stack, circles = {}, {}, set(), [], []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in calls.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    for comp in circles:
        print(f"circle of {len(comp)} files: {', '.join(comp)}")
        for a in comp:
            for b in comp:
                if b in calls.get(a, {}):
                    print(f"  {a} -> {b}: {', '.join(sorted(set(calls[a][b])))}")
    return len(circles)


MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 150
C_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)


# The sizes are checked in these folders; the layers only in lib/ (mpi/,
# hipamp::mpi, sits on the library's public API as any program does).
SIZED = ("lib", "mpi")


def check_sizes():
    """No file under SIZED over MAX_FILE_LINES lines, no function over
    MAX_FUNCTION_LINES: a top-level brace opened right after a ')' is a
    function body (comments and literals blanked first, their line breaks
    kept)."""
    bad = 0
    for path in sorted(p for top in SIZED for p in sources(top)):
        if not path.endswith((".c", ".h")):
            continue
        with open(os.path.join(ROOT, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        nlines = text.count("\n")
        if nlines > MAX_FILE_LINES:
            print(f"{path}: {nlines} lines, over {MAX_FILE_LINES}: split it by responsibility")
            bad += 1
        code = C_NOISE.sub(lambda m: "\n" * m.group(0).count("\n") + " ", text)
        depth, start, prev = 0, None, ""
        for i, ch in enumerate(code):
            if ch == "{":
                if depth == 0 and prev == ")":
                    start = i
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    first = code.count("\n", 0, start) + 1
                    n = code.count("\n", start, i) + 1
                    if n > MAX_FUNCTION_LINES:
                        print(f"{path}:{first}: a function of {n} lines, over {MAX_FUNCTION_LINES}: make it named steps")
                        bad += 1
                    start = None
            if not ch.isspace():
                prev = ch
    return bad


def main(argv):
    build = None
    if len(argv) == 2 and argv[0] == "--objects":
        build = argv[1]
    elif argv:
        sys.exit(__doc__ or "usage: ci/check-layers.py [--objects BUILD_DIR]")
    check_table()
    bad, unknown = check_includes()
    bad += check_sizes()
    nobj = 0
    if build:
        b2, nobj = check_objects(build)
        bad += b2
    print(f"check-layers: {len(list(sources()))} files under lib/ (sizes: lib/ and mpi/)" + (f", {nobj} objects" if build else "") +
          f": {bad} upward or sideways uses, circles or oversized files and functions, {unknown} unknown")
    return 2 if unknown else 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
