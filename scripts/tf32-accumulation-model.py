#!/usr/bin/env python3
"""A CPU model of the 3xTF32 forward's output error, to tell where it comes from (numpy only).

Attention on N(0, 1) inputs (head dim 128, T query rows, S keys) against an fp64 reference, P V
computed as the fp32 kernels do it: P and V split into TF32 big + small parts, three products
per k-step of 8 (small.big, big.small, big.big) added into one fp32 accumulator. Two models of
that addition: round to nearest (IEEE fp32) and truncation (the exact sum cut to 24 bits below
the largest addend's exponent, toward zero: what the tensor cores' fp32 accumulation does), the
latter also with the accumulator restarted every FLUSH keys and added into O with round to
nearest (the kernels' fix: cuda/sm90/f32_config.cuh kFlushBlocks, cuda/sm80/wide_math.cuh
kFreshTiles). Plain fp32 for comparison.

    scripts/tf32-accumulation-model.py [--rows 64] [--flush 128] [--keys 256,1024,2048,4096]

Scores are plain fp32 here (their split adds ~1e-7). On 2026-12-07 (defaults):

    keys  max|out|  fp32     nearest  truncated  truncated+flush
      256    0.433  3.4e-07  3.1e-07  1.2e-06    5.9e-07
     1024    0.204  3.5e-07  3.8e-07  2.5e-06    2.8e-07
     2048    0.144  1.1e-07  1.4e-07  2.6e-06    1.6e-07
     4096    0.096  6.5e-08  1.5e-07  4.2e-06    1.6e-07

Truncation in one accumulator has the GPU kernels' magnitude and growth (4.6-5.0e-6 at S
2048-4096 over 1024-2048 rows, H100 run s35a); round to nearest, or truncation restarted every
128 keys, stays at plain fp32's level.
"""
import argparse

import numpy as np


def tf32_round(x):
    """To TF32 by rounding to nearest, ties away (the kernels' to_tf32_finite)."""
    b = x.astype(np.float32).view(np.uint32)
    return ((b + np.uint32(0x1000)) & np.uint32(0xffffe000)).view(np.float32)


def tf32_truncate(x):
    """What the MMA reads of an fp32 register: its TF32 bits."""
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xffffe000)).view(np.float32)


def split(x):
    big = tf32_round(x)
    return big, tf32_truncate((x - big).astype(np.float32))


def add_truncated(acc, prods):
    """acc + sum(prods) cut to 24 bits below the largest addend's exponent, toward zero."""
    top = np.maximum(np.abs(acc), np.abs(prods).max(-1))
    exp = np.floor(np.log2(np.where(top > 0, top, 1.0)))
    ulp = np.ldexp(1.0, (exp - 23).astype(int))
    return np.trunc((acc + prods.sum(-1)) / ulp) * ulp


def add_nearest(acc, prods):
    return (acc + prods.sum(-1)).astype(np.float32).astype(np.float64)


def pv(p, v, add, flush):
    """P V in k-steps of 8, three split products each, restarted every `flush` keys."""
    pb, ps = split(p)
    vb, vs = split(v)
    out = np.zeros((p.shape[0], v.shape[1]), np.float32)
    for c0 in range(0, p.shape[1], flush):
        acc = np.zeros(out.shape)
        for k0 in range(c0, min(c0 + flush, p.shape[1]), 8):
            for a, b in ((ps, vb), (pb, vs), (pb, vb)):
                prods = a[:, k0:k0 + 8, None].astype(np.float64) * b[None, k0:k0 + 8, :]
                acc = add(acc, np.moveaxis(prods, 1, 2))
        out = (out + acc.astype(np.float32)).astype(np.float32)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--flush", type=int, default=128)
    ap.add_argument("--keys", default="256,1024,2048,4096")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    head_dim = 128
    print("keys  max|out|  fp32     nearest  truncated  truncated+flush")
    for keys in (int(x) for x in args.keys.split(",")):
        q = rng.standard_normal((args.rows, head_dim)).astype(np.float32)
        k = rng.standard_normal((keys, head_dim)).astype(np.float32)
        v = rng.standard_normal((keys, head_dim)).astype(np.float32)
        scale = 1 / np.sqrt(head_dim)
        s64 = (q.astype(np.float64) @ k.T.astype(np.float64)) * scale
        p64 = np.exp(s64 - s64.max(1, keepdims=True))
        ref = (p64 @ v) / p64.sum(1, keepdims=True)
        s32 = (q @ k.T).astype(np.float32) * np.float32(scale)
        p = np.exp(s32 - s32.max(1, keepdims=True)).astype(np.float32)
        rowsum = p.sum(1, keepdims=True, dtype=np.float32)

        def err(o):
            return np.abs(o / rowsum - ref).max()

        everything = keys + 8  # one accumulator over all keys
        print(f"{keys:5d} {np.abs(ref).max():8.3f}  {err((p @ v).astype(np.float32)):.1e}  "
              f"{err(pv(p, v, add_nearest, everything)):.1e}  "
              f"{err(pv(p, v, add_truncated, everything)):.1e}    "
              f"{err(pv(p, v, add_truncated, args.flush)):.1e}", flush=True)


if __name__ == "__main__":
    main()
