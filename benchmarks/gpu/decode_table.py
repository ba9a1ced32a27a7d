#!/usr/bin/env python3
"""The markdown table of issue 25's decode rows (exp "decode": kokkosattn_bench_decode and
benchmarks/peers_decode.py): per shape and page size, our cuda backend's GB/s and its fraction
of the copy bandwidth measured in the same process, each peer's GB/s (our cudnn backend, torch
SDPA on the gathered cache, FlashInfer, FlashAttention) and cuda over the best peer.
torch-sdpa-gathered runs on the contiguous cache only: its page_size 0 row is the peer of every
page size of that shape. merge_results.py appends this table; alone: decode_table.py MERGED.json."""
import json
import sys

COLUMNS = ("cudnn", "auto", "torch-sdpa-gathered", "flashinfer", "flash-attn")
GATHERED = "torch-sdpa-gathered"
# auto is ours: a column, not one of the peers cuda is compared with


def cell(r):
    if r is None:
        return "-"
    if r.get("status", "ok") != "ok":
        s = r["status"]
        return "skip" if s.startswith("skipped") else "n/a" if s.startswith(
            ("unsupported", "unavailable")) else s.split(":")[0]
    return f"{r['gbps']:.0f}"


def decode_table(rows):
    rows = [r for r in rows if r.get("exp") == "decode"]
    if not rows:
        return ""
    by = {}
    for r in rows:
        by.setdefault((r["B"], r["T"], r["S"], r["N"], r["K"], r["H"], r["page_size"]),
                      {})[r["impl"]] = r
    peers = [p for p in COLUMNS if any(p in v for v in by.values())]
    head = ["B", "T", "S", "K", "page", "cuda GB/s", "cuda / copy bw"] + \
        [f"{p} GB/s" for p in peers] + ["cuda / best peer"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in sorted(by, key=lambda k: (k[0], k[2], -k[4], k[1], k[6] or 1 << 30)):
        v = dict(by[key])
        if GATHERED not in v:  # the gathered cache's row, measured once per shape
            v[GATHERED] = by.get(key[:6] + (0,), {}).get(GATHERED)
        ours = v.get("cuda")
        ok = ours is not None and ours.get("status") == "ok"
        cells = [str(key[0]), str(key[1]), str(key[2]), str(key[4]), str(key[6] or "contig"),
                 cell(ours), f"{ours['frac_copy_bw']:.2f}" if ok else "-"]
        cells += [cell(v.get(p)) for p in peers]
        best = max((v[p]["gbps"] for p in peers if p != "auto" and v.get(p) and
                    v[p].get("status") == "ok"), default=None)
        cells.append(f"{ours['gbps'] / best:.2f}x" if ok and best else "-")
        lines.append("| " + " | ".join(cells) + " |")
    n, h = rows[0]["N"], rows[0]["H"]
    bws = sorted({round(r["copy_bw_gbps"]) for r in rows if r.get("copy_bw_gbps")})
    return (f"decode, bf16, N = {n}, H = {h}, causal bottom-right; GB/s = (K and V read once + "
            f"q and out) / time; copy bandwidth (read + write) measured per process: "
            f"{', '.join(map(str, bws))} GB/s; n/a = refused or not importable\n\n" +
            "\n".join(lines) + "\n")


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(decode_table(json.load(f)["rows"]), end="")
