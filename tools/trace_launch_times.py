#!/usr/bin/env python3
# trace_launch_times.py — reads an AMP_TRACE file (Chrome trace-event JSON) and prints each kernel and extent's median launch time in us, inside graph replays and outside them (direct launches), with counts: where a replay's time goes, launch by launch. Usage: python3 tools/trace_launch_times.py TRACE.json
import json, sys, statistics, collections
if len(sys.argv) != 2:
    sys.exit('usage: tools/trace_launch_times.py TRACE.json')
d = json.load(open(sys.argv[1]))
ev = [e for e in d['traceEvents'] if e.get('ph') == 'X']
graphs = [(e['tid'], e['ts'], e['ts'] + e['dur']) for e in ev if e.get('cat') == 'graph']
graphs.sort()
def in_graph(e):
    for tid, a, b in graphs:
        if tid == e['tid'] and a <= e['ts'] <= b: return True
    return False
acc = collections.defaultdict(lambda: ([], []))
for e in ev:
    if e.get('cat') != 'launch': continue
    key = e['name'] + ' ' + e['args'].get('extent', '')
    acc[key][1 if in_graph(e) else 0].append(e['dur'])
for k, (dr, gr) in sorted(acc.items()):
    f = lambda l: '%8.2f (n=%d)' % (statistics.median(l), len(l)) if l else '       -'
    print('%-40s direct %s   graph %s' % (k, f(dr), f(gr)))
