#!/usr/bin/env python3
"""The local-update protocols' claims, from bench/fidelity_local.sh's sweeps.

    python3 bench/fidelity_local.py OUT DOC

Reads each sweep's cells (summary.json, trace.jsonl) under OUT, computes the
four claims per seed and over the seeds, prints the tables, and writes them
into DOC (docs/fidelity.md) between its "local-updates" markers.
"""
import collections
import json
import math
import os
import statistics
import sys

BEGIN = "<!-- local-updates:begin (bench/fidelity_local.sh writes this part) -->"
END = "<!-- local-updates:end -->"


def cells(folder):
    """(summary, trace) of every finished cell of the sweep in `folder`."""
    out = []
    root = os.path.join(folder, "cells")
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        path = os.path.join(root, name)
        if not os.path.exists(os.path.join(path, "summary.json")):
            continue
        with open(os.path.join(path, "summary.json")) as f:
            summary = json.load(f)
        trace = []
        with open(os.path.join(path, "trace.jsonl")) as f:
            for line in f:
                trace.append(json.loads(line))
        out.append((summary, trace))
    return out


def final_loss(s):
    return s["final_metrics"]["loss"]


def moved(s):
    return s["pushed_bytes"] + s.get("pulled_bytes", 0)


def by(runs, key):
    groups = collections.defaultdict(list)
    for s, t in runs:
        groups[key(s)].append((s, t))
    return groups


def spread(xs):
    m = statistics.mean(xs)
    return f"{m:.4g} ({min(xs):.4g}–{max(xs):.4g})" if len(xs) > 1 and min(xs) != max(xs) else f"{m:.4g}"


def peak_link(trace, gap):
    """The most bytes the PS link carried in one exchange: a burst of link spans
    less than `gap` seconds apart, the start's pulls of the whole model left out
    (the same for every protocol). The bandwidth an exchange needs, to be done
    within a given time, is in proportion."""
    spans = sorted((e["t0"], e["t1"], e["value"]) for e in trace if e["kind"] == "link")
    bursts, last = [], None
    for t0, t1, b in spans:
        if last is not None and t0 - last < gap:
            bursts[-1][1] += b
        else:
            bursts.append([t0, b])
        last = t1 if last is None else max(last, t1)
    return max((b for t0, b in bursts if t0 > 0), default=0.0)


def loss_curve(trace):
    return sorted((e["t0"], e["value"]) for e in trace
                  if e["kind"] == "metric" and e["worker"] == -1 and e["note"] == "loss")


def losses(trace):
    """The held-out losses in the order of the evaluations (every run evaluates at the same samples)."""
    return [v for _, v in loss_curve(trace)]


def time_to(trace, target):
    for t, v in loss_curve(trace):
        if v <= target:
            return t
    return None


def verdict(ok, partly=False):
    return "**reproduced**" if ok else ("**partly**" if partly else "**not**")


def straggler_rows(label, short, strag):
    """Claim (c)'s table and verdict for one setting."""
    protocols = ["async-diloco", "diloco", "elastic-bsp", "bsp"]
    groups = by(strag, lambda s: s["protocol"])
    finals = [final_loss(s) for s, _ in strag]
    if not finals:
        return []
    target = max(finals)  # every run gets there
    times = {p: [time_to(t, target) for s, t in sorted(groups.get(p, []), key=lambda r: r[0]["seed"])]
             for p in protocols}
    lines = [f"**(c) One worker 4× slower** (`--straggler 7:x4`) {label}: virtual seconds to reach a held-out "
             f"loss of {target:.3f} (the highest final loss of these runs, so that every run reaches it), evaluated "
             "every 0.05 epochs", "", "| protocol | time to target s | final loss | run time s |", "|---|---|---|---|"]
    for p in protocols:
        ts = [t for t in times[p] if t is not None]
        fl = [final_loss(s) for s, _ in groups.get(p, [])]
        rt = [s["run_time_s"] for s, _ in groups.get(p, [])]
        if ts:
            lines.append(f"| {p} | {spread(ts)} | {spread(fl)} | {spread(rt)} |")
    lines.append("")
    mean = lambda p: statistics.mean([t for t in times[p] if t is not None]) if any(times[p]) else math.inf
    beats = [p for p in protocols[1:] if mean("async-diloco") < mean(p)]
    lines.append(f"Claim: async-diloco with Dynamic Local Updates reaches the target sooner than diloco, elastic-bsp "
                 f"and bsp. Ours, {short}: sooner than {', '.join(beats) if beats else 'none of them'}: "
                 f"{verdict(len(beats) == 3, len(beats) > 0)}.")
    lines.append("")
    return lines


def main(out, doc):
    bsp = cells(os.path.join(out, "bsp"))
    local = by(cells(os.path.join(out, "diloco")), lambda s: s["protocol"])
    int4 = cells(os.path.join(out, "int4"))
    seed = lambda r: r[0]["seed"]
    lines = []

    # (a) DiLoCo at H = 50 against bsp, equal samples.
    a_rows, gaps, ratios = [], [], []
    bsp_by_seed = {seed(r): r for r in bsp}
    for r in sorted(local.get("diloco", []), key=seed):
        b = bsp_by_seed.get(seed(r))
        if not b:
            continue
        gap = final_loss(r[0]) / final_loss(b[0]) - 1
        ratio = moved(b[0]) / moved(r[0])
        gaps.append(gap)
        ratios.append(ratio)
        a_rows.append(f"| {seed(r)} | {final_loss(b[0]):.4f} | {final_loss(r[0]):.4f} | {100 * gap:+.2f} % | "
                      f"{moved(b[0]) / 1e6:.0f} MB | {moved(r[0]) / 1e6:.1f} MB | {ratio:.0f}× |")
    lines += ["**(a) DiLoCo at H = 50 against bsp at equal samples** (2 epochs; the held-out loss in nats a "
              "character; bytes: pushes and pulls)", "",
              "| seed | bsp loss | diloco loss | diloco − bsp | bsp bytes | diloco bytes | fewer bytes |",
              "|---|---|---|---|---|---|---|"] + a_rows + [""]
    if gaps:
        held = statistics.mean(gaps) <= 0.02 and min(ratios) >= 40
        lines.append(f"Claim: within 2 % of bsp's loss with at least 40× fewer bytes. Ours: {spread([100 * g for g in gaps])} % "
                     f"of bsp's loss with {spread(ratios)}× fewer bytes: {verdict(held, min(ratios) >= 40)}.")
        lines.append("")
        # The gap along the run: at each quarter of it, at equal samples, over the seeds.
        pairs = [(losses(r[1]), losses(bsp_by_seed[seed(r)][1])) for r in local.get("diloco", []) if seed(r) in bsp_by_seed]
        n = min(min(len(d), len(b)) for d, b in pairs)
        if n >= 4:
            marks = [n * k // 4 - 1 for k in (1, 2, 3, 4)]
            along = [spread([100 * (d[i] / b[i] - 1) for d, b in pairs]) + " %" for i in marks]
            lines.append("DiLoCo's loss against bsp's along the run, at a quarter, a half, three quarters and the "
                         "end of its samples: " + ", ".join(along) + ".")
            lines.append("")

    # (b) Streaming DiLoCo against DiLoCo: peak link use.
    b_rows, peaks, loss_gaps = [], [], []
    stream = {seed(r): r for r in local.get("streaming-diloco", [])}
    for r in sorted(local.get("diloco", []), key=seed):
        s = stream.get(seed(r))
        if not s:
            continue
        gap = r[0]["iter_cost_ms"] / 2e3  # half an inner step: exchanges are further apart than that
        pd, ps = peak_link(r[1], gap), peak_link(s[1], gap)
        if ps <= 0:
            continue
        peaks.append(pd / ps)
        loss_gaps.append(final_loss(s[0]) / final_loss(r[0]) - 1)
        b_rows.append(f"| {seed(r)} | {pd / 1e6:.1f} MB | {ps / 1e6:.1f} MB | {pd / ps:.2f}× | {final_loss(r[0]):.4f} | "
                      f"{final_loss(s[0]):.4f} |")
    lines += [f"**(b) Streaming DiLoCo (F = 4, τ = 1, α = 0.5) against DiLoCo**: the most bytes the PS link carried "
              "in one exchange (its pushes and pulls; the start's pulls of the whole model, the same for both, left "
              "out), 100 MB/s link. The bandwidth that an exchange needs to be done in a given time is in proportion.", "",
              "| seed | diloco peak | streaming peak | lower by | diloco loss | streaming loss |",
              "|---|---|---|---|---|---|"] + b_rows + [""]
    if peaks:
        same_loss = statistics.mean(loss_gaps) <= 0.02  # at the same loss, or a better one
        held = statistics.mean(peaks) >= 0.9 * 4 and same_loss
        lines.append(f"Claim: peak link use about F× (4×) lower at the same loss. Ours: {spread(peaks)}× lower, the loss "
                     f"{spread([100 * g for g in loss_gaps])} % from DiLoCo's: "
                     f"{verdict(held, statistics.mean(peaks) >= 2 and same_loss)}. The fragments are whole tensors, "
                     "about equal but not exactly: the peak is the largest fragment's exchange, not a quarter of the "
                     "model's.")
        lines.append("")

    # (c) A 4x straggler: time to a target loss, with no link cost and with the link.
    for label, short, folders in [
            ("with no link cost (compute alone)", "with no link cost", ["straggler-sync", "straggler-local"]),
            ("with the 100 MB/s link of (a), (b) and (d)", "with the link", ["straggler-sync-link", "straggler-local-link"])]:
        lines += straggler_rows(label, short, sum((cells(os.path.join(out, f)) for f in folders), []))

    # (d) int4 outer gradients against fp32.
    d_rows, d_gaps = [], []
    fp32 = {seed(r): r for r in local.get("diloco", [])}
    for r in sorted(int4, key=seed):
        f = fp32.get(seed(r))
        if not f:
            continue
        gap = final_loss(r[0]) / final_loss(f[0]) - 1
        d_gaps.append(gap)
        d_rows.append(f"| {seed(r)} | {final_loss(f[0]):.4f} | {final_loss(r[0]):.4f} | {100 * gap:+.2f} % | "
                      f"{f[0]['pushed_bytes'] / r[0]['pushed_bytes']:.1f}× |")
    lines += ["**(d) DiLoCo's outer gradients in int4** (blocks of 64, a float scale each) against fp32", "",
              "| seed | fp32 loss | int4 loss | int4 − fp32 | fewer pushed bytes |", "|---|---|---|---|---|"] + d_rows + [""]
    if d_gaps:
        lines.append(f"Claim: int4 loses at most 1 % of loss. Ours: {spread([100 * g for g in d_gaps])} %: "
                     f"{verdict(statistics.mean(d_gaps) <= 0.01)}.")
        lines.append("")

    text = "\n".join(lines)
    print(text)
    with open(doc) as f:
        page = f.read()
    if BEGIN in page and END in page:
        page = page[:page.index(BEGIN) + len(BEGIN)] + "\n" + text + "\n" + page[page.index(END):]
        with open(doc, "w") as f:
            f.write(page)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
