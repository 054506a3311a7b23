#!/usr/bin/env python3
"""The critical path of a bsp round, from runs' traces, side by side.

    syncpoint train --clock real -w 2 -p bsp --epochs 1 --eval-every 0 -o /tmp/one
    syncpoint submit --head H -w 2 -p bsp --epochs 1 --eval-every 0 -o /tmp/head
    python3 bench/round_path.py "one process=/tmp/one/trace.jsonl" "PS on the head=/tmp/head/trace.jsonl"

bench/round_path.sh runs the placements and worker counts and calls this.

A bsp round is serial from the moment its last gradient is computed until every
worker computes again. The worker whose push came last in a round carries that
path. From its own spans (docs/report-format.md), which one process's clock
times, it prints per round the medians of:
  - compute end -> push sent: the worker's bookkeeping (and compression);
  - push: sent -> the PS accepted it (the hop, the PS's check, the answer);
  - release: accepted -> the coordinator released it (the coordinator's
    decision and the PS's commit, and their messages);
  - release -> pull asked, and the pull (the next version's weights);
  - pull end -> computing again;
  - the serial part: the last pusher's compute end -> its next compute;
and beside them the compute time, the spread of the workers' compute ends
(the stragglers' share: the last minus the first), and the PS's commit after
the last push was accepted ("accepted -> applied"). The last two compare the
clocks of different processes: exact when they share a machine (the head
sends its origin, runtime/cluster/wire/interfaces.hpp, run_clock). Tracing costs a
little itself (the tracer is one more actor on the same cores).
"""
import collections
import json
import statistics
import sys

NAMES = [
    ("compute", "compute (mean of the workers)"),
    ("spread", "compute ends, last - first"),
    ("book", "compute end -> push sent"),
    ("push", "push: sent -> accepted"),
    ("applied", "accepted -> applied (PS commit)"),
    ("release", "accepted -> released"),
    ("ask", "released -> pull asked"),
    ("pull", "pull"),
    ("start", "pull end -> computing"),
    ("serial", "serial part of the round"),
]


def rounds(path):
    """Per complete round, the figures in NAMES (seconds)."""
    spans = collections.defaultdict(lambda: collections.defaultdict(dict))  # kind -> iter -> worker -> (t0, t1)
    applied = {}  # pushed iteration -> the lead shard's commit
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            kind = e["kind"]
            if kind in ("compute", "push", "pull"):
                spans[kind][e["iter"]].setdefault(e["worker"], (e["t0"], e["t1"]))
            elif kind == "wait":  # a worker's waits of an iteration: before its push, and for the release
                spans[kind][e["iter"]].setdefault(e["worker"], []).append((e["t0"], e["t1"]))
            elif kind == "apply":
                applied[e["iter"]] = max(applied.get(e["iter"], 0.0), e["t0"])
    compute, push, wait, pull = (spans[k] for k in ("compute", "push", "wait", "pull"))
    out = []
    for i in sorted(compute):
        here, after, pushes = compute[i], compute.get(i + 1, {}), push.get(i + 1, {})
        workers = len(here)
        if workers < 2 or len(after) < workers or len(pushes) < workers:
            continue
        last = max(pushes, key=lambda w: pushes[w][1])  # accepted last
        sent, accepted = pushes[last]
        w = next((s for s in wait.get(i + 1, {}).get(last, []) if s[0] >= accepted), None)
        p = pull.get(i + 1, {}).get(last)
        if w is None or p is None or not w[0] <= w[1] <= p[0] <= p[1] <= after[last][0]:
            continue
        ends = [t1 for _, t1 in here.values()]
        out.append({
            "compute": statistics.mean(t1 - t0 for t0, t1 in here.values()),
            "spread": max(ends) - min(ends),
            "book": sent - here[last][1],
            "push": accepted - sent,
            "applied": applied[i + 1] - accepted if i + 1 in applied else None,
            "release": w[1] - accepted,
            "ask": p[0] - w[1],
            "pull": p[1] - p[0],
            "start": after[last][0] - p[1],
            "serial": after[last][0] - here[last][1],
        })
    return out


def main(args):
    if not args:
        sys.exit("usage: round_path.py [LABEL=]TRACE.jsonl ...")
    columns = []
    for arg in args:
        label, _, path = arg.rpartition("=")
        rows = rounds(path)
        if not rows:
            sys.exit("round_path: no complete bsp rounds of 2 or more workers in " + path)
        med = {}
        for key, _ in NAMES:
            values = [r[key] for r in rows if r[key] is not None]
            med[key] = statistics.median(values) * 1e6 if values else None
        columns.append((label or path, len(rows), med))
    print("Medians over rounds, in microseconds; the path is the last pusher's (bench/round_path.py)")
    print("| span | " + " | ".join(label for label, _, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for key, name in NAMES:
        cells = ["" if m[key] is None else f"{m[key]:.0f}" for _, _, m in columns]
        if key == "serial":
            cells = [f"**{c}**" for c in cells]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| serial / compute | " + " | ".join(f"{m['serial'] / m['compute']:.2f}" for _, _, m in columns) + " |")
    print("| rounds | " + " | ".join(str(n) for _, n, _ in columns) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
