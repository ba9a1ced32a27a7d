#!/usr/bin/env python3
"""PyTorch's CPU SDPA on the shapes of kokkosattn_bench_cpu (issue 3): fp32, B=4, N=8, H=64,
T=S in 256..4096, causal or not, with the same thread count. Writes rows of the results schema
(issue 6; see docs/performance.md) with impl "torch-cpu" as {"env": {...}, "rows": [...]}.

torch takes [B, N, T, H]; ours is [B, T, N, H]. The inputs are made in torch's layout (what a
torch user passes), so the layout change is not timed."""
import argparse
import json
import statistics
import time

B, N, H = 4, 8, 64
T_VALUES = (256, 512, 1024, 2048, 4096)


def flops(t, s, causal):
    return 4.0 * B * N * t * s * H * (0.5 if causal else 1.0)


def time_ms(fn, min_time_s, min_reps=3):
    """Median of repeats after one warm-up: at least min_reps runs unless one run alone is
    longer than the budget, and at least min_time_s seconds in all."""
    fn()
    times = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
        elapsed = time.perf_counter() - start
        if elapsed >= min_time_s and (len(times) >= min_reps or times[-1] >= 1e3 * min_time_s):
            return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per shape")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    rows = []
    for t in T_VALUES:
        q, k, v = (torch.randn(B, N, t, H, dtype=torch.float32) for _ in range(3))
        for causal in (False, True):
            row = {"exp": "seq", "impl": "torch-cpu", "B": B, "T": t, "S": t, "N": N, "K": N,
                   "H": H, "dtype": "f32", "causal": causal, "pass": "fwd", "ms": None,
                   "tflops": None, "peak_bytes": None, "error": None}
            try:
                with torch.inference_mode():
                    ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                 args.min_time)
                row["ms"] = ms
                row["tflops"] = flops(t, t, causal) / (ms * 1e-3) / 1e12
            except Exception as e:  # a peer's failure is a row, not a crash
                row["error"] = f"{type(e).__name__}: {e}"
            rows.append(row)
            print(f"torch-cpu T={t} causal={int(causal)}: {row['ms']} ms", flush=True)
    env = {"torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
           "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}
    with open(args.out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
