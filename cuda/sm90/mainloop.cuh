// The consumer mainloop of one tile (one warpgroup, 64 query rows): S = Q K^T and O += P V on
// wgmma with the online softmax in registers. Per key block it: issue S(it), rescale O, issue
// P V(it - 1), pass the GEMM turn, softmax(it) while P V(it - 1) runs, then pack P(it)
// (Cfg::kLateRescale: O is rescaled after P V(it - 1) completes, before the packing).
// TileMainloop holds a tile's state and names these steps; consume_tile runs them.
#pragma once

#include <cstdint>

#include "fwd_config.cuh"
#include "fwd_epilogue.cuh"
#include "pipeline.cuh"
#include "probe.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"
#include "seq_info.cuh"
#include "softmax.cuh"
#include "wgmma_ops.cuh"

namespace kattn::cuda_kernels::sm90 {

// Padded batches: V rows at or past k_len hold caller padding (maybe NaN, and 0 * NaN = NaN),
// so consumer warpgroup 0 zeroes them in the stage before any warpgroup runs P V.
template <class Cfg>
__device__ __forceinline__ void zero_padding_rows(std::uint32_t v_base, int first_row, int wg,
                                                  int tid) {
  if (wg == 0) {
    const int first = max(first_row, 0);
    const int chunks = (Cfg::kBlockN - first) * 8; // 16-byte chunks per 128-byte row
    for (int c = 0; c < Cfg::kColBlocks; ++c) {
      const std::uint32_t base = v_base + c * Cfg::kKVColBlockBytes + first * 128;
      for (int i = tid; i < chunks; i += 128) {
        asm volatile("st.shared.v4.u32 [%0], {%1, %1, %1, %1};\n" ::"r"(base + 16 * i), "r"(0)
                     : "memory");
      }
    }
    fence_proxy_async();
  }
  named_bar_sync(1, Cfg::kConsumerThreads);
}

// Named barrier 2 + w: "consumer warpgroup w may issue its GEMMs"; turns go round robin.
template <class Cfg>
__device__ __forceinline__ void turn_wait(int wg) {
  if constexpr (Cfg::kPingPong) {
    named_bar_sync(2 + wg, 256);
  }
}
template <class Cfg>
__device__ __forceinline__ void turn_pass(int wg) {
  if constexpr (Cfg::kPingPong) {
    named_bar_arrive(2 + (wg + 1) % Cfg::kConsumerWGs, 256);
  }
}

// Turns run on across tiles (the last warpgroup passes after its last GEMMs of a tile too), so
// its final pass of the kernel has no tile to start: warpgroup 0 takes it so that no named
// barrier is left half-arrived at exit.
template <class Cfg>
__device__ __forceinline__ void turn_drain(int wg, int q_count) {
  if constexpr (Cfg::kPingPong) {
    if (wg == 0 && q_count > 0) {
      named_bar_sync(2, 256);
    }
  }
}

// One consumer warpgroup's tile: its registers (O, the scores, the P fragments, the softmax
// state) and the steps of its mainloop. The per-block steps take the scores (R = width / 2
// registers per thread) and P fragments (width / 16 k-steps) as arguments: full blocks pass sc
// and pa, a narrow last block (Cfg::kTailN) their leading registers.
template <class Cfg, class Probe>
struct TileMainloop {
  static constexpr int BN = Cfg::kBlockN;
  static constexpr int D = Cfg::kHeadDim;
  static constexpr int kSRegs = BN / 2;
  static constexpr int kORegs = D / 2;
  // Sequence-major tiles: Q and K MN-major, V K-major (fwd_config.cuh).
  static constexpr bool kSeq = Cfg::kSeqMajor;
  using MmaO = WgmmaRS<D, Cfg::kBf16, !kSeq>;

  const FwdArgs& a;
  const std::uint32_t smem;
  const TileWork& w;
  const int wg;
  int& it_base; // K/V block iterations before this tile (ring position)
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int lane = tid % 32;
  const int wg_row0 = w.t.m_block * Cfg::kBlockM + wg * 64; // first query row of this warpgroup
  const int row0 = wg_row0 + (tid / 32) * 16 + lane / 4;
  const int row1 = row0 + 8;
  const IndexRange<int> keys0 = w.s.rule(a.p).row_keys(row0);
  const IndexRange<int> keys1 = w.s.rule(a.p).row_keys(row1);
  const Ring<Cfg> ring{smem + Cfg::kOffBar};
  const int qs;
  const std::uint32_t q_base =
      smem + Cfg::kOffQ + qs * Cfg::kQBytes + wg * (kSeq ? Cfg::kSeqBoxBytes : 64 * 128);
  const float log2_mul = a.softmax_log2;
  const int n_iter = w.n_iter();
  // The tile's registers: consume_tile's own arrays, by reference (held as members of this
  // struct they compiled to other code, and the 192-key tile spilled).
  float (&o)[kORegs];
  OnlineSoftmax& sm;
  float (&sc)[kSRegs];
  std::uint32_t (&pa)[BN / 16][4];
  float (&corr)[2];
  bool& rescale_due; // Cfg::kLazyRescale: false when the last softmax kept the max

  template <int R>
  __device__ __forceinline__ void issue_s(int i, float (&acc)[R]) {
    using MmaS = WgmmaSS<2 * R, Cfg::kBf16, kSeq>;
    const std::uint32_t k_base = smem + Cfg::kOffK + Ring<Cfg>::stage(it_base + i) * Cfg::kKVBytes;
    wgmma_fence();
    if constexpr (kSeq) {
      // MN-major: k-step kk is head-dim rows [16 kk, 16 kk + 16) of every box; K's boxes of 64
      // keys lie kSeqBoxBytes apart (the descriptor's leading offset), Q's one box per warpgroup.
      const std::uint64_t dq0 = sw128_desc(q_base, Cfg::kSeqBoxBytes, 1024);
      const std::uint64_t dk0 = sw128_desc(k_base, Cfg::kSeqBoxBytes, 1024);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        const std::uint64_t dq = desc_advance(dq0, kk * 2048);
        const std::uint64_t dk = desc_advance(dk0, kk * 2048);
        if (kk == 0) {
          MmaS::run_zero(acc, dq, dk);
        } else {
          MmaS::run(acc, dq, dk, 1);
        }
      }
      wgmma_commit();
      return;
    }
    const std::uint64_t dq0 = sw128_desc(q_base, 16, 1024);
    const std::uint64_t dk0 = sw128_desc(k_base, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      const std::uint32_t off = (kk % 4) * 32; // 16 elements inside the 128-byte row
      const std::uint32_t q_off = (kk / 4) * Cfg::kQColBlockBytes + off;
      const std::uint32_t k_off = (kk / 4) * Cfg::kKVColBlockBytes + off;
      const std::uint64_t dq =
          Cfg::kDescAdvance ? desc_advance(dq0, q_off) : sw128_desc(q_base + q_off, 16, 1024);
      const std::uint64_t dk =
          Cfg::kDescAdvance ? desc_advance(dk0, k_off) : sw128_desc(k_base + k_off, 16, 1024);
      if (kk == 0) {
        MmaS::run_zero(acc, dq, dk);
      } else {
        MmaS::run(acc, dq, dk, 1);
      }
    }
    wgmma_commit();
  }

  // Waits for V of block i (and zeroes padding rows). Called outside the GEMM turn: the
  // zeroing synchronises all consumer warpgroups.
  __device__ __forceinline__ void wait_v(int i) {
    const int st = Ring<Cfg>::stage(it_base + i);
    mbar_wait(ring.v_full(st), Ring<Cfg>::parity(it_base + i));
    const int n0 = (w.nb_begin + i) * BN;
    // Sequence-major tiles come without padded batches (sm90_fwd.cu refuses them).
    if (!kSeq && a.p.seqlens_k != nullptr && n0 + BN > w.s.k_len) {
      zero_padding_rows<Cfg>(smem + Cfg::kOffV + st * Cfg::kKVBytes, w.s.k_len - n0, wg, tid);
    }
  }

  template <int KS>
  __device__ __forceinline__ void issue_pv(int i, std::uint32_t (&p)[KS][4]) {
    const std::uint32_t v_base = smem + Cfg::kOffV + Ring<Cfg>::stage(it_base + i) * Cfg::kKVBytes;
    reg_fence(o);
    wgmma_fence();
    const std::uint64_t dv0 = sw128_desc(v_base, Cfg::kKVColBlockBytes, 1024);
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
      const std::uint64_t dv = kSeq ? seq_v_desc(v_base, kk, 0)
                               : Cfg::kDescAdvance
                                   ? desc_advance(dv0, kk * 2048)
                                   : sw128_desc(v_base + kk * 2048, Cfg::kKVColBlockBytes, 1024);
      MmaO::run(o, p[kk], dv, 1);
    }
    wgmma_commit();
  }

  // Sequence-major V, K-major for P V: k-step kk (16 keys) is 32 bytes into the 128-byte rows
  // of box kk / 4; the output columns from `col0` are the head-dim rows from col0.
  static __device__ __forceinline__ std::uint64_t seq_v_desc(std::uint32_t v_base, int kk,
                                                             int col0) {
    return sw128_desc(v_base + (kk / 4) * Cfg::kSeqBoxBytes + (kk % 4) * 32 + col0 * 128, 16, 1024);
  }

  __device__ __forceinline__ void rescale_o() {
    if (Cfg::kLazyRescale && !rescale_due) { // warp-uniform
      return;
    }
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
      o[4 * j] *= corr[0];
      o[4 * j + 1] *= corr[0];
      o[4 * j + 2] *= corr[1];
      o[4 * j + 3] *= corr[1];
    }
  }

  // Scores of block i -> unnormalised probabilities, and corr for the older rows of O.
  template <int R>
  __device__ __forceinline__ void softmax(int i, float (&acc)[R]) {
    if (a.softcap_mul > 0.f) {
      apply_softcap(acc, a.score_scale, a.softcap_mul);
    }
    const int n0 = (w.nb_begin + i) * BN;
    if (w.s.rule(a.p).tile_needs_mask(wg_row0, wg_row0 + 63, n0, 2 * R)) {
      apply_mask(acc, n0 + 2 * (lane % 4), keys0, keys1);
    }
    rescale_due = sm.template step<Cfg::kLazyRescale ? 8.f : 0.f>(acc, log2_mul, corr);
  }

  // Probabilities -> wgmma A fragments; only once the previous P V completed (wgmma reads its
  // A registers asynchronously).
  template <int R>
  __device__ __forceinline__ void pack_p(float (&acc)[R], std::uint32_t (&p)[R / 8][4]) {
#pragma unroll
    for (int kk = 0; kk < R / 8; ++kk) {
      p[kk][0] = pack2(acc[8 * kk + 0], acc[8 * kk + 1], Cfg::kBf16);
      p[kk][1] = pack2(acc[8 * kk + 2], acc[8 * kk + 3], Cfg::kBf16);
      p[kk][2] = pack2(acc[8 * kk + 4], acc[8 * kk + 5], Cfg::kBf16);
      p[kk][3] = pack2(acc[8 * kk + 6], acc[8 * kk + 7], Cfg::kBf16);
      reg_fence(p[kk]); // pin the conversions here, not between later wgmma issues
    }
  }

  __device__ __forceinline__ void release(std::uint32_t bar) const {
    __syncwarp();
    if (lane == 0) {
      mbar_arrive(bar);
    }
  }

  // Key block 0: S(0) in one turn (no P V yet), then its softmax and P(0).
  __device__ __forceinline__ void first_block() {
    mbar_wait(ring.k_full(Ring<Cfg>::stage(it_base)), Ring<Cfg>::parity(it_base));
    turn_wait<Cfg>(wg);
    issue_s(0, sc);
    turn_pass<Cfg>(wg);
    wgmma_wait<0>();
    reg_fence(sc);
    release(ring.k_empty(Ring<Cfg>::stage(it_base)));
    if (n_iter == 1) {
      release(ring.q_empty(qs));
    }
    softmax(0, sc);
    pack_p(sc, pa);
  }

  // Key block i >= 1: S(i) and P V(i - 1) (always a full block) in one turn, softmax(i) while
  // they run, then P(i).
  template <int R>
  __device__ __forceinline__ void step(int i, float (&acc)[R], std::uint32_t (&p)[R / 8][4]) {
    const int st = Ring<Cfg>::stage(it_base + i);
    mbar_wait(ring.k_full(st), Ring<Cfg>::parity(it_base + i));
    wait_v(i - 1);
    turn_wait<Cfg>(wg);
    issue_s(i, acc);
    if constexpr (!Cfg::kLateRescale) {
      rescale_o(); // by the factor of block i - 1, while S(i) runs
    }
    issue_pv(i - 1, pa);
    turn_pass<Cfg>(wg);
    wgmma_wait<1>();
    reg_fence(acc);
    release(ring.k_empty(st));
    if (i == n_iter - 1) {
      release(ring.q_empty(qs));
    }
    softmax(i, acc);
    wgmma_wait<0>();
    reg_fence(o);
    release(ring.v_empty(Ring<Cfg>::stage(it_base + i - 1)));
    if constexpr (Cfg::kLateRescale) {
      rescale_o(); // by block i's factor, now that P V(i - 1) has landed in O
    }
    pack_p(acc, p);
  }

  // The tile's last P V (outside the turn). Cfg::kSplitLastPv: as two column halves, the
  // first half's rows stored while the second half's GEMM runs; true when it stored them.
  template <int KS>
  __device__ __forceinline__ bool last_pv(std::uint32_t (&p)[KS][4]) {
    wait_v(n_iter - 1);
    if constexpr (!Cfg::kLateRescale) {
      rescale_o();
    }
    const int st = Ring<Cfg>::stage(it_base + n_iter - 1);
    if constexpr (Cfg::kSplitLastPv) {
      using MmaHalf = WgmmaRS<D / 2, Cfg::kBf16, !kSeq>;
      auto& o_lo = *reinterpret_cast<float(*)[kORegs / 2]>(&o[0]);
      auto& o_hi = *reinterpret_cast<float(*)[kORegs / 2]>(&o[kORegs / 2]);
      const std::uint32_t v_base = smem + Cfg::kOffV + st * Cfg::kKVBytes;
      reg_fence(o);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < KS; ++kk) {
        MmaHalf::run(o_lo, p[kk],
                     kSeq ? seq_v_desc(v_base, kk, 0)
                          : sw128_desc(v_base + kk * 2048, Cfg::kKVColBlockBytes, 1024),
                     1);
      }
      wgmma_commit();
#pragma unroll
      for (int kk = 0; kk < KS; ++kk) {
        MmaHalf::run(o_hi, p[kk],
                     kSeq ? seq_v_desc(v_base, kk, D / 2)
                          : sw128_desc(v_base + Cfg::kKVColBlockBytes + kk * 2048,
                                       Cfg::kKVColBlockBytes, 1024),
                     1);
      }
      wgmma_commit();
      float inv[2];
      float lse[2];
      sm.finish(log2_mul, inv, lse);
      wgmma_wait<1>();
      reg_fence(o_lo);
      store_output<Cfg, Probe, 0, D / 16>(a, w.t, w.s, o, inv, lse, row0, row1, lane);
      wgmma_wait<0>();
      reg_fence(o_hi);
      release(ring.v_empty(st));
      store_output<Cfg, Probe, D / 16, D / 8>(a, w.t, w.s, o, inv, lse, row0, row1, lane);
      return true;
    } else {
      issue_pv(n_iter - 1, p);
      wgmma_wait<0>();
      reg_fence(o);
      release(ring.v_empty(st));
      return false;
    }
  }

  // Key blocks 1.. and the last P V; true when that stored the rows (Cfg::kSplitLastPv).
  __device__ __forceinline__ bool blocks() {
    // Narrow last block: decided outside the loop so the loop body keeps one wgmma pipeline
    // (a run-time width choice inside it makes ptxas serialise the wgmma issues).
    bool narrow_tail = false;
    if constexpr (Cfg::kTailN > 0) {
      narrow_tail = n_iter > 1 && w.k_end - (w.nb_end - 1) * BN <= Cfg::kTailN;
    }
    const int n_full = narrow_tail ? n_iter - 1 : n_iter;
    for (int i = 1; i < n_full; ++i) {
      step(i, sc, pa);
    }
    if (narrow_tail) { // always false without Cfg::kTailN
      if constexpr (Cfg::kTailN > 0) {
        auto& sc_tail = *reinterpret_cast<float(*)[Cfg::kTailN / 2]>(&sc[0]);
        auto& pa_tail = *reinterpret_cast<std::uint32_t(*)[Cfg::kTailN / 16][4]>(&pa[0][0]);
        step(n_iter - 1, sc_tail, pa_tail);
        return last_pv(pa_tail);
      }
    }
    return last_pv(pa);
  }

  // Normalises O and stores it with the LSE.
  __device__ __forceinline__ void store() {
    float inv[2];
    float lse[2];
    sm.finish(log2_mul, inv, lse);
    store_output<Cfg, Probe>(a, w.t, w.s, o, inv, lse, row0, row1, lane);
  }
};

// One tile of consumer warpgroup wg: its key blocks, then the output rows (probe: probe.cuh).
template <class Cfg, class Probe>
__device__ __forceinline__ void consume_tile(const FwdArgs& a, std::uint32_t smem,
                                             const TileWork& w, int wg, int& it_base, int& q_count,
                                             const Probe& probe) {
  using T = TileMainloop<Cfg, Probe>;
  float o[T::kORegs];
#pragma unroll
  for (int i = 0; i < T::kORegs; ++i) {
    o[i] = 0.f;
  }
  OnlineSoftmax sm;
  float sc[T::kSRegs];
  std::uint32_t pa[T::BN / 16][4];
  float corr[2] = {1.f, 1.f};
  bool rescale_due = true;
  T t{.a = a,
      .smem = smem,
      .w = w,
      .wg = wg,
      .it_base = it_base,
      .qs = Ring<Cfg>::q_stage(q_count),
      .o = o,
      .sm = sm,
      .sc = sc,
      .pa = pa,
      .corr = corr,
      .rescale_due = rescale_due};
  probe.mark(kProbeTileStart);
  probe.tile(t.n_iter, w.t);
  bool stored = false; // the last P V stored the rows already (Cfg::kSplitLastPv)
  if (t.n_iter > 0) {
    mbar_wait(t.ring.q_full(t.qs), Ring<Cfg>::q_parity(q_count));
    probe.mark(kProbeQArrived);
    if (Cfg::kPingPong && wg == Cfg::kConsumerWGs - 1 && q_count == 0) {
      turn_pass<Cfg>(wg); // warpgroup 0 issues first, once per CTA
    }
    t.first_block();
    stored = t.blocks();
    probe.mark(kProbeMainloopDone);
    it_base += t.n_iter;
    ++q_count;
  }
  if (!stored) {
    t.store();
  }
  probe.mark(kProbeStored);
}

} // namespace kattn::cuda_kernels::sm90
