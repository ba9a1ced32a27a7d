#!/usr/bin/env python3
"""Per FA-sweep shape, the cuda/cudnn speed ratio (cudnn ms / cuda ms, forward) in each of
several kokkosattn_bench_gpu result files, with median, min and max, as a markdown table.
Repeated one-process runs separate a margin from run-to-run noise (docs/benchmarks.md)."""
import argparse
import json
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("files", nargs="+", help="kokkosattn_bench_gpu --out files")
    ap.add_argument("--out", help="write the table here too")
    args = ap.parse_args()
    runs = [json.load(open(f))["rows"] for f in args.files]

    def fwd(r):
        return r["exp"] == "fa" and r["pass"] == "fwd" and not r.get("error") and r["ms"]

    shapes = sorted({(r["H"], r["T"], r["causal"]) for rows in runs for r in rows if fwd(r)})
    lines = [f"cuda/cudnn forward speed ratio in {len(runs)} runs (cudnn ms / cuda ms; > 1: "
             "cuda faster)", "",
             "| H | T = S | causal | ratio per run | median | min | max | cuda TFLOP/s (median) "
             "| cudnn TFLOP/s (median) |", "|---|---|---|---|---|---|---|---|---|"]
    for shape in shapes:
        ratios, ours, peer = [], [], []
        for rows in runs:
            d = {r["impl"]: r for r in rows if fwd(r) and (r["H"], r["T"], r["causal"]) == shape}
            if "cuda" in d and "cudnn" in d:
                ratios.append(d["cudnn"]["ms"] / d["cuda"]["ms"])
                ours.append(d["cuda"]["tflops"])
                peer.append(d["cudnn"]["tflops"])
        if not ratios:
            continue
        lines.append(f"| {shape[0]} | {shape[1]} | {int(shape[2])} | "
                     + " ".join(f"{x:.3f}" for x in ratios)
                     + f" | {statistics.median(ratios):.3f} | {min(ratios):.3f} | "
                       f"{max(ratios):.3f} | {statistics.median(ours):.0f} | "
                       f"{statistics.median(peer):.0f} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
