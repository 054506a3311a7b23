#!/usr/bin/env python3
"""The compression lab's table, from a sweep's cells (bench/compression.sh).

    python3 bench/compression_table.py SWEEP_DIR TARGET

Per protocol and compressor, over the seeds: the bytes pushed per push
against uncompressed (traffic saved), the final accuracy as mean (min-max)
and its difference from uncompressed's mean, and the time to TARGET on the
virtual clock as mean and against uncompressed; the run time is the
fixed budget's (the epochs given) on the virtual clock.
"""
import collections
import json
import os
import statistics
import sys


def main(folder, target):
    runs = collections.defaultdict(list)  # (protocol, compress) -> summaries
    cells = os.path.join(folder, "cells")
    for name in sorted(os.listdir(cells)):
        path = os.path.join(cells, name, "summary.json")
        if os.path.exists(path):
            with open(path) as f:
                s = json.load(f)
            runs[(s["protocol"], s.get("compress", "none"))].append(s)
    order = ["none", "fp16", "bf16", "topk:0.01", "randomk:0.01", "onebit"]
    protocols = sorted({p for p, _ in runs}, key=lambda p: ["bsp", "ssp", "asp"].index(p) if p in ["bsp", "ssp", "asp"] else 9)
    model = next(iter(runs.values()))[0]["model"]
    print(f"\n{model}: {sum(len(v) for v in runs.values())} runs, target {target}\n")
    print("| protocol | compress | bytes per push | traffic saved | run time s | final accuracy | vs none | time to target s | vs none |")
    print("|---|---|---|---|---|---|---|---|---|")

    def per_push(s):
        pushes = sum(w["iterations"] for w in s["per_worker"]) + s["rejected_pushes"]
        return s["pushed_bytes"] / max(pushes, 1)

    for p in protocols:
        base = runs.get((p, "none"))
        base_acc = statistics.mean(s["final_accuracy"] for s in base) if base else None
        base_bytes = statistics.mean(per_push(s) for s in base) if base else None
        base_t = [s["time_to_target_s"] for s in base if s["time_to_target_s"] is not None] if base else []
        for c in sorted({c for q, c in runs if q == p}, key=lambda c: order.index(c) if c in order else 99):
            ss = runs[(p, c)]
            accs = [s["final_accuracy"] for s in ss]
            b = statistics.mean(per_push(s) for s in ss)
            ts = [s["time_to_target_s"] for s in ss if s["time_to_target_s"] is not None]
            t = statistics.mean(ts) if len(ts) == len(ss) else None
            saved = f"{100 * (1 - b / base_bytes):.1f}%" if base_bytes else "-"
            dacc = f"{statistics.mean(accs) - base_acc:+.4f}" if base_acc is not None else "-"
            tt = f"{t:.3f}" if t is not None else f"{len(ts)} of {len(ss)} reached"
            vs = (f"{t / statistics.mean(base_t):.2f}x" if t is not None and len(base_t) == len(base) and base_t
                  else "-")
            run_time = statistics.mean(s["run_time_s"] for s in ss)
            print(f"| {p} | {c} | {b / 1e3:.1f} kB | {saved} | {run_time:.2f} | {statistics.mean(accs):.4f} "
                  f"({min(accs):.4f}-{max(accs):.4f}) | {dacc} | {tt} | {vs} |")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
