#!/usr/bin/env python3
"""Peers of kokkosattn_bench_decode (issue 25's decode sweep) on the same shapes, written as rows
of the same schema (exp "decode", page_size 0 = contiguous cache, ms, gbps, frac_copy_bw,
status, reason; see benchmarks/gpu/bench_decode.cpp):
  torch-sdpa-gathered  torch.nn.functional.scaled_dot_product_attention on q [B, N, T, H] and
                       the gathered (contiguous) cache [B, K, S, H], torch's own backend choice;
                       GQA through enable_gqa=True where torch has it, else k and v repeated to N
                       heads before timing; T > 1 masked causal bottom-right (causal_lower_right,
                       else a boolean mask). One row per shape, page_size 0: the peer of every
                       page size. The row's "method" says which path ran.
  flashinfer           BatchDecodeWithPagedKVCacheWrapper (T = 1) or
                       BatchPrefillWithPagedKVCacheWrapper (T > 1, causal: bottom-right), NHD
                       pages; plan() untimed; the contiguous cache is one page of S keys per
                       sequence.
  flash-attn           flash_attn_with_kvcache (FlashAttention-3's flash_attn_interface if
                       importable, else flash_attn 2) with the page table, cache_seqlens = S,
                       causal (bottom-right); the contiguous cache without a page table.
A peer that does not import gives rows with status "unavailable: <error>"; one that refuses a
configuration, status "unsupported" and its message.
Timing as ours: --warmup calls, then --rounds rounds of --repeats back-to-back calls between two
CUDA events, the median round's time per call; caches rotate through enough copies to exceed 3x
the L2. Copy bandwidth in the same process: copy_ of a 2 GiB tensor, counted as 2 x bytes (read
+ write, nvbandwidth's convention). Runs with --budget-s start no new configuration after it."""
import argparse
import inspect
import json
import math
import sys
import time

GiB = 2**30
ELEM = 2  # bf16
IMPLS = ("torch-sdpa-gathered", "flashinfer", "flash-attn")


def ints(s):
    return [int(x) for x in s.split(",") if x]


def median(v):
    return sorted(v)[len(v) // 2]  # the upper middle, as kokkosattn_bench_decode


def bytes_kv(b, s, k, h):
    return 2 * b * k * s * h * ELEM


def bytes_q_out(b, t, n, h):
    return 2 * b * t * n * h * ELEM


def pool_bytes(b, s, k, h, ps):
    """k and v as stored: whole pages (page 0: one page of S keys per sequence)."""
    page = ps or s
    return 2 * b * math.ceil(s / page) * page * k * h * ELEM


def row(impl, b, t, s, n, k, h, ps, copy_gbps):
    return {"exp": "decode", "impl": impl, "B": b, "T": t, "S": s, "N": n, "K": k, "H": h,
            "Hv": h, "dtype": "bf16", "causal": True, "alignment": "bottom_right",
            "pass": "fwd", "page_size": ps, "layout": "paged" if ps else "contiguous",
            "sets": 0, "ms": None, "gbps": None, "copy_bw_gbps": copy_gbps,
            "frac_copy_bw": None, "bytes": bytes_kv(b, s, k, h) + bytes_q_out(b, t, n, h),
            "bytes_kv": bytes_kv(b, s, k, h), "bytes_q_out": bytes_q_out(b, t, n, h),
            "tflops": None, "peak_bytes": None, "status": "ok", "reason": None, "error": None,
            "backend": None, "kernel": None, "method": None}


def finish(r, ms):
    r["ms"] = ms
    r["gbps"] = r["bytes"] / (ms * 1e-3) / 1e9
    r["frac_copy_bw"] = r["gbps"] / r["copy_bw_gbps"]
    t, s = r["T"], r["S"]
    pairs = t * s - t * (t - 1) // 2  # bottom-right causal
    r["tflops"] = 4.0 * r["B"] * r["N"] * r["H"] * pairs / (ms * 1e-3) / 1e12


def first_line(e, n=300):
    lines = str(e).splitlines()
    return f"{type(e).__name__}: {lines[0][:n] if lines else ''}"


def refuse(r, status, e):
    r["status"] = status
    r["reason"] = first_line(e)
    r["error"] = ("refused: " if status == "unsupported" else status + ": ") + r["reason"]


def time_calls(torch, call, args):
    """call(i) runs one call on set i; median over rounds of back-to-back calls, ms per call."""
    for i in range(args.warmup):
        call(i)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per, i = [], args.warmup
    for _ in range(args.rounds):
        e0.record()
        for _ in range(args.repeats):
            call(i)
            i += 1
        e1.record()
        e1.synchronize()
        per.append(e0.elapsed_time(e1) / args.repeats)
    return median(per)


def copy_bandwidth(torch, rounds):
    free, _ = torch.cuda.mem_get_info()
    n = min(2 * GiB, free // 4)
    src = torch.full((n,), 60, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src), dst.copy_(src)
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    gbps = []
    for _ in range(rounds):
        e0.record()
        for _ in range(5):
            dst.copy_(src)
        e1.record()
        e1.synchronize()
        gbps.append(2 * 5 * n / (e0.elapsed_time(e1) * 1e-3) / 1e9)
    return median(gbps), n


def set_count(torch, kv, l2):
    """Copies of the cache: enough to exceed 3x the L2, as many as fit beside a 4 GiB margin."""
    free, _ = torch.cuda.mem_get_info()
    room = free - 4 * GiB - 16 * 2**20
    if kv > room:
        return 0, room
    return max(1, min(math.ceil(3 * l2 / kv), 1024, room // kv)), room


def rand(torch, shape, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.empty(shape, dtype=torch.bfloat16, device="cuda").uniform_(-2, 2, generator=g)


def check_finite(torch, out):
    if not bool(torch.isfinite(out).all()):
        raise RuntimeError("sanity check: output not finite after one call")


# --------------------------------------------------------------------------------------- torch
def torch_sdpa(torch, r, sets, q):
    """sets: (k, v) [B, K, S, H] each. Picks the first path torch accepts; returns call(i)."""
    import torch.nn.functional as F
    n, k, t, s = r["N"], r["K"], r["T"], r["S"]
    masks = [("no mask (T = 1: nothing to mask)", None)]
    if t > 1:
        masks = []
        try:
            from torch.nn.attention.bias import causal_lower_right
            masks.append(("causal_lower_right", causal_lower_right(t, s)))
        except ImportError:
            pass
        keep = torch.ones(t, s, dtype=torch.bool, device="cuda").tril(diagonal=s - t)
        masks.append(("boolean bottom-right mask", keep))
    gqas = ["MHA"] if k == n else ["enable_gqa=True", "repeat_interleave (untimed)"]
    errors = []
    for gqa in gqas:
        if gqa.startswith("repeat"):
            sets = [(a.repeat_interleave(n // k, dim=1), b.repeat_interleave(n // k, dim=1))
                    for a, b in sets]
        for mname, mask in masks:
            kw = {} if mask is None else {"attn_mask": mask}
            if gqa.startswith("enable"):
                kw["enable_gqa"] = True

            def call(i, kw=kw):
                kk, vv = sets[i % len(sets)]
                return F.scaled_dot_product_attention(q, kk, vv, **kw)
            try:
                with torch.no_grad():
                    check_finite(torch, call(0))
                r["method"] = f"{gqa}; {mname}; cache [B, K, S, H] contiguous; q [B, N, T, H]"
                return call
            except torch.cuda.OutOfMemoryError:
                raise
            except (TypeError, RuntimeError, NotImplementedError) as e:
                errors.append(f"{gqa}, {mname}: {first_line(e)}")
    raise RuntimeError(" | ".join(errors)[:600])


def run_torch_gathered(torch, r, args, l2):
    b, t, s, n, k, h = (r[x] for x in ("B", "T", "S", "N", "K", "H"))
    kv = bytes_kv(b, s, k, h)
    count, room = set_count(torch, kv, l2)
    if count == 0:
        r["status"] = "skipped: memory"
        r["reason"] = f"the cache needs {kv / GiB:.3g} GiB, {room / GiB:.3g} GiB free beyond 4 GiB"
        r["error"] = r["status"] + ": " + r["reason"]
        return
    q = rand(torch, (b, n, t, h), 1)
    sets = [(rand(torch, (b, k, s, h), 2 + 2 * i), rand(torch, (b, k, s, h), 3 + 2 * i))
            for i in range(count)]
    r["sets"] = count
    r["backend"] = "torch SDPA (torch's choice)"
    try:
        call = torch_sdpa(torch, r, sets, q)
    except torch.cuda.OutOfMemoryError as e:
        refuse(r, "failed", e)
        return
    except RuntimeError as e:  # every path refused: their messages
        refuse(r, "unsupported", e)
        return
    with torch.no_grad():
        finish(r, time_calls(torch, call, args))


# ---------------------------------------------------------------------- paged peers (shared pool)
class Pool:
    """count copies of k and v pools [P, page, K, H]; page 0 means one page of S keys per
    sequence (the contiguous cache [B, S, K, H]); the page ids shuffled when paged."""

    def __init__(self, torch, b, s, k, h, ps, count):
        self.page = ps or s
        self.pps = math.ceil(s / self.page)
        pages = b * self.pps
        if ps:
            g = torch.Generator(device="cpu").manual_seed(25)
            ids = torch.randperm(pages, generator=g, dtype=torch.int32)
        else:
            ids = torch.arange(pages, dtype=torch.int32)
        self.table = ids.view(b, self.pps).cuda()
        self.indices = ids.cuda()
        self.indptr = (torch.arange(b + 1, dtype=torch.int32) * self.pps).cuda()
        self.last = torch.full((b,), s - (self.pps - 1) * self.page, dtype=torch.int32,
                               device="cuda")
        self.seqlens = torch.full((b,), s, dtype=torch.int32, device="cuda")
        shape = (pages, self.page, k, h)
        self.kv = [(rand(torch, shape, 2 + 2 * i), rand(torch, shape, 3 + 2 * i))
                   for i in range(count)]


def flashinfer_call(torch, r, pool, q4):
    import flashinfer
    b, t, n, k, h = (r[x] for x in ("B", "T", "N", "K", "H"))
    ws = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
    bf = torch.bfloat16
    if t == 1:
        tc = n // k >= 4  # flashinfer's advice: tensor cores for large GQA groups
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(ws, "NHD", use_tensor_cores=tc)
        w.plan(pool.indptr, pool.indices, pool.last, n, k, h, pool.page,
               pos_encoding_mode="NONE", q_data_type=bf, kv_data_type=bf)
        q = q4.view(b, n, h)
        r["method"] = f"BatchDecodeWithPagedKVCacheWrapper NHD, use_tensor_cores={tc}"
    else:
        w = flashinfer.BatchPrefillWithPagedKVCacheWrapper(ws, "NHD")
        qo = torch.arange(b + 1, dtype=torch.int32, device="cuda") * t
        w.plan(qo, pool.indptr, pool.indices, pool.last, n, k, h, pool.page, causal=True,
               q_data_type=bf, kv_data_type=bf)
        q = q4.view(b * t, n, h)
        r["method"] = "BatchPrefillWithPagedKVCacheWrapper NHD, causal (bottom-right)"
    r["method"] += "; plan() untimed"
    return lambda i: w.run(q, pool.kv[i % len(pool.kv)])


def flash_attn_call(torch, r, pool, q4):
    try:
        from flash_attn_interface import flash_attn_with_kvcache as fn
        which = "FlashAttention-3 (flash_attn_interface)"
    except ImportError:
        from flash_attn import flash_attn_with_kvcache as fn
        which = "flash_attn 2"
    kw = {"cache_seqlens": pool.seqlens, "causal": True}
    if r["page_size"]:
        params = inspect.signature(fn).parameters
        name = "page_table" if "page_table" in params else "block_table"
        kw[name] = pool.table
        r["method"] = f"{which}, {name}"
    else:  # the pool is [B, S, K, H]: the contiguous cache as flash_attn takes it
        r["method"] = f"{which}, contiguous cache"
    kv = pool.kv
    return lambda i: fn(q4, *kv[i % len(kv)], **kw)


def run_paged_peer(torch, r, pool, q4, args):
    make = flashinfer_call if r["impl"] == "flashinfer" else flash_attn_call
    r["sets"] = len(pool.kv)
    r["backend"] = r["impl"]
    try:
        call = make(torch, r, pool, q4)
        check_finite(torch, call(0))
    except torch.cuda.OutOfMemoryError as e:
        refuse(r, "failed", e)
        return
    except Exception as e:  # the peer's refusal (page size, head dim, GQA ratio ...)
        refuse(r, "unsupported", e)
        return
    finish(r, time_calls(torch, call, args))


# -------------------------------------------------------------------------------------- driver
def importable(name):
    try:
        if name == "flashinfer":
            import flashinfer
            return None, getattr(flashinfer, "__version__", "?")
        try:
            import flash_attn_interface  # noqa: F401  (FlashAttention-3)
            return None, "flash_attn_interface (FA3)"
        except ImportError:
            import flash_attn
            return None, getattr(flash_attn, "__version__", "?")
    except Exception as e:  # an ImportError, or a broken build's OSError
        return f"unavailable: {first_line(e, 200)}", None


def run(args, rows, env):
    import torch
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    bw, bw_bytes = copy_bandwidth(torch, args.rounds)
    print(f"device copy bandwidth {bw:.0f} GB/s (read + write of {bw_bytes >> 20} MiB)",
          flush=True)
    env.update({"torch_version": torch.__version__, "torch_cuda": torch.version.cuda,
                "gpu": props.name, "torch_sm": f"{props.major}{props.minor}",
                "peers_copy_bw_gbps": bw, "peers_copy_bw_buffer_bytes": bw_bytes,
                "peers_copy_bw_convention": "torch copy_ of n bytes counted as 2n (read + "
                "write), median of rounds of 5 copies"})
    missing = {}
    for impl in args.impls:
        if impl in ("flashinfer", "flash-attn"):
            missing[impl], version = importable(impl)
            env[f"{impl}_version"] = version or missing[impl]
    end = time.monotonic() + args.budget_s
    layouts = args.page_sizes + ([0] if args.contiguous else [])
    for b in args.B:
        for s in args.S:
            for k in args.K:
                for t in args.T:
                    for ps in layouts:
                        run_config(torch, args, rows, (b, t, s, args.N, k, args.H, ps), bw, l2,
                                   missing, end)


def run_config(torch, args, rows, shape, bw, l2, missing, end):
    b, t, s, n, k, h, ps = shape
    todo = []
    for impl in args.impls:
        if impl == "torch-sdpa-gathered" and ps:
            continue  # the gathered cache is the contiguous one: its row is page_size 0
        r = row(impl, b, t, s, n, k, h, ps, bw)
        rows.append(r)
        if impl not in IMPLS:
            r["status"], r["reason"] = "invalid", f"unknown peer {impl}"
        elif missing.get(impl):
            r["status"], r["reason"] = missing[impl], missing[impl]
        elif time.monotonic() > end:
            r["status"], r["reason"] = "not run", "--budget-s exhausted"
        else:
            todo.append(r)
        if r["status"] != "ok":
            r["error"] = r["status"] if r["status"] == r["reason"] else \
                f"{r['status']}: {r['reason']}"
    pool = None
    for r in todo:
        try:
            if r["impl"] == "torch-sdpa-gathered":
                run_torch_gathered(torch, r, args, l2)
                continue
            if pool is None:
                count, _ = set_count(torch, pool_bytes(b, s, k, h, ps), l2)
                if count == 0:
                    pool = "skipped"
                else:
                    pool = Pool(torch, b, s, k, h, ps, count)
                    q4 = rand(torch, (b, t, n, h), 1)
            if pool == "skipped":
                r["status"], r["reason"] = "skipped: memory", "the cache does not fit in free " \
                    "memory beyond 4 GiB"
                r["error"] = f"{r['status']}: {r['reason']}"
                continue
            run_paged_peer(torch, r, pool, q4, args)
        except Exception as e:  # a peer's failure is a row, not a crash
            refuse(r, "failed", e)
        finally:
            print(f"{r['impl']:<20} B={b:<3} T={t} S={s:<5} K={k:<2} page={ps:<3} "
                  f"{r['status']} {r['gbps'] and round(r['gbps'])} GB/s {r['reason'] or ''}",
                  flush=True)
            torch.cuda.empty_cache()
    del pool
    torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--B", type=ints, default=[1, 8, 32, 128])
    ap.add_argument("--S", type=ints, default=[1024, 4096, 16384, 65536])
    ap.add_argument("--K", type=ints, default=[32, 8, 1])
    ap.add_argument("--T", type=ints, default=[1, 4])
    ap.add_argument("--N", type=int, default=32)
    ap.add_argument("--H", type=int, default=128)
    ap.add_argument("--page-sizes", type=ints, default=[16, 256])
    ap.add_argument("--no-contiguous", dest="contiguous", action="store_false")
    ap.add_argument("--impl", type=lambda s: s.split(","), dest="impls", default=list(IMPLS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--run-id", default="unnamed")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=1e9,
                    help="start no new configuration after this many seconds")
    ap.add_argument("--quick", action="store_true", help="smoke test: small shapes, few calls")
    args = ap.parse_args()
    if args.quick:  # the same shapes as kokkosattn_bench_decode --quick
        args.B, args.S, args.K, args.repeats, args.rounds = [1, 8], [1024, 4096], [8, 1], 10, 3
    rows, env = [], {}
    try:
        run(args, rows, env)
    except ImportError as e:
        env["torch_error"] = f"ImportError: {e}"
        print(f"peers_decode.py: torch unavailable: {e}", file=sys.stderr)
    with open(args.out, "w") as f:
        json.dump({"run_id": args.run_id, "env": env, "rows": rows}, f, indent=1)
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
