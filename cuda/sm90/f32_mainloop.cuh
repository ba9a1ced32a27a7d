// The consumer of the exact-fp32 forward (f32_config.cuh): one warpgroup, 64 query rows. Every
// product is three TF32 wgmmas on the split operands (big.big + big.small + small.big; the
// dropped small.small is 2^-22 |a||b|). Per 32-key block i >= 1: issue S(i) and P V(i - 1),
// softmax(i) while they run, then split P(i) once P V(i - 1) has landed. O's fold for block i
// (rescale, or every kFlushBlocks blocks an add into its fp32 copy in shared memory) waits until
// S(i + 1) is issued and runs under it.
#pragma once

#include <cstdint>

#include "common/fast_math.cuh"
#include "f32_config.cuh"
#include "fwd_epilogue.cuh"
#include "pipeline.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"
#include "softmax.cuh"
#include "wgmma_ops.cuh"

namespace kattn::cuda_kernels::sm90 {

// Output rows in fp32: 8-byte pairs where out allows them (F32FwdArgs::out_vec8), the LSE.
template <class Cfg>
__device__ __forceinline__ void
store_output_f32(const F32FwdArgs& a, const TileWork& w, const float (&o)[Cfg::kHeadDim / 2],
                 const float (&inv)[2], const float (&lse)[2], int row0, int row1, int lane) {
  const FlashFwdParams& p = a.p;
  auto* out = static_cast<float*>(p.out);
  bool writes[2];
  float scale[2];
  std::int64_t base[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    out_row(p, w.t, w.s, r == 0 ? row0 : row1, inv[r], writes[r], scale[r], base[r]);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (writes[r]) {
      const bool valid = (r == 0 ? row0 : row1) < w.s.q_len;
#pragma unroll
      for (int j = 0; j < Cfg::kHeadDim / 8; ++j) {
        const float x0 = valid ? o[4 * j + 2 * r] * scale[r] : 0.f;
        const float x1 = valid ? o[4 * j + 2 * r + 1] * scale[r] : 0.f;
        float* dst = out + base[r] + 8 * j + 2 * (lane % 4);
        if (a.out_vec8) {
          *reinterpret_cast<float2*>(dst) = make_float2(x0, x1);
        } else {
          dst[0] = x0;
          dst[1] = x1;
        }
      }
    }
  }
  store_lse(p, w.t, w.s, row0, row1, writes, lse, lane);
}

// One tile's registers (the consumer's arrays, by reference) and its steps.
template <class Cfg>
struct F32Mainloop {
  static constexpr int BN = Cfg::kBlockN;
  static constexpr int D = Cfg::kHeadDim;
  static constexpr int KS = BN / 8; // k8 steps of P V
  using MmaS = WgmmaSSTf32<BN>;
  using MmaO = WgmmaRSTf32<D>;

  const F32FwdArgs& a;
  const std::uint32_t smem;
  const TileWork& w;
  int& it_base;
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int lane = tid % 32;
  const int tile_row0 = w.t.m_block * Cfg::kBlockM;
  const int row0 = tile_row0 + (tid / 32) * 16 + lane / 4;
  const int row1 = row0 + 8;
  const IndexRange<int> keys0 = w.s.rule(a.p).row_keys(row0);
  const IndexRange<int> keys1 = w.s.rule(a.p).row_keys(row1);
  const Ring<Cfg> ring{smem + Cfg::kOffBar};
  const int n_iter = w.n_iter();
  float (&o)[D / 2];
  OnlineSoftmax& sm;
  float (&sc)[BN / 2];
  std::uint32_t (&pb)[KS][4];
  std::uint32_t (&ps)[KS][4];
  float (&corr)[2];

  __device__ __forceinline__ int stage(int i) const { return Ring<Cfg>::stage(it_base + i); }
  __device__ __forceinline__ std::uint32_t parity(int i) const {
    return Ring<Cfg>::parity(it_base + i);
  }

  // S(i) = Q K^T over the head dim in k8 steps: 32 bytes inside a 128-byte row, column block
  // kk / 4. Small terms first, into one accumulator.
  __device__ __forceinline__ void issue_s(int i) {
    const std::uint32_t q_big = smem + Cfg::kOffQ;
    const std::uint32_t k_big = smem + Cfg::kOffK + stage(i) * 2 * Cfg::kKPart;
    const std::uint64_t qb = sw128_desc(q_big, 16, 1024);
    const std::uint64_t qs = sw128_desc(q_big + Cfg::kQPart, 16, 1024);
    const std::uint64_t kb = sw128_desc(k_big, 16, 1024);
    const std::uint64_t ks = sw128_desc(k_big + Cfg::kKPart, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 8; ++kk) {
      const std::uint32_t in_row = (kk % 4) * 32;
      const std::uint32_t q_off = (kk / 4) * Cfg::kQColBlockBytes + in_row;
      const std::uint32_t k_off = (kk / 4) * Cfg::kKColBlockBytes + in_row;
      if (kk == 0) {
        MmaS::run_zero(sc, desc_advance(qs, q_off), desc_advance(kb, k_off));
      } else {
        MmaS::run(sc, desc_advance(qs, q_off), desc_advance(kb, k_off), 1);
      }
      MmaS::run(sc, desc_advance(qb, q_off), desc_advance(ks, k_off), 1);
      MmaS::run(sc, desc_advance(qb, q_off), desc_advance(kb, k_off), 1);
    }
    wgmma_commit();
  }

  // O += P(i) V(i): Vt's head-dim rows of 32 keys, k8 step kk 32 bytes into them.
  __device__ __forceinline__ void issue_pv(int i) {
    const std::uint32_t v_big = smem + Cfg::kOffV + stage(i) * 2 * Cfg::kVPart;
    const std::uint64_t vb = sw128_desc(v_big, 16, 1024);
    const std::uint64_t vs = sw128_desc(v_big + Cfg::kVPart, 16, 1024);
    reg_fence(o);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
      MmaO::run(o, ps[kk], desc_advance(vb, kk * 32), 1);
      MmaO::run(o, pb[kk], desc_advance(vs, kk * 32), 1);
      MmaO::run(o, pb[kk], desc_advance(vb, kk * 32), 1);
    }
    wgmma_commit();
  }

  __device__ __forceinline__ void softmax(int i) {
    if (a.softcap_mul > 0.f) {
      apply_softcap<true>(sc, a.score_scale, a.softcap_mul);
    }
    const int n0 = (w.nb_begin + i) * BN;
    if (w.s.rule(a.p).tile_needs_mask(tile_row0, tile_row0 + Cfg::kBlockM - 1, n0, BN)) {
      apply_mask(sc, n0 + 2 * (lane % 4), keys0, keys1);
    }
    sm.template step<0.f>(sc, a.softmax_log2, corr);
  }

  // P -> big and small A fragments. Accumulator registers 4 kk + {0, 1} are keys 2 t, 2 t + 1
  // of row g, + {2, 3} of row g + 8; the fragment wants k index t then t + 4, which Vt's key
  // order matches (f32_split.cuh). Only once the last P V completed (wgmma reads them late).
  __device__ __forceinline__ void split_p() {
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) {
      const float x[4] = {sc[4 * kk], sc[4 * kk + 2], sc[4 * kk + 1], sc[4 * kk + 3]};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        tf32_split(x[e], pb[kk][e], ps[kk][e]);
      }
      reg_fence(pb[kk]);
      reg_fence(ps[kk]);
    }
  }

  __device__ __forceinline__ void rescale_o() {
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
      o[4 * j] *= corr[0];
      o[4 * j + 1] *= corr[0];
      o[4 * j + 2] *= corr[1];
      o[4 * j + 3] *= corr[1];
    }
  }

  // O's fp32 copy in shared memory (f32_config.cuh kFlushBlocks): this thread's chunk c holds
  // o[4c .. 4c + 3] (row0's two columns, then row1's).
  __device__ __forceinline__ std::uint32_t copy_at(int c) const {
    return smem + Cfg::kOffAcc + (c * 128 + tid) * 16;
  }

  // copy = copy * keep + O (O alone when `first`), rounded to nearest; O restarts at 0.
  __device__ __forceinline__ void flush_o(bool first, const float (&keep)[2]) {
#pragma unroll
    for (int c = 0; c < D / 8; ++c) {
      float x[4] = {0.f, 0.f, 0.f, 0.f};
      if (!first) {
        asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                     : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                     : "r"(copy_at(c)));
      }
      float y[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        y[e] = fmaf(x[e], keep[e / 2], o[4 * c + e]);
        o[4 * c + e] = 0.f;
      }
      asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(copy_at(c)), "f"(y[0]),
                   "f"(y[1]), "f"(y[2]), "f"(y[3])
                   : "memory");
    }
  }

  // O += copy * keep: the whole sum, for the epilogue.
  __device__ __forceinline__ void merge_o(const float (&keep)[2]) {
#pragma unroll
    for (int c = 0; c < D / 8; ++c) {
      float x[4];
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                   : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                   : "r"(copy_at(c)));
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        o[4 * c + e] = fmaf(x[e], keep[e / 2], o[4 * c + e]);
      }
    }
  }

  __device__ __forceinline__ void release(std::uint32_t bar) const {
    __syncwarp();
    if (lane == 0) {
      mbar_arrive(bar);
    }
  }

  // The tile's Q landed raw in the big slot: big in place, small into its own slot (the same
  // swizzled layout, so element for element), then made visible to the wgmma (async) proxy.
  __device__ __forceinline__ void split_q() {
    const std::uint32_t q_big = smem + Cfg::kOffQ;
#pragma unroll 4
    for (int c = tid; c < Cfg::kQPart / 16; c += 128) {
      const std::uint32_t at = q_big + 16 * c;
      float x[4];
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                   : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                   : "r"(at));
      std::uint32_t b[4], sm_part[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        tf32_split(x[e], b[e], sm_part[e]);
      }
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(b[0]), "r"(b[1]),
                   "r"(b[2]), "r"(b[3])
                   : "memory");
      asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(at + Cfg::kQPart),
                   "r"(sm_part[0]), "r"(sm_part[1]), "r"(sm_part[2]), "r"(sm_part[3])
                   : "memory");
    }
    fence_proxy_async();
    named_bar_sync(1, Cfg::kConsumerThreads);
  }

  __device__ __forceinline__ void run(int q_count) {
    mbar_wait(ring.q_full(0), Ring<Cfg>::q_parity(q_count));
    split_q();
    mbar_wait(ring.k_full(stage(0)), parity(0));
    issue_s(0);
    wgmma_wait<0>();
    reg_fence(sc);
    release(ring.k_empty(stage(0)));
    if (n_iter == 1) {
      release(ring.q_empty(0));
    }
    softmax(0);
    split_p();
    // The copy times `keep` is at O's scale (the running max's): keep collects the blocks'
    // factors since the last flush.
    float keep[2] = {1.f, 1.f};
    bool copied = false;
    // Block i's fold (O rescaled by its factor, or every kFlushBlocks blocks added into the
    // copy and restarted) runs under S(i + 1)'s wgmmas: O is idle until P V(i) is issued, and
    // corr is block i's until softmax(i + 1).
    const auto fold = [&](int i) {
      if (i % Cfg::kFlushBlocks == 0) {
        flush_o(!copied, keep); // O (blocks up to i - 1) into the copy, restarted at 0
        copied = true;
        keep[0] = corr[0];
        keep[1] = corr[1];
      } else {
        rescale_o();
        keep[0] *= corr[0];
        keep[1] *= corr[1];
      }
    };
    for (int i = 1; i < n_iter; ++i) {
      mbar_wait(ring.k_full(stage(i)), parity(i));
      issue_s(i);
      if (i >= 2) {
        fold(i - 1);
      }
      mbar_wait(ring.v_full(stage(i - 1)), parity(i - 1));
      issue_pv(i - 1);
      wgmma_wait<1>();
      reg_fence(sc);
      release(ring.k_empty(stage(i)));
      if (i == n_iter - 1) {
        release(ring.q_empty(0));
      }
      softmax(i);
      wgmma_wait<0>();
      reg_fence(o);
      release(ring.v_empty(stage(i - 1)));
      split_p();
    }
    if (n_iter >= 2) {
      fold(n_iter - 1);
    }
    mbar_wait(ring.v_full(stage(n_iter - 1)), parity(n_iter - 1));
    issue_pv(n_iter - 1);
    wgmma_wait<0>();
    reg_fence(o);
    release(ring.v_empty(stage(n_iter - 1)));
    if (copied) {
      merge_o(keep);
    }
  }
};

// One tile of the consumer warpgroup: its key blocks, then its output rows.
template <class Cfg>
__device__ __forceinline__ void consume_f32_tile(const F32FwdArgs& a, std::uint32_t smem,
                                                 const TileWork& w, int& it_base, int& q_count) {
  using M = F32Mainloop<Cfg>;
  float o[M::D / 2];
#pragma unroll
  for (int i = 0; i < M::D / 2; ++i) {
    o[i] = 0.f;
  }
  OnlineSoftmax sm;
  float sc[M::BN / 2];
  std::uint32_t pb[M::KS][4];
  std::uint32_t ps[M::KS][4];
  float corr[2] = {1.f, 1.f};
  M m{.a = a,
      .smem = smem,
      .w = w,
      .it_base = it_base,
      .o = o,
      .sm = sm,
      .sc = sc,
      .pb = pb,
      .ps = ps,
      .corr = corr};
  if (m.n_iter > 0) {
    m.run(q_count);
    it_base += m.n_iter;
    ++q_count;
  }
  float inv[2];
  float lse[2];
  sm.finish(a.softmax_log2, inv, lse);
  store_output_f32<Cfg>(a, w, o, inv, lse, m.row0, m.row1, m.lane);
}

} // namespace kattn::cuda_kernels::sm90
