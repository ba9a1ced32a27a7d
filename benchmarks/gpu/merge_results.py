#!/usr/bin/env python3
"""Merges result files of kokkosattn_bench_gpu and benchmarks/peers.py (results schema, see
docs/performance.md) into one {"run_id", "env", "rows"} file, adds the GPU and driver from
nvidia-smi, and writes a markdown table: per shape and pass, our cudnn backend (and cuda, when
it ran) beside torch-cudnn, torch-flash and jax-cudnn, and our overhead over torch-cudnn in %
and in microseconds; decode rows (kokkosattn_bench_decode, peers_decode.py) get their own table
(decode_table.py)."""
import argparse
import json
import subprocess

from decode_table import decode_table


def nvidia_smi():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20).stdout.strip().splitlines()
        name, driver, mem = [x.strip() for x in out[0].split(",")]
        return {"nvidia_smi_gpu": name, "driver": driver, "gpu_memory": mem}
    except Exception as e:  # the table matters more than this line
        return {"nvidia_smi_error": str(e)}


def key(r):
    return (r["exp"], r["B"], r["T"], r["N"], r["H"], r["causal"], r["pass"])


def fmt_ms(r):
    if r is None:
        return "-"
    if r.get("error"):
        return "n/a"
    if r["exp"] == "overhead" or r["ms"] < 0.1:
        return f"{r['ms'] * 1e3:.1f} us"
    tf = f" ({r['tflops']:.0f})" if r.get("tflops") else ""
    return f"{r['ms']:.3f}{tf}"


def table(rows):
    rows = [r for r in rows if r["exp"] != "decode"]  # decode rows: decode_table.py's table
    if not rows:
        return ""
    by = {}
    for r in rows:
        by.setdefault(key(r), {})[r["impl"]] = r
    impls = [i for i in ("cudnn", "cuda", "torch-cudnn", "torch-flash", "torch-efficient",
                         "jax-cudnn", "jax-xla") if any(i in v for v in by.values())]
    head = ["exp", "B", "T", "N", "H", "causal", "pass"] + impls + ["cudnn vs torch-cudnn"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    order = {"fa": 0, "codelab": 1, "overhead": 2}
    for k in sorted(by, key=lambda k: (order.get(k[0], 9), k[4], k[6], k[5], k[2])):
        v = by[k]
        cells = [k[0], str(k[1]), str(k[2]), str(k[3]), str(k[4]), "yes" if k[5] else "no", k[6]]
        cells += [fmt_ms(v.get(i)) for i in impls]
        ours, peer = v.get("cudnn"), v.get("torch-cudnn")
        if ours and peer and not ours.get("error") and not peer.get("error"):
            d = ours["ms"] - peer["ms"]
            cells.append(f"{100 * d / peer['ms']:+.1f}% ({d * 1e3:+.1f} us)")
        else:
            cells.append("-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--run-id", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    env, rows = nvidia_smi(), []
    for path in args.inputs:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            env[f"missing_{path.rsplit('/', 1)[-1]}"] = str(e)
            continue
        env.update(doc.get("env", {}))
        rows += doc.get("rows", [])
    with open(args.out, "w") as f:
        json.dump({"run_id": args.run_id, "env": env, "rows": rows}, f, indent=1)
    md, dec = table(rows), decode_table(rows)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"run_id {args.run_id}" + (f"; ms (TFLOP/s)\n\n{md}" if md else "\n") +
                    (f"\n{dec}" if dec else ""))
    md += dec
    print(md)


if __name__ == "__main__":
    main()
