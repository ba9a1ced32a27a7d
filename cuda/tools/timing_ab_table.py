#!/usr/bin/env python3
"""Markdown table of an interleaved A/B of two kokkosattn_cuda_timing builds: per FA-sweep shape,
the B/A time ratio of each round (B ms / A ms: < 1 means B is faster), its median, min and max,
and both builds' median TFLOP/s. Input: the runs' stdout, named A1.txt, B1.txt, A2.txt, ...
(e.g. before1.txt / after1.txt with --a before --b after)."""
import argparse
import glob
import os
import re
import statistics


def parse(path):
    """{(H, T, causal): (kernel, ms, tflops, host_us)} from one timing run's output (host_us is
    None for outputs of the tool before it printed that column)."""
    rows = {}
    for line in open(path):
        f = line.split()
        if len(f) in (8, 9) and not line.startswith("#") and f[1].isdigit():
            kernel, _b, t, _n, h, caus, ms, tf = f[:8]
            host = float(f[8]) if len(f) == 9 else None
            rows[(int(h), int(t), caus == "1")] = (kernel, float(ms), float(tf), host)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("dir")
    ap.add_argument("--a", default="before")
    ap.add_argument("--b", default="after")
    args = ap.parse_args()

    def runs(name):
        files = sorted(glob.glob(os.path.join(args.dir, f"{name}[0-9]*.txt")),
                       key=lambda p: int(re.findall(r"(\d+)\.txt$", p)[0]))
        return [parse(p) for p in files]

    ra, rb = runs(args.a), runs(args.b)
    assert ra and len(ra) == len(rb), "expected as many A runs as B runs"
    shapes = sorted(set(ra[0]) & set(rb[0]))
    print(f"{args.b} ms / {args.a} ms per round ({len(ra)} rounds; < 1: {args.b} faster)\n")
    print(f"| kernel ({args.b}) | H | T = S | causal | ratio per round | median | min | max "
          f"| {args.a} TFLOP/s | {args.b} TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    all_ratios = []
    for s in shapes:
        ratios = [b[s][1] / a[s][1] for a, b in zip(ra, rb) if s in a and s in b]
        all_ratios += ratios
        ta = statistics.median(a[s][2] for a in ra if s in a)
        tb = statistics.median(b[s][2] for b in rb if s in b)
        print(f"| {rb[0][s][0]} | {s[0]} | {s[1]} | {'yes' if s[2] else 'no'} | "
              + " ".join(f"{r:.3f}" for r in ratios)
              + f" | {statistics.median(ratios):.3f} | {min(ratios):.3f} | {max(ratios):.3f} "
              f"| {ta:.1f} | {tb:.1f} |")
    print(f"\nAll shapes and rounds: median {statistics.median(all_ratios):.3f}, "
          f"min {min(all_ratios):.3f}, max {max(all_ratios):.3f}")
    hosts = [(a[s][3], b[s][3]) for a, b in zip(ra, rb) for s in shapes
             if s in a and s in b and a[s][3] is not None and b[s][3] is not None]
    if hosts:
        print(f"Host cost per call (host_us), median over shapes and rounds: "
              f"{args.a} {statistics.median(h[0] for h in hosts):.1f} us, "
              f"{args.b} {statistics.median(h[1] for h in hosts):.1f} us")


if __name__ == "__main__":
    main()
