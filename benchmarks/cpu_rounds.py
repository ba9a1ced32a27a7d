#!/usr/bin/env python3
"""Interleaved rounds of the portable CPU forward against PyTorch's CPU SDPA (issue 3).

`make bench` times ours and torch in separate passes, minutes apart; on a VM whose speed moves
10-30% between passes that is not enough to compare them. Here every round runs, per shape,
each given kokkosattn_bench_cpu binary (e.g. before and after a change) and then torch, back to
back, and records each one's time and the machine's FMA peak and load; the summary gives each
binary's best time over the rounds and the median over rounds of its per-round torch ratio.

    benchmarks/cpu_rounds.py --rounds 10 --threads 2 BIN [BIN ...] > log.txt

BIN is a kokkosattn_bench_cpu (run through scripts/in-root.sh: it links the build root's
Kokkos); run with the python of scripts/bench-venv.sh (torch). Shapes: fp32, B=4, N=8, H=64,
T=S in --t, causal 0 and 1. Ours: minimum over --reps single-iteration repetitions (a mean of
several iterations moved +-10% here); torch: best of 5 calls after a warm-up.
"""
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
IN_ROOT = os.path.join(HERE, "..", "scripts", "in-root.sh")
B, N, H = 4, 8, 64


def omp_env(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OMP_PROC_BIND="spread", OMP_PLACES="threads")
    return env


def bench_csv(binary, threads, filt, reps):
    """kokkosattn_bench_cpu's CSV rows (dicts) for a filter, single-iteration repetitions."""
    cmd = [IN_ROOT, binary, f"--benchmark_filter={filt}", "--benchmark_min_time=1x",
           f"--benchmark_repetitions={reps}", "--benchmark_format=csv"]
    out = subprocess.run(cmd, env=omp_env(threads), capture_output=True, text=True, check=True)
    return list(csv.DictReader(io.StringIO(out.stdout[out.stdout.index("name,"):])))


def ours_ms(binary, threads, t, causal, reps):
    rows = bench_csv(binary, threads, f"portable/T:{t}/causal:{causal}/", reps)
    aggregates = ("_mean", "_median", "_stddev", "_cv")
    return min(float(r["real_time"]) for r in rows if not r["name"].endswith(aggregates))


def fma_peak_gflops(binary, threads):
    return float(bench_csv(binary, threads, "fma_peak", 1)[0]["FLOPS"]) / 1e9


def torch_ms(t, causal):
    import torch
    import torch.nn.functional as F

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(B, N, t, H, generator=g) for _ in range(3))
    with torch.inference_mode():
        F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal))
            best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bins", nargs="+", help="kokkosattn_bench_cpu binaries")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--t", default="1024,2048,4096")
    ap.add_argument("--reps", default="6,4,2", help="repetitions per T (same order as --t)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    ts = [int(x) for x in args.t.split(",")]
    reps = [int(x) for x in args.reps.split(",")]
    reps += [reps[-1]] * (len(ts) - len(reps))
    names = [os.path.basename(b) for b in args.bins]
    if len(set(names)) < len(names):  # same file name in several build folders: name the folder
        names = [os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(b))))
                 for b in args.bins]
    res = {}  # (t, causal) -> list of per-round dicts name -> ms
    print(f"# torch {torch.__version__}, {args.threads} threads, fp32 B={B} N={N} H={H}",
          flush=True)
    for rnd in range(args.rounds):
        peak = fma_peak_gflops(args.bins[0], args.threads)
        print(f"round {rnd + 1}: fma_peak {peak:.1f} GFLOP/s, load {os.getloadavg()}", flush=True)
        for t, r in zip(ts, reps):
            for causal in (0, 1):
                got = {n: ours_ms(b, args.threads, t, causal, r) for n, b in zip(names, args.bins)}
                got["torch"] = torch_ms(t, causal)
                got["peak"] = peak
                res.setdefault((t, causal), []).append(got)
                print(f"  T={t} causal={causal} " +
                      " ".join(f"{n}={got[n]:.1f}" for n in names + ["torch"]), flush=True)
    print("\n| T | causal | " + " | ".join(f"{n} ms (best)" for n in names) +
          " | torch ms (best) | " +
          " | ".join(f"{n} vs torch (best / median)" for n in names) + " |")
    print("|---" * (3 + 2 * len(names)) + "|")
    for (t, causal), rounds in sorted(res.items()):
        best = {n: min(x[n] for x in rounds) for n in names + ["torch"]}
        ratio = [f"{best['torch'] / best[n]:.2f}x / "
                 f"{statistics.median(x['torch'] / x[n] for x in rounds):.2f}x" for n in names]
        print(f"| {t} | {causal} | " + " | ".join(f"{best[n]:.1f}" for n in names) +
              f" | {best['torch']:.1f} | " + " | ".join(ratio) + " |")


if __name__ == "__main__":
    sys.exit(main())
