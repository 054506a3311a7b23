#!/usr/bin/env python3
"""Where a bsp round's serial time goes, from a run's trace.

    syncpoint train --clock real -w 2 -p bsp --epochs 2 --eval-every 0 -o /tmp/run
    python3 bench/round_path.py /tmp/run/trace.jsonl

A bsp round is serial from the moment its last gradient is computed until
every worker computes again. From the trace's spans (docs/report-format.md) it
prints, per round, the medians of:
  - compute end -> push sent: the worker's own bookkeeping;
  - push sent -> accepted: the hop to the PS and its check of the gradient;
  - accepted -> applied: the coordinator's decision and the PS's commit;
  - applied -> first / second worker computing: the pulls and their hops;
and the round's whole serial part beside the compute time. Tracing costs a
little itself (the tracer is one more actor on the same cores).
"""
import collections
import json
import statistics
import sys


def main(path):
    compute = collections.defaultdict(dict)  # iteration -> worker -> (t0, t1)
    push = collections.defaultdict(dict)     # pushed iteration (= computed + 1) -> worker -> (sent, accepted)
    applied = {}                             # pushed iteration -> time of the commit
    with open(path) as f:
        for line in f:
            e = json.loads(line)
            kind = e["kind"]
            if kind == "compute":
                compute[e["iter"]][e["worker"]] = (e["t0"], e["t1"])
            elif kind == "push":
                push[e["iter"]][e["worker"]] = (e["t0"], e["t1"])
            elif kind == "apply":
                applied[e["iter"]] = e["t0"]
    rows = []
    for i in sorted(compute):
        here, after, pushes = compute[i], compute.get(i + 1, {}), push.get(i + 1, {})
        workers = len(here)
        if workers < 2 or len(after) < workers or len(pushes) < workers or i + 1 not in applied:
            continue
        end = max(t1 for _, t1 in here.values())
        sent, accepted = max(pushes.values())  # the round's last push
        starts = sorted(t0 for t0, _ in after.values())
        t = applied[i + 1]
        rows.append([sent - end, accepted - sent, t - accepted, starts[0] - t, starts[-1] - t,
                     starts[-1] - end, statistics.mean(t1 - t0 for t0, t1 in here.values())])
    if not rows:
        sys.exit("round_path: no complete bsp rounds of 2 or more workers in " + path)
    names = ["compute end -> push sent", "push sent -> accepted (hop, check)",
             "accepted -> applied (coordinator, commit)", "applied -> first worker computes",
             "applied -> last worker computes", "serial part of the round",
             "compute (mean of the workers)"]
    print(f"{len(rows)} rounds of {path}")
    for k, name in enumerate(names):
        print(f"  {name:44s} median {statistics.median(r[k] for r in rows) * 1e6:7.0f} us")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: round_path.py TRACE.jsonl")
    main(sys.argv[1])
