#!/usr/bin/env python3
"""The table of scripts/bench-layouts.sh: per shape, each of our four ways (front end on
LayoutRight / LayoutLeft Views, a Plan of the LayoutLeft ones, the raw-pointer path) with the
backend that ran, ms, TFLOP/s and the ratio to the LayoutRight front end, then torch's rows of
the same shape. Reads the results-schema JSON files named on the command line."""
import json
import sys


def key(r):
    return (r["exp"], r["B"], r["T"], r["N"], r["H"], bool(r["causal"]))


def main(paths):
    rows = []
    for p in paths:
        try:
            with open(p) as f:
                rows += [r for r in json.load(f)["rows"] if r.get("pass", "fwd") == "fwd"]
        except (OSError, ValueError, KeyError) as e:
            print(f"layout_table: skipping {p}: {e}", file=sys.stderr)
    ours = [r for r in rows if r["impl"].startswith("ours-")]
    print("| shape | causal | impl | backend | copies | ms | TFLOP/s | vs LayoutRight |")
    print("|---|---|---|---|---|---|---|---|")
    for k in dict.fromkeys(key(r) for r in ours):
        same = [r for r in rows if key(r) == k]
        base = next((r["ms"] for r in same if r["impl"] == "ours-frontend-right" and r["ms"]), None)
        for r in same:
            ms, tf = r.get("ms"), r.get("tflops")
            ratio = f"{ms / base:.3f}x" if ms and base else ""
            print(f"| {k[0]} B{k[1]} T{k[2]} N{k[3]} H{k[4]} | {'yes' if k[5] else 'no'} | "
                  f"{r['impl']} | {r.get('backend', '')} | "
                  f"{'yes' if r.get('layout_copies') else ''} | "
                  f"{ms:.4f} | {tf:.1f} | {ratio} |" if ms else
                  f"| {k[0]} B{k[1]} T{k[2]} N{k[3]} H{k[4]} | {'yes' if k[5] else 'no'} | "
                  f"{r['impl']} | | | error: {r.get('error')} | | |")


if __name__ == "__main__":
    main(sys.argv[1:])
