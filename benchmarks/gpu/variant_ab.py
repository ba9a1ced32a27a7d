#!/usr/bin/env python3
"""Markdown table of an interleaved A/B of library variants (scripts/variant-lib.sh): per shape and
pass, each variant's TFLOP/s in each round and the ratio of its mean to the base's (> 1: the
variant is faster). Input: kokkosattn_bench_gpu --out files named NAME_ROUND.json (e.g.
main_1.json, exp2_1.json, exp2_2.json, main_2.json from an ABBA loop).

    python3 benchmarks/gpu/variant_ab.py DIR --base main [--out table.md]
"""
import argparse
import collections
import glob
import json
import os
import statistics


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", help="folder of NAME_ROUND.json files")
    ap.add_argument("--base", required=True, help="the variant the others are divided by")
    ap.add_argument("--out", help="write the table here too")
    a = ap.parse_args()
    # {(H, T, causal, pass): {name: [tflops per round]}}
    cells = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(glob.glob(os.path.join(a.dir, "*_*.json"))):
        name = os.path.basename(path).rsplit("_", 1)[0]
        for r in json.load(open(path))["rows"]:
            if r.get("error") or not r.get("tflops"):
                continue
            cells[(r["H"], r["T"], r["causal"], r["pass"])][name].append(r["tflops"])
    names = sorted({n for row in cells.values() for n in row if n != a.base})
    if not cells or not any(a.base in row for row in cells.values()):
        raise SystemExit(f"variant_ab: no rows of the base '{a.base}' in {a.dir}")
    head = (f"| H | T | causal | pass | {a.base} TFLOP/s | "
            + " | ".join(f"{n} TFLOP/s | {n} / {a.base}" for n in names) + " |")
    lines = [head, "|" + "---|" * (5 + 2 * len(names))]
    for key in sorted(cells):
        row = cells[key]
        if a.base not in row:
            continue
        base = statistics.mean(row[a.base])
        out = [str(key[0]), str(key[1]), "yes" if key[2] else "no", key[3],
               " / ".join(f"{x:.1f}" for x in row[a.base])]
        for n in names:
            if row.get(n):
                out += [" / ".join(f"{x:.1f}" for x in row[n]),
                        f"{statistics.mean(row[n]) / base:.3f}"]
            else:
                out += ["--", "--"]
        lines.append("| " + " | ".join(out) + " |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
