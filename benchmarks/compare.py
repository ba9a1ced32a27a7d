#!/usr/bin/env python3
"""Merges kokkosattn_bench_cpu's Google Benchmark JSON and the peers' rows into one results file
(issue 6's results schema, see docs/performance.md) and prints one side-by-side table: per T
and causal mode the naive, portable and torch-cpu times, portable's GFLOP/s and % of the
measured fp32 FMA peak, and portable's speed-up over naive and over torch-cpu (their time /
portable's time)."""
import argparse
import datetime
import json
import os
import platform
import re

B, N, H = 4, 8, 64
NAME = re.compile(r"^(?P<what>forward|peak_rss)/(?P<impl>\w+)/T:(?P<T>\d+)/causal:(?P<c>\d)")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def row(impl, t, causal, exp="seq"):
    return {"exp": exp, "impl": impl, "B": B, "T": t, "S": t, "N": N, "K": N, "H": H,
            "dtype": "f32", "causal": causal, "pass": "fwd", "ms": None, "tflops": None,
            "peak_bytes": None, "error": None}


def ours(gbench):
    """Rows, the FMA peak in FLOP/s and extra env entries from the Google Benchmark JSON."""
    rows, peak, env = [], None, {}
    ctx = gbench.get("context", {})
    for key in ("compiler", "kokkos_version", "build", "kokkos_exec_space", "threads",
                "library_version", "host_name", "date"):
        if key in ctx:
            renamed = {"library_version": "google_benchmark", "date": "bench_date"}
            env[renamed.get(key, key)] = ctx[key]
    env["cpus"] = ctx.get("num_cpus")
    for b in gbench.get("benchmarks", []):
        name = b["name"]
        if name.startswith("fma_peak/"):
            peak = b.get("FLOPS")
            env["fp32_peak_isa"] = b.get("label")
            continue
        m = NAME.match(name)
        if not m:
            continue
        t, causal = int(m["T"]), m["c"] == "1"
        if m["what"] == "peak_rss":
            if m["impl"] == "inputs":
                env["rss_inputs_only_bytes_T4096"] = b.get("peak_bytes")
                continue
            r = row(m["impl"], t, causal, exp="memory")
            r["peak_bytes"] = b.get("peak_bytes")
            if m["impl"] == "naive" and "forward_ms" in b and not b.get("error_occurred"):
                # naive is too slow to be timed by repeats at this size: the child's one run.
                timed = row("naive", t, causal)
                timed["ms"] = b["forward_ms"]
                timed["tflops"] = 4.0 * B * N * t * t * H * (0.5 if causal else 1) / (
                    b["forward_ms"] * 1e-3) / 1e12
                rows.append(timed)
                env["naive_T%d_timing" % t] = "one cold run (the peak-RSS child)"
        else:
            r = row(m["impl"], t, causal)
            assert b.get("time_unit") == "ms", b
            r["ms"] = b.get("real_time")
            r["tflops"] = b["FLOPS"] / 1e12 if "FLOPS" in b else None
        if b.get("error_occurred"):
            r["ms"] = r["tflops"] = None
            r["error"] = b.get("error_message", "error")
        rows.append(r)
    return rows, peak, env


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def table(rows, peak):
    by = {(r["impl"], r["T"], r["causal"]): r for r in rows if r["exp"] == "seq"}
    head = ["T", "causal", "naive ms", "portable ms", "torch-cpu ms", "portable GFLOP/s",
            "% of peak", "vs naive", "vs torch-cpu"]
    out = [head]
    for t in sorted({k[1] for k in by}):
        for causal in (False, True):
            p = by.get(("portable", t, causal))
            if p is None:
                continue
            n, c = by.get(("naive", t, causal)), by.get(("torch-cpu", t, causal))
            ms = lambda r: r["ms"] if r and r["ms"] else None
            gf = p["tflops"] * 1e3 if p["tflops"] else None
            ratio = lambda r: ms(r) / ms(p) if ms(r) and ms(p) else None
            out.append([str(t), "yes" if causal else "no", fmt(ms(n), ".1f"), fmt(ms(p), ".1f"),
                        fmt(ms(c), ".1f"), fmt(gf, ".1f"),
                        fmt(100 * gf * 1e9 / peak if gf and peak else None, ".0f"),
                        fmt(ratio(n), ".2f") + ("x" if ratio(n) else ""),
                        fmt(ratio(c), ".2f") + ("x" if ratio(c) else "")])
    return out


def print_aligned(cells):
    w = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for k, r in enumerate(cells):
        print("  " + "  ".join(c.rjust(w[i]) for i, c in enumerate(r)))
        if k == 0:
            print("  " + "-" * (sum(w) + 2 * (len(w) - 1)))


def markdown(cells):
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---:|" * len(cells[0])]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ours", required=True, help="kokkosattn_bench_cpu --benchmark_out JSON")
    ap.add_argument("--peers", nargs="*", default=[], help="peer JSON files (may be missing)")
    ap.add_argument("--load-before", default=None, help="/proc/loadavg before the run")
    ap.add_argument("--out", required=True, help="results JSON (report/bench.json)")
    ap.add_argument("--markdown", help="also write the table as Markdown here")
    args = ap.parse_args()

    with open(args.ours) as f:
        rows, peak, env = ours(json.load(f))
    env["cpu"] = cpu_model()
    env["platform"] = platform.platform()
    env["fp32_peak_gflops"] = peak / 1e9 if peak else None
    env["omp"] = {k: v for k, v in os.environ.items() if k.startswith("OMP_")}
    if args.load_before:
        env["loadavg_before"] = args.load_before.strip()
    with open("/proc/loadavg") as f:
        env["loadavg_after"] = f.read().strip()
    for path in args.peers:
        if not os.path.exists(path):
            env.setdefault("peers_missing", []).append(path)
            continue
        with open(path) as f:
            peer = json.load(f)
        env.update(peer.get("env", {}))
        rows += peer.get("rows", [])

    run_id = "cpu-" + datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"run_id": run_id, "env": env, "rows": rows}, f, indent=1)

    cells = table(rows, peak)
    print(f"\n{run_id}: {env['cpu']}, {env.get('threads')} threads, {env.get('compiler')}, "
          f"Kokkos {env.get('kokkos_version')}; fp32 FMA peak "
          f"{fmt(env['fp32_peak_gflops'], '.1f')} GFLOP/s ({env.get('fp32_peak_isa')})")
    print("forward, fp32, B=4 N=8 H=64, T=S; 'vs X' = X's time / portable's time\n")
    print_aligned(cells)
    mem = [r for r in rows if r["exp"] == "memory" and r["peak_bytes"]]
    if mem:
        base = env.get("rss_inputs_only_bytes_T4096")
        extra = lambda r: f" (+{(r['peak_bytes'] - base) / 2**20:.0f})" if base else ""
        print("\n  peak RSS at T=4096 (fresh process each" +
              (f"; inputs alone {base / 2**20:.0f} MiB" if base else "") + "): " +
              ", ".join(f"{r['impl']} {r['peak_bytes'] / 2**20:.0f} MiB{extra(r)}" for r in mem))
    for e in (r for r in rows if r["error"]):
        print(f"  error: {e['impl']} T={e['T']} causal={e['causal']}: {e['error']}")
    print(f"\nwrote {args.out}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(cells))


if __name__ == "__main__":
    main()
