#!/usr/bin/env python3
"""PyTorch's CPU SDPA on the shapes of kokkosattn_bench_cpu (issue 3): fp32, B=4, N=8, H=64,
T=S in 256..4096, causal or not, with the same thread count; rows of the results schema with
impl "torch-cpu". Kept for `make bench`; the code lives in peers.py (--device cpu)."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import run_cpu  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per shape")
    args = ap.parse_args()
    run_cpu(args.threads, args.out, args.min_time)


if __name__ == "__main__":
    main()
