#!/usr/bin/env python3
"""Summarise per-tile timestamps written by `kokkosattn_sm90_config_ab --trace DIR`.

Each file holds uint64 words [grid][rounds][warpgroups][6]: global-timer ns at tile start, Q
arrived, last P V landed, output stored; the tile's key blocks; (batch, head, m_block). Prints,
per file, where the kernel's time went on average per CTA (ns and share of the kernel span):
waiting for Q, the mainloop, the epilogue, gaps between tiles, and idle time at the end of the
kernel (CTAs that finished before the last one).

usage: sm90_trace_summary.py FILE.bin [...] [--warpgroups W] [--rounds R]
"""
import argparse
import array
import statistics
import sys

WORDS = 6


def load(path, rounds, wgs):
    a = array.array("Q")
    with open(path, "rb") as f:
        a.frombytes(f.read())
    per_cta = rounds * wgs * WORDS
    grid = len(a) // per_cta
    ctas = []
    for c in range(grid):
        tiles = []  # (round, wg, start, q, done, stored, n_iter)
        for r in range(rounds):
            for w in range(wgs):
                o = ((c * rounds + r) * wgs + w) * WORDS
                if a[o] != 0:
                    tiles.append((r, w, a[o], a[o + 1], a[o + 2], a[o + 3], a[o + 4]))
        ctas.append(tiles)
    return ctas


def summarise(path, rounds, wgs):
    ctas = [t for t in load(path, rounds, wgs) if t]
    t0 = min(x[2] for t in ctas for x in t)
    t1 = max(x[5] for t in ctas for x in t)
    span = t1 - t0
    rows = {"q wait": [], "mainloop": [], "epilogue": [], "between tiles": [], "end idle": [],
            "start skew": []}
    blocks, per_block = 0, []
    for tiles in ctas:
        for w in range(wgs):
            mine = sorted((x for x in tiles if x[1] == w), key=lambda x: x[0])
            if not mine:
                continue
            rows["start skew"].append(mine[0][2] - t0)
            rows["q wait"].append(sum(x[3] - x[2] for x in mine))
            rows["mainloop"].append(sum(x[4] - x[3] for x in mine))
            rows["epilogue"].append(sum(x[5] - x[4] for x in mine))
            rows["between tiles"].append(sum(b[2] - a[5] for a, b in zip(mine, mine[1:])))
            rows["end idle"].append(t1 - mine[-1][5])
            for x in mine:
                if x[6] > 0:
                    per_block.append((x[4] - x[3]) / x[6])
            blocks += sum(x[6] for x in mine)
    print(f"{path}: {len(ctas)} CTAs, kernel span {span / 1e3:.1f} us, "
          f"{blocks // wgs} key blocks per warpgroup slot in all")
    print(f"  {'per CTA warpgroup':<16} {'mean us':>9} {'share':>7} {'min us':>8} {'max us':>8}")
    for name, v in rows.items():
        m = statistics.mean(v)
        print(f"  {name:<16} {m / 1e3:9.2f} {m / span:7.1%} {min(v) / 1e3:8.2f} {max(v) / 1e3:8.2f}")
    pb = sorted(per_block)
    print(f"  mainloop per key block: median {pb[len(pb) // 2]:.0f} ns, "
          f"p10 {pb[len(pb) // 10]:.0f}, p90 {pb[9 * len(pb) // 10]:.0f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--warpgroups", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=256)
    args = ap.parse_args()
    for f in args.files:
        summarise(f, args.rounds, args.warpgroups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
