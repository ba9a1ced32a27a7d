#!/usr/bin/env python3
"""Peer implementations on the shapes of kokkosattn_bench_gpu (and, with --device cpu, of
kokkosattn_bench_cpu), written as rows of the results schema (docs/performance.md):
{"env": {...}, "rows": [{"exp", "impl", "B", "T", "S", "N", "K", "H", "dtype", "causal",
"pass", "ms", "tflops", "peak_bytes", "error"}]}.

GPU peers (--family torch | jax; run them in separate processes: JAX reserves GPU memory):
  torch-flash, torch-cudnn, torch-efficient, torch-math  PyTorch SDPA with that backend forced
                                                          (torch.nn.attention.sdpa_kernel);
  jax-xla, jax-cudnn                                     jax.nn.dot_product_attention with that
                                                          implementation.
Shapes: "fa" (16k tokens, hidden 2048, H 64/128, T 512..16k, causal or not), "codelab"
(B4 T128 N8 H64), "seq" and "batch" (the codelab demo's sweeps: B4 N8 H64 T 64..2048; T256
B 1..16; not causal), each forward ("fwd") and forward+backward ("fwd+bwd", gradients of q, k, v
from a given dout), bf16 unless --dtype says f16/f32/f64; "overhead": the codelab shape, many back-to-back calls timed on the
host, divided by their count. Inputs are made [B, T, N, H] (our layout) and handed to torch as
the [B, N, T, H] view, so both sides read the same memory layout; several input sets rotate so
that L2 never holds a call's inputs. torch: CUDA events per call, median after warm-up; JAX:
host clock over back-to-back calls (its dispatch is asynchronous), median of 5 batches.
f32: torch keeps its defaults (torch.backends.cuda.matmul.allow_tf32, recorded in env: off, so
exact fp32), JAX runs with jax_default_matmul_precision "highest" (exact fp32; its default may
use TF32 on this GPU), recorded in env. --tf32 permits TF32 instead (torch's allow_tf32 for
matmul and cuDNN, JAX precision "tensorfloat32"; rows name the impl "<impl>-tf32"), the peers
of our options.allow_tf32.
TFLOP/s counts 4 B N T S H, halved for causal, x3.5 for fwd+bwd.

CPU peer (--device cpu): torch-cpu, fp32, B=4 N=8 H=64, T 256..4096 ("exp": "seq"), what
benchmarks/peers_cpu.py did (it now calls this)."""
import argparse
import json
import math
import os
import statistics
import sys
import time

FA_T = (512, 1024, 2048, 4096, 8192, 16384)
TORCH_IMPLS = ("torch-flash", "torch-cudnn", "torch-efficient", "torch-math")
JAX_IMPLS = ("jax-xla", "jax-cudnn")


def flops(b, n, t, s, h, causal, bwd):
    f = 4.0 * b * n * t * s * h * (0.5 if causal else 1.0)
    return 3.5 * f if bwd else f


DTYPE_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "f64": 8}


def row(exp, impl, b, t, n, h, causal, pas, dtype="bf16"):
    return {"exp": exp, "impl": impl, "B": b, "T": t, "S": t, "N": n, "K": n, "H": h,
            "dtype": dtype, "causal": causal, "pass": pas, "ms": None, "tflops": None,
            "peak_bytes": None, "error": None}


def gpu_shapes(ts, hs=(64, 128, 256), exps=("fa", "codelab")):
    """(exp, B, T, N, H, causal) rows; the same shapes as kokkosattn_bench_gpu's --exp."""
    shapes = []
    for h in hs:
        for t in ts:
            for causal in (False, True):
                shapes.append(("fa", 16384 // t, t, 2048 // h, h, causal))
    if "codelab" in exps:
        for causal in (False, True):
            shapes.append(("codelab", 4, 128, 8, 64, causal))
    if "seq" in exps:  # the codelab demo's sweeps (examples/codelab/config.cpp)
        shapes += [("seq", 4, t, 8, 64, False) for t in (64, 128, 256, 512, 1024, 2048)]
    if "batch" in exps:
        shapes += [("batch", b, 256, 8, 64, False) for b in (1, 2, 4, 8, 16)]
    return shapes


def set_count(set_bytes, l2_bytes):
    return max(2, min(64, math.ceil(3 * l2_bytes / set_bytes)))


class Budget:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


# ----------------------------------------------------------------------------------------- torch
def run_torch(args, rows, env):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    env.update({"torch_version": torch.__version__, "torch_cuda": torch.version.cuda,
                "torch_cudnn": torch.backends.cudnn.version(), "gpu": props.name,
                "torch_sm": f"{props.major}{props.minor}"})
    backends = {"torch-flash": SDPBackend.FLASH_ATTENTION,
                "torch-cudnn": SDPBackend.CUDNN_ATTENTION,
                "torch-efficient": SDPBackend.EFFICIENT_ATTENTION,
                "torch-math": SDPBackend.MATH}
    budget = Budget(args.budget_s)
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
              "f64": torch.float64}[args.dtype]
    if args.tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    env["torch_matmul_allow_tf32"] = torch.backends.cuda.matmul.allow_tf32

    def make_sets(b, t, n, h, bwd):
        set_bytes = (4 if bwd else 3) * b * t * n * h * DTYPE_BYTES[args.dtype]
        sets = []
        for i in range(set_count(set_bytes, l2)):
            g = torch.Generator(device=dev).manual_seed(i)
            x = [torch.rand(b, t, n, h, device=dev, dtype=tdtype, generator=g) * 4 - 2
                 for _ in range(4 if bwd else 3)]
            # torch's [B, N, T, H] view of our [B, T, N, H] storage
            views = [y.transpose(1, 2) for y in x]
            if bwd:
                for y in views[:3]:
                    y.requires_grad_(True)
            sets.append(views)
        return sets, set_bytes

    def call_fn(causal, bwd):
        if not bwd:
            def fwd(s):
                with torch.no_grad():
                    return F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=causal)
            return fwd

        def fwdbwd(s):
            out = F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=causal)
            return torch.autograd.grad(out, (s[0], s[1], s[2]), s[3])
        return fwdbwd

    def time_events(fn, sets):
        for i in range(args.warmup):
            fn(sets[i % len(sets)])
        torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times, i = [], 0
        deadline = time.monotonic() + args.max_shape_s
        while len(times) < args.repeats and (len(times) < 3 or time.monotonic() < deadline):
            s = sets[i % len(sets)]
            i += 1
            e0.record()
            fn(s)
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1))
        return statistics.median(times)

    for impl in args.impls:
        if impl not in backends:
            continue
        for exp, b, t, n, h, causal in gpu_shapes(args.t, args.h, args.exps):
            for bwd in args.bwds:
                r = row(exp, impl, b, t, n, h, causal, "fwd+bwd" if bwd else "fwd", args.dtype)
                rows.append(r)
                if budget.left() <= 0:
                    r["error"] = "not run: --budget-s exhausted"
                    continue
                sets = None
                try:
                    with sdpa_kernel([backends[impl]]):
                        sets, set_bytes = make_sets(b, t, n, h, bwd)
                        fn = call_fn(causal, bwd)
                        torch.cuda.synchronize()
                        base = torch.cuda.memory_allocated()
                        torch.cuda.reset_peak_memory_stats()
                        fn(sets[0])
                        torch.cuda.synchronize()
                        r["peak_bytes"] = torch.cuda.max_memory_allocated() - base + set_bytes
                        r["ms"] = time_events(fn, sets)
                        r["tflops"] = flops(b, n, t, t, h, causal, bwd) / (r["ms"] * 1e-3) / 1e12
                except Exception as e:  # a peer's failure is a row, not a crash
                    r["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                del sets
                torch.cuda.empty_cache()
                print(f"{impl} {exp} {r['pass']} B={b} T={t} N={n} H={h} causal={int(causal)}:"
                      f" {r['ms']} ms {r['error'] or ''}", flush=True)
        if "overhead" in args.exps:
            for bwd in (False, True):
                r = row("overhead", impl, 4, 128, 8, 64, False, "fwd+bwd" if bwd else "fwd",
                        args.dtype)
                rows.append(r)
                try:
                    with sdpa_kernel([backends[impl]]):
                        sets, _ = make_sets(4, 128, 8, 64, bwd)
                        fn = call_fn(False, bwd)
                        for i in range(50):
                            fn(sets[i % len(sets)])
                        torch.cuda.synchronize()
                        per = []
                        for _ in range(5):
                            t0 = time.perf_counter()
                            for i in range(args.overhead_calls):
                                fn(sets[i % len(sets)])
                            torch.cuda.synchronize()
                            per.append((time.perf_counter() - t0) * 1e3 / args.overhead_calls)
                        r["ms"] = statistics.median(per)
                        r["tflops"] = flops(4, 8, 128, 128, 64, False, bwd) / (r["ms"] * 1e-3) / 1e12
                except Exception as e:
                    r["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                print(f"{impl} overhead {r['pass']}: {r['ms']} ms {r['error'] or ''}", flush=True)


# ------------------------------------------------------------------------------------------- jax
def run_jax(args, rows, env):
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp

    env.update({"jax_version": jax.__version__, "jax_devices": str(jax.devices()[0])})
    try:
        import jaxlib
        env["jaxlib_version"] = jaxlib.__version__
    except Exception:
        pass
    l2 = 50 * 2**20  # H100/H200; JAX does not report it
    budget = Budget(args.budget_s)
    jdtype = {"bf16": jnp.bfloat16, "f16": jnp.float16, "f32": jnp.float32,
              "f64": jnp.float64}[args.dtype]
    if args.dtype == "f64":
        jax.config.update("jax_enable_x64", True)
    if args.dtype in ("f32", "f64"):
        jax.config.update("jax_default_matmul_precision",
                          "tensorfloat32" if args.tf32 else "highest")
    env["jax_default_matmul_precision"] = str(jax.config.jax_default_matmul_precision)

    def make_fn(impl, causal, bwd):
        def attn(q, k, v):
            return jax.nn.dot_product_attention(q, k, v, is_causal=causal, implementation=impl)
        if not bwd:
            return jax.jit(attn)

        def fb(q, k, v, do):
            _, vjp = jax.vjp(attn, q, k, v)
            return vjp(do)
        return jax.jit(fb)

    def host_time(fn, sets, calls):
        per = []
        for _ in range(5):
            t0 = time.perf_counter()
            out = None
            for i in range(calls):
                out = fn(*sets[i % len(sets)])
            jax.block_until_ready(out)
            per.append((time.perf_counter() - t0) * 1e3 / calls)
        return statistics.median(per)

    work = []
    for bwd in args.bwds:  # every forward first: the budget favours breadth
        for impl in args.impls:
            if impl in JAX_IMPLS:
                for shape in gpu_shapes(args.t, args.h, args.exps):
                    work.append((impl, shape, bwd))
    for impl, (exp, b, t, n, h, causal), bwd in work:
        r = row(exp, impl, b, t, n, h, causal, "fwd+bwd" if bwd else "fwd", args.dtype)
        rows.append(r)
        if budget.left() <= 0:
            r["error"] = "not run: --budget-s exhausted"
            continue
        try:
            nsets = set_count((4 if bwd else 3) * b * t * n * h * DTYPE_BYTES[args.dtype], l2)
            key = jax.random.PRNGKey(0)
            sets = []
            for i in range(nsets):
                ks = jax.random.split(jax.random.fold_in(key, i), 4 if bwd else 3)
                sets.append([jax.random.uniform(kk, (b, t, n, h), jdtype, -2, 2) for kk in ks])
            fn = make_fn(impl.split("-")[1], causal, bwd)
            jax.block_until_ready(fn(*sets[0]))  # compile
            calls = max(3, min(args.repeats, len(sets) * 2))
            r["ms"] = host_time(fn, sets, calls)
            r["tflops"] = flops(b, n, t, t, h, causal, bwd) / (r["ms"] * 1e-3) / 1e12
            del sets
        except Exception as e:
            r["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
        print(f"{impl} {exp} {r['pass']} B={b} T={t} N={n} H={h} causal={int(causal)}:"
              f" {r['ms']} ms {r['error'] or ''}", flush=True)


# ------------------------------------------------------------------------------------------- cpu
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


def run_cpu(threads, out, min_time):
    """PyTorch's CPU SDPA on kokkosattn_bench_cpu's shapes: fp32, B=4, N=8, H=64, T=S in
    256..4096, causal or not, `threads` threads; inputs made in torch's [B, N, T, H] layout."""
    import torch
    import torch.nn.functional as F

    b, n, h = 4, 8, 64
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rows = []
    for t in (256, 512, 1024, 2048, 4096):
        q, k, v = (torch.randn(b, n, t, h, dtype=torch.float32) for _ in range(3))
        for causal in (False, True):
            r = row("seq", "torch-cpu", b, t, n, h, causal, "fwd", dtype="f32")
            try:
                with torch.inference_mode():
                    ms = time_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
                                 min_time)
                r["ms"] = ms
                r["tflops"] = flops(b, n, t, t, h, causal, False) / (ms * 1e-3) / 1e12
            except Exception as e:
                r["error"] = f"{type(e).__name__}: {e}"
            rows.append(r)
            print(f"torch-cpu T={t} causal={int(causal)}: {r['ms']} ms", flush=True)
    env = {"torch_version": torch.__version__, "torch_threads": torch.get_num_threads(),
           "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}
    with open(out, "w") as f:
        json.dump({"env": env, "rows": rows}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--family", choices=("torch", "jax"), default="torch")
    ap.add_argument("--impls", default=",".join(TORCH_IMPLS + JAX_IMPLS))
    ap.add_argument("--exps", default="fa,codelab,overhead")
    ap.add_argument("--dtype", choices=tuple(DTYPE_BYTES), default="bf16")
    ap.add_argument("--t", default=",".join(map(str, FA_T)), help="fa sweep sequence lengths")
    ap.add_argument("--h", default="64,128,256", help="fa sweep head dims")
    ap.add_argument("--pass", dest="passes", default="fwd,fwd+bwd",
                    help="passes to time (fa, codelab, seq, batch): fwd and/or fwd+bwd")
    ap.add_argument("--out", required=True)
    ap.add_argument("--run-id", default=None)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--max-shape-s", type=float, default=1.5, help="time cap per shape (torch)")
    ap.add_argument("--overhead-calls", type=int, default=2000)
    ap.add_argument("--budget-s", type=float, default=1e9, help="stop starting shapes after this")
    ap.add_argument("--threads", type=int, default=1, help="--device cpu: torch threads")
    ap.add_argument("--min-time", type=float, default=0.5, help="--device cpu: seconds per shape")
    ap.add_argument("--tf32", action="store_true", help="f32: permit TF32 products")
    args = ap.parse_args()
    if args.device == "cpu":
        run_cpu(args.threads, args.out, args.min_time)
        return
    args.impls = args.impls.split(",")
    args.exps = args.exps.split(",")
    args.bwds = [p == "fwd+bwd" for p in ("fwd", "fwd+bwd") if p in args.passes.split(",")]
    args.t = [int(x) for x in args.t.split(",")]
    args.h = [int(x) for x in args.h.split(",")]
    if "fa" not in args.exps:
        args.t = []
    rows, env = [], {}
    try:
        (run_torch if args.family == "torch" else run_jax)(args, rows, env)
    except ImportError as e:
        env[f"{args.family}_error"] = f"ImportError: {e}"
        print(f"peers.py: {args.family} unavailable: {e}", file=sys.stderr)
    if "codelab" not in args.exps:
        rows = [r for r in rows if r["exp"] != "codelab"]
    if args.tf32:
        for r in rows:
            r["impl"] += "-tf32"
    doc = {"env": env, "rows": rows}
    if args.run_id:
        doc["run_id"] = args.run_id
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
