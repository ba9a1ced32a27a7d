#!/usr/bin/env python3
"""Reads the sm90 backward's phase marks (cuda/sm90/bwd_trace.cuh: a trace build,
-DKokkosAttn_CUDA_SM90_BWD_TRACE=ON, run with KATTN_BWD_TRACE=FILE) and prints, per consumer
warpgroup, the median cycles of each phase and of a whole step, and how far the second warpgroup
runs behind the first at each mark; where the trace has the producer's row (since 2026-12-07),
when it issued each step's Q and dO against the consumers' step start and their "loaded" mark;
--plot draws a few steps of one CTA as a timeline.

    scripts/bwd-trace.py trace.bin [--skip 2] [--plot timeline.png --cta 0 --steps 8:12]
"""
import argparse
import statistics
import struct

MARKS = ["start", "loaded", "scores", "dv issued", "ds stored", "own dq issued",
         "other rows", "dq ready", "reduced", "dk ready"]
# The producer's row (bwd_trace.cuh BwdProducerMark): its first three slots.
PRODUCER_WAIT, PRODUCER_Q, PRODUCER_DO = 0, 1, 2


def read(path):
    with open(path, "rb") as f:
        header = f.readline().split()
        ctas, wgs, steps, marks, head_dim = (int(x) for x in header)
        data = f.read()
    values = struct.unpack(f"<{ctas * wgs * steps * marks}Q", data)
    trace = [[[list(values[((c * wgs + w) * steps + s) * marks:][:marks]) for s in range(steps)]
              for w in range(wgs)] for c in range(ctas)]
    return trace, head_dim


def phases(trace, skip):
    """Median cycles from each reached mark to the next reached one, per warpgroup; step length."""
    out = {}
    for w in range(min(2, len(trace[0]))):
        spans, steps = {}, []
        for cta in trace:
            rows = cta[w]
            for s, row in enumerate(rows):
                if s < skip or row[0] == 0:
                    continue
                reached = [(m, t) for m, t in enumerate(row) if t]
                for (m0, t0), (m1, t1) in zip(reached, reached[1:]):
                    spans.setdefault((m0, m1), []).append(t1 - t0)
                if s + 1 < len(rows) and rows[s + 1][0]:
                    steps.append(rows[s + 1][0] - row[0])
        out[w] = ({k: statistics.median(v) for k, v in spans.items()},
                  statistics.median(steps) if steps else 0)
    return out


def lags(trace, skip):
    """Median of (warpgroup 1's mark - warpgroup 0's) per mark, same CTA and step."""
    res = {}
    for m in range(len(MARKS)):
        d = [cta[1][s][m] - cta[0][s][m] for cta in trace for s in range(skip, len(cta[0]))
             if cta[0][s][m] and cta[1][s][m]]
        if d:
            res[m] = statistics.median(d)
    return res


def producer(trace, skip):
    """Medians per step, in cycles: the producer's wait for the Q buffer, and its issue of Q and
    dO before warpgroup 0's step start (positive: ahead) and before each warpgroup's "loaded"."""
    rows = {"waits for the Q buffer": [], "Q issued before wg 0's start": [],
            "dO issued before wg 0's start": [], "dO issued -> wg 0 loaded": [],
            "dO issued -> wg 1 loaded": []}
    for cta in trace:
        for s in range(skip, len(cta[2])):
            p, w0, w1 = cta[2][s], cta[0][s], cta[1][s]
            if not (p[PRODUCER_WAIT] and p[PRODUCER_Q] and p[PRODUCER_DO] and w0[0] and w1[1]):
                continue
            rows["waits for the Q buffer"].append(p[PRODUCER_Q] - p[PRODUCER_WAIT])
            rows["Q issued before wg 0's start"].append(w0[0] - p[PRODUCER_Q])
            rows["dO issued before wg 0's start"].append(w0[0] - p[PRODUCER_DO])
            rows["dO issued -> wg 0 loaded"].append(w0[1] - p[PRODUCER_DO])
            rows["dO issued -> wg 1 loaded"].append(w1[1] - p[PRODUCER_DO])
    return {k: statistics.median(v) for k, v in rows.items() if v}


def plot(trace, cta, first, last, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(12, 2.5))
    rows = trace[cta]
    t0 = rows[0][first][0]
    colors = plt.get_cmap("tab10")
    for w, wg in enumerate(rows[:2]):
        for s in range(first, last):
            reached = [(m, t) for m, t in enumerate(wg[s]) if t]
            for (m0, a), (_, b) in zip(reached, reached[1:]):
                ax.barh(w, b - a, left=a - t0, color=colors(m0), edgecolor="none")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors(m)) for m in range(len(MARKS) - 1)]
    ax.legend(handles, [f"{MARKS[m]} ->" for m in range(len(MARKS) - 1)], ncol=5, fontsize=7,
              loc="upper center", bbox_to_anchor=(0.5, -0.25))
    ax.set_yticks([0, 1], ["warpgroup 0", "warpgroup 1"])
    ax.set_xlabel(f"cycles from step {first} of CTA {cta}")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--skip", type=int, default=2, help="first steps left out (warm-up)")
    ap.add_argument("--plot")
    ap.add_argument("--cta", type=int, default=0)
    ap.add_argument("--steps", default="8:12")
    a = ap.parse_args()
    trace, head_dim = read(a.trace)
    print(f"head dim {head_dim}, {len(trace)} CTAs, medians in cycles (steps >= {a.skip})")
    for w, (spans, step) in phases(trace, a.skip).items():
        print(f"warpgroup {w}: step {step:.0f}")
        for (m0, m1), v in sorted(spans.items()):
            print(f"  {MARKS[m0]:>14} -> {MARKS[m1]:<14} {v:8.0f}")
    print("warpgroup 1 behind warpgroup 0:")
    for m, v in lags(trace, a.skip).items():
        print(f"  {MARKS[m]:>14} {v:8.0f}")
    if len(trace[0]) > 2:
        print("producer:")
        for k, v in producer(trace, a.skip).items():
            print(f"  {k:>30} {v:8.0f}")
    if a.plot:
        first, last = (int(x) for x in a.steps.split(":"))
        plot(trace, a.cta, first, last, a.plot)


if __name__ == "__main__":
    main()
