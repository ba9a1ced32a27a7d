#!/usr/bin/env python3
"""Merges results files and prints them side by side, with each of our backends' ratio to the
best peer of the same run.

    compare.py FILE... [--out merged.json] [--markdown table.md]
    compare.py --ours GBENCH.json --peers PEER.json... --out report/bench.json   (make bench)

Each FILE is a results-schema file (docs/benchmarks.md: {"run_id", "env", "rows"}; the demo's
report/results.json, benchmarks/peers*.py output, an earlier merged file) or a Google
Benchmark JSON of kokkosattn_bench_cpu (converted to schema rows). The table has one line per
(exp, shape, dtype, causal, pass), one column per impl (ms; peak MiB for `memory` rows) and,
for every one of our backends, "vs best peer" = best peer's value / ours (> 1: ours faster or
smaller). Peers are the impls named torch-* or jax-*. With a kokkosattn_bench_cpu input it also
prints issue 3's CPU table (portable vs naive and torch-cpu, % of the measured FMA peak)."""
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


PEER_PREFIXES = ("torch-", "jax-")
OUR_ORDER = ["reference", "naive", "portable", "cudnn", "cuda", "hip"]
KEY = ("exp", "B", "T", "S", "N", "K", "H", "dtype", "causal", "pass")


def is_peer(impl):
    return impl.startswith(PEER_PREFIXES)


def value(r):
    """What the side-by-side table compares: ms, or peak MiB for memory rows."""
    if r["exp"] == "memory":
        return r["peak_bytes"] / 2**20 if r.get("peak_bytes") else None
    return r.get("ms")


def side_by_side(rows):
    """Cells of the generic table: per (exp, shape) the impls' values and ours vs best peer."""
    rows = [r for r in rows if r.get("impl") != "inputs-only"]
    impls = sorted({r["impl"] for r in rows},
                   key=lambda i: (is_peer(i), OUR_ORDER.index(i) if i in OUR_ORDER else 99, i))
    ours = [i for i in impls if not is_peer(i)]
    peers = [i for i in impls if is_peer(i)]
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r.get(k) for k in KEY), {})[r["impl"]] = r
    head = ["exp", "B", "T", "S", "N", "K", "H", "dtype", "causal", "pass"] + impls
    if peers:
        head += ["best peer"] + [f"{o} vs best peer" for o in ours]
    cells = [head]
    order = lambda k: tuple("" if x is None else (x if isinstance(x, str) else f"{x:>12}")
                            for x in k)
    for key in sorted(groups, key=order):
        g = groups[key]
        vals = {i: value(g[i]) if i in g else None for i in impls}
        line = [str(x) if not isinstance(x, bool) else ("yes" if x else "no") for x in key]
        line[0] += " (MiB)" if key[0] == "memory" else ""
        line += [fmt(vals[i], ".3f" if (vals[i] or 0) < 10 else ".1f") if i in g and vals[i]
                 else ("skip" if i in g and (g[i].get("error") or "").startswith("skipped")
                       else ("n/a" if i in g else "")) for i in impls]
        if peers:
            best = min((vals[p], p) for p in peers if vals.get(p)) if any(
                vals.get(p) for p in peers) else None
            line.append(best[1] if best else "-")
            line += [fmt(best[0] / vals[o], ".2f") + "x" if best and vals.get(o) else "-"
                     for o in ours]
        cells.append(line)
    # Columns with nothing measured (e.g. GPU backends in a CPU run, refused everywhere) go.
    keep = [c for c in range(len(head))
            if c < len(KEY) or any(row[c] not in ("", "n/a", "-") for row in cells[1:])]
    return [[row[c] for c in keep] for row in cells]


def load(path):
    """(rows, env, peak FLOP/s or None, cpu_table_wanted) of one input file."""
    with open(path) as f:
        data = json.load(f)
    if "benchmarks" in data:  # Google Benchmark output of kokkosattn_bench_cpu
        rows, peak, env = ours(data)
        return rows, env, peak, True
    if "rows" not in data:
        raise SystemExit(f"compare.py: {path}: neither a results-schema file nor Google Benchmark "
                         "JSON")
    env = dict(data.get("env", {}))
    if data.get("run_id"):
        env.setdefault("run_ids", [])
        env["run_ids"] = env["run_ids"] + [data["run_id"]]
    return data["rows"], env, None, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", help="results-schema or Google Benchmark JSON files")
    ap.add_argument("--ours", help="kokkosattn_bench_cpu --benchmark_out JSON (or a schema file)")
    ap.add_argument("--peers", nargs="*", default=[], help="peer JSON files (may be missing)")
    ap.add_argument("--load-before", default=None, help="/proc/loadavg before the run")
    ap.add_argument("--out", help="write the merged rows here (results schema)")
    ap.add_argument("--markdown", help="also write the table(s) as Markdown here")
    args = ap.parse_args()

    rows, env, peak, cpu_table = [], {}, None, False
    inputs = ([args.ours] if args.ours else []) + args.files
    if not inputs:
        ap.error("no input files")
    for path in inputs:
        r, e, p, c = load(path)
        rows += r
        run_ids = env.get("run_ids", []) + e.pop("run_ids", [])
        env.update(e)
        if run_ids:
            env["run_ids"] = run_ids
        peak = peak or p
        cpu_table = cpu_table or c
    if cpu_table:
        env["cpu"] = cpu_model()
        env["platform"] = platform.platform()
        env["fp32_peak_gflops"] = peak / 1e9 if peak else None
        env["omp"] = {k: v for k, v in os.environ.items() if k.startswith("OMP_")}
        with open("/proc/loadavg") as f:
            env["loadavg_after"] = f.read().strip()
    if args.load_before:
        env["loadavg_before"] = args.load_before.strip()
    for path in args.peers:
        if not os.path.exists(path):
            env.setdefault("peers_missing", []).append(path)
            continue
        r, e, _, _ = load(path)
        e.pop("run_ids", None)
        env.update(e)
        rows += r

    run_id = ("cpu-" if cpu_table else "compare-") + datetime.datetime.now(
        datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"run_id": run_id, "env": env, "rows": rows}, f, indent=1)

    md = []
    if cpu_table:
        cells = table(rows, peak)
        print(f"\n{run_id}: {env['cpu']}, {env.get('threads')} threads, {env.get('compiler')}, "
              f"Kokkos {env.get('kokkos_version')}; fp32 FMA peak "
              f"{fmt(env['fp32_peak_gflops'], '.1f')} GFLOP/s ({env.get('fp32_peak_isa')})")
        print("forward, fp32, B=4 N=8 H=64, T=S; 'vs X' = X's time / portable's time\n")
        print_aligned(cells)
        md.append(markdown(cells))
        mem = [r for r in rows if r["exp"] == "memory" and r["peak_bytes"]
               and r["impl"] in ("naive", "portable")]
        if mem:
            base = env.get("rss_inputs_only_bytes_T4096")
            extra = lambda r: f" (+{(r['peak_bytes'] - base) / 2**20:.0f})" if base else ""
            print("\n  peak RSS at T=4096 (fresh process each" +
                  (f"; inputs alone {base / 2**20:.0f} MiB" if base else "") + "): " +
                  ", ".join(f"{r['impl']} {r['peak_bytes'] / 2**20:.0f} MiB{extra(r)}"
                            for r in mem))
    generic = side_by_side(rows)
    print("\nall rows side by side: ms (memory: peak MiB); 'X vs best peer' = the best peer's "
          "value / X's (> 1: X faster or smaller)\n")
    print_aligned(generic)
    md.append(markdown(generic))
    for e in (r for r in rows if r.get("error") and not r["error"].startswith("skipped")):
        print(f"  error: {e['exp']} {e['impl']} T={e['T']} causal={e['causal']}: {e['error']}")
    if args.out:
        print(f"\nwrote {args.out}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(md))


if __name__ == "__main__":
    main()
