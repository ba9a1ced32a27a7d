#!/usr/bin/env python3
"""Predicted scaling efficiency of context-parallel attention (issue 26's model, docs/scale-out.md).

One global sequence of T tokens split over P ranks (T / P each). The model compares, per ring
step, the attention FLOPs a rank computes with the bytes it must receive before the next step:

  ring (p2p):  P steps; step i computes its queries against the K/V block in hand while the next
               block travels; a step costs max(compute, alpha + bytes / bandwidth), the first one
               (the local block) only its compute. The partial (out, LSE) merges are bandwidth-
               bound on the device (3 passes over an fp32 out per step).
  a2a (Ulysses): two all-to-alls around a full-sequence attention over N / P heads, not overlapped.

Efficiency = t(1 rank) / (P t(P ranks)) for the same global problem. The device's attention rate
R(T) is the single-GPU rate of our forward at a block of that many tokens (measured, run 7 on the
H200, docs/performance.md); fwd+bwd uses the same curve scaled to the measured fwd+bwd rate. The
interconnects' bandwidths and latencies are assumptions until issue 27 measures them (--nvlink-gbs,
--ib-gbs): they are the numbers to replace.

    scripts/in-root.sh python3 scripts/cp-model.py [--plot docs/scale-out-model.png] [--table]
"""
import argparse
import math

# Forward TFLOP/s of our cuda backend at head dim 128, non-causal, by block length (H200, run 7,
# docs/performance.md, "Forward, bf16, 16k tokens"): the rate a rank reaches on one ring step.
FWD_RATE = {512: 460, 1024: 561, 2048: 613, 4096: 667, 8192: 645, 16384: 638}
# The backward alone runs at this fraction of the forward's rate: fwd+bwd then comes to 0.90x the
# forward's, as the best peer's does at 4096-16k (cuDNN 9.19 on the H200: 580-592 vs 634-654):
# 3.5 / (1 + 2.5 / s) = 0.90.
BWD_SCALE = 2.5 / (3.5 / 0.90 - 1)

LINKS = {
    # name: (GB/s one direction, latency per message in us). NVLink 4 on an HGX H200: 450 GB/s
    # per direction per GPU, of which a point-to-point send reaches ~80% through NCCL; 200 Gb/s
    # InfiniBand: 25 GB/s, ~23 after protocol overhead.
    "H200 + NVLink": (360.0, 15.0),
    "200 Gb/s InfiniBand": (23.0, 25.0),
}
HBM_GBS = 4000.0  # the merges' device bandwidth (H200 copy bandwidth measured: 4.24 TB/s)


def rate(tokens, scale=1.0):
    """TFLOP/s at a block of `tokens` tokens (log-interpolated; flat past the measured range)."""
    keys = sorted(FWD_RATE)
    t = min(max(tokens, keys[0]), keys[-1])
    lo = max(k for k in keys if k <= t)
    hi = min(k for k in keys if k >= t)
    if lo == hi:
        r = FWD_RATE[lo]
    else:
        f = (math.log(t) - math.log(lo)) / (math.log(hi) - math.log(lo))
        r = FWD_RATE[lo] + f * (FWD_RATE[hi] - FWD_RATE[lo])
    if tokens < keys[0]:  # below the table, assume the rate falls with the work per step
        r *= tokens / keys[0]
    return r * 1e12 * scale


def one_gpu_time(T, N, H, causal, bwd):
    """The whole problem on one GPU: the forward, then (bwd) the backward (2.5x its FLOPs)."""
    f = 4.0 * T * T * N * H * (0.5 if causal else 1.0)
    t = f / rate(T)
    return t + (2.5 * f / rate(T, BWD_SCALE) if bwd else 0.0)


def ring_time(T, P, N, K, H, causal, bwd, link):
    """The forward ring, then (bwd) the backward ring: K and V travel again while dK and dV
    (fp32 partial sums) travel with them; each phase a step at a time."""
    bw, alpha = link[0] * 1e9, link[1] * 1e-6
    tl = T / P
    kv = 2 * tl * K * H * 2  # one K and V block in bf16
    total = 0.0
    phases = [(1.0, 1, 1.0)] + ([(2.5, 3, BWD_SCALE)] if bwd else [])
    for flop_mult, kv_blocks, scale in phases:
        # zigzag (causal): every step but the local one is half a block's work, in half-blocks.
        step_flops = 4.0 * tl * tl * N * H * (0.5 if causal else 1.0) * flop_mult
        t_comp = step_flops / rate(tl / 2 if causal else tl, scale)
        t_comm = alpha + kv_blocks * kv / bw
        t_merge = 3 * tl * N * H * 4 / (HBM_GBS * 1e9)  # the partial (out, LSE) merge
        local = step_flops / rate(tl, scale)  # the diagonal block (half of it causal: as above)
        total += local + (P - 1) * (max(t_comp, t_comm) + t_merge)
    return total


def a2a_time(T, P, N, K, H, causal, bwd, link):
    if K % P:
        return None
    bw, alpha = link[0] * 1e9, link[1] * 1e-6
    tl = T / P
    t_comp = one_gpu_time(T, N // P, H, causal, bwd)
    # q, k, v in and out back (fwd); dout, q, k, v, out in and dq, dk, dv back (bwd): the share
    # (P - 1) / P of each rank's slice leaves it.
    per_token = (N * H + 2 * K * H + N * H) * 2
    if bwd:
        per_token += (2 * N * H + N * H + 2 * K * H + 2 * K * H) * 2
    moved = tl * per_token * (P - 1) / P
    return t_comp + 2 * alpha * (P - 1) + moved / bw


def efficiency(kind, T, P, N, K, H, causal, bwd, link):
    t1 = one_gpu_time(T, N, H, causal, bwd)
    tp = (ring_time if kind == "ring" else a2a_time)(T, P, N, K, H, causal, bwd, link)
    return None if tp is None else t1 / (P * tp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--kv-heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--nvlink-gbs", type=float, default=LINKS["H200 + NVLink"][0])
    ap.add_argument("--ib-gbs", type=float, default=LINKS["200 Gb/s InfiniBand"][0])
    ap.add_argument("--plot", help="write the efficiency plot (PNG) here")
    ap.add_argument("--table", action="store_true", help="print the markdown table")
    a = ap.parse_args()
    gbs = {"H200 + NVLink": a.nvlink_gbs, "200 Gb/s InfiniBand": a.ib_gbs}
    links = {name: (gbs[name], us) for name, (_, us) in LINKS.items()}
    N, K, H = a.heads, a.kv_heads, a.head_dim
    ranks = [2, 4, 8, 16, 32, 64]
    lengths = [32768, 131072, 524288]

    # The overlap condition: tokens per rank above which a ring step's transfer hides under its
    # compute (FLOP per byte received = T_local * N / K for the forward).
    print(f"N {N}, K {K}, H {H}, bf16; efficiency = t(1 GPU) / (P t(P GPUs))")
    for name, (bw, us) in links.items():
        need = rate(16384) / (bw * 1e9) * K / N
        print(f"{name}: {bw:.0f} GB/s, {us:.0f} us per message -> ring forward hides its "
              f"transfers from ~{need:,.0f} tokens per rank (non-causal; 2x that causal)")
    if a.table:
        print("\n| link | pass | scheme | T | " + " | ".join(f"P={p}" for p in ranks) + " |")
        print("|---|---|---|---|" + "---|" * len(ranks))
        for name, link in links.items():
            for bwd in (False, True):
                for kind, causal in (("ring", False), ("ring", True), ("a2a", False)):
                    for T in lengths:
                        cells = []
                        for p in ranks:
                            e = efficiency(kind, T, p, N, K, H, causal, bwd, link)
                            cells.append("--" if e is None else f"{100 * e:.0f}%")
                        label = kind + (" zigzag causal" if causal else "")
                        print(f"| {name} | {'fwd+bwd' if bwd else 'fwd'} | {label} | "
                              f"{T // 1024}k | " + " | ".join(cells) + " |")
    if a.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
        for ax, (name, link) in zip(axes, links.items()):
            for T, style in zip(lengths, (":", "--", "-")):
                for kind, causal, color in (("ring", False, "C0"), ("ring", True, "C1"),
                                            ("a2a", False, "C2")):
                    xs, ys = [], []
                    for p in ranks:
                        e = efficiency(kind, T, p, N, K, H, causal, True, link)
                        if e is not None:
                            xs.append(p)
                            ys.append(100 * e)
                    label = f"{kind}{' causal' if causal else ''}, T {T // 1024}k"
                    ax.plot(xs, ys, style, color=color, marker="o", ms=3, label=label)
            ax.set_xscale("log", base=2)
            ax.set_xticks(ranks, [str(p) for p in ranks])
            ax.axhline(90, color="grey", lw=0.8)
            ax.set_title(f"{name}: fwd+bwd, N {N} K {K} H {H}")
            ax.set_xlabel("ranks (GPUs)")
        axes[0].set_ylabel("predicted scaling efficiency (%)")
        axes[0].set_ylim(0, 105)
        axes[1].legend(fontsize=7, ncol=1, loc="lower left")
        fig.tight_layout()
        fig.savefig(a.plot, dpi=110)
        print(f"wrote {a.plot}")


if __name__ == "__main__":
    main()
