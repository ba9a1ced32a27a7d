// The sm80 backward kernel (dK, dV and the dQ contributions), FlashAttention-2 order: one CTA per
// (key block, KV head, batch) keeps its K and V tiles in shared memory and walks every query
// block of every query head of its group that sees them (GQA/MQA sum dK, dV in registers, no
// atomics). Per query block, with P = exp2(S * scale * log2 e - LSE * log2 e):
//   S^T = K Q^T, dP^T = V dO^T                 (this warp's 16 keys x 64 queries)
//   dS^T = P^T (dP^T - D) * scale (* the softcap's 1 - tanh^2)
//   dV += P^T dO, dK += dS^T Q                 (A operands straight from the registers)
//   dQ (fp32 atomics into dq_accum) += dS K    (dS^T through shared memory, ldmatrix.trans)
// With p.dq_kernel (deterministic mode, head dim 128) the dQ step is skipped: bwd_dq_kernel.cuh
// computes dQ on its own.
// The next block's Q and dO loads are issued once dS^T is in shared memory, so they overlap the
// dQ product. D and the dq conversion are the row passes of common/bwd_rows.cuh.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/bwd_scores.cuh"
#include "kattn_kernels/bwd_geometry.hpp"
#include "sm80/bwd_config.cuh"
#include "sm80/kernel_traits.cuh"
#include "sm80/mainloop.cuh"
#include "sm80/ptx.cuh"
#include "sm80/softmax.cuh"
#include "sm80/tile_copy.cuh"

namespace kattn::cuda_kernels::sm80 {

// Scores of this warp's keys against one query block -> P^T (in st) and dS^T (in dpt), fp32.
// Element e of n-tile nt is key kw0 + g + 8 (e / 2), query column nt * 8 + 2t + e % 2.
template <int BM>
__device__ __forceinline__ void
probs_and_dscores(float (&st)[1][BM / 8][4], float (&dpt)[1][BM / 8][4], const ScoreGrad& sg,
                  const BasicMaskRule<int>& rule, bool masked, int m0, int kw0, const float* sLse2,
                  const float* sD, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int nt = 0; nt < BM / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int c = nt * 8 + 2 * t + (e & 1);
      const bool visible = !masked || rule.visible(m0 + c, kw0 + g + 8 * (e >> 1));
      st[0][nt][e] = sg(st[0][nt][e], dpt[0][nt][e], sLse2[c], sD[c], visible);
    }
}

// dq[HD / 8][4] = dS K for this warp's 16 query rows: A = dS from the key-major dS^T tile
// (ldmatrix.trans), B = K (ldmatrix.trans, keys are the k dimension).
template <class Elem, int HD, int BM, int BN>
__device__ __forceinline__ void gemm_dq(float (&dq)[HD / 8][4], std::uint32_t sdS, std::uint32_t sK,
                                        std::uint32_t lane_ds, std::uint32_t lane_k, int warp) {
#pragma unroll
  for (int dt = 0; dt < HD / 8; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dq[dt][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < BN / 16; ++kk) {
    std::uint32_t a[4];
    ldmatrix_x4_trans(a, sdS + swizzled<BM>(lane_ds, kk * 16, 2 * warp));
#pragma unroll
    for (int np = 0; np < HD / 16; ++np) {
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, sK + swizzled<HD>(lane_k, kk * 16, 2 * np));
      ElemOps<Elem>::mma(dq[2 * np], a, b[0], b[1]);
      ElemOps<Elem>::mma(dq[2 * np + 1], a, b[2], b[3]);
    }
  }
}

template <class Elem, int HD>
__global__ void __launch_bounds__(BwdConfig<HD>::THREADS, 1)
    bwd_kernel(const __grid_constant__ FlashBwdParams p) {
  using C = BwdConfig<HD>;
  constexpr int BM = C::BLOCK_M, BN = C::BLOCK_N, DT = HD / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Elem* sK = reinterpret_cast<Elem*>(smem_raw);
  Elem* sV = sK + C::KV_ELEMS;
  Elem* sQ = sV + C::KV_ELEMS;
  Elem* sdO = sQ + C::Q_ELEMS;
  Elem* sdS = sdO + C::Q_ELEMS;
  float* sLse2 = reinterpret_cast<float*>(sdS + C::DS_ELEMS);
  float* sD = sLse2 + BM;

  const FlashFwdParams& f = p.fwd;
  const int b = static_cast<int>(blockIdx.z), kv = static_cast<int>(blockIdx.y);
  const int n0 = static_cast<int>(blockIdx.x) * BN;
  const SeqSpan<int> seq = seq_span(f, b);
  const int key_rows = key_rows_written(f, seq);
  if (n0 >= key_rows)
    return; // packed varlen: this sequence has fewer keys than S
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
  const int kw0 = n0 + warp * 16; // this warp's first key
  const BasicMaskRule<int> rule = mask_rule(f, seq);
  const IndexRange<int> rows = rule.rows_of_keys(n0, min(n0 + BN, seq.k_len) - 1);
  const int m_begin = rows.lo / BM;
  const int m_count = rows.hi > rows.lo ? (rows.hi + BM - 1) / BM - m_begin : 0;
  const int group = f.N / f.K;
  const BwdRowOffsets kvoff = bwd_row_offsets(p, seq, b, kv * group, kv);

  float dk[1][DT][4], dv[1][DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dk[0][dt][e] = dv[0][dt][e] = 0.f;

  const int total = group * m_count; // (query head, query block) steps
  if (total > 0) {
    const RowOffsets koff = row_offsets(f, seq, b, kv * group);
    copy_tile_async<HD, BN, C::THREADS>(
        sK, static_cast<const Elem*>(f.k) + koff.k + n0 * f.k_row_stride, f.k_row_stride,
        seq.k_len - n0, tid);
    copy_tile_async<HD, BN, C::THREADS>(
        sV, static_cast<const Elem*>(f.v) + koff.v + n0 * f.v_row_stride, f.v_row_stride,
        seq.k_len - n0, tid);
    // Step `it`: query head kv * group + it / m_count, block m_begin + it % m_count.
    auto head_of = [&](int it) { return kv * group + it / m_count; };
    auto m0_of = [&](int it) { return (m_begin + it % m_count) * BM; };
    auto acc0_of = [&](int it) { return head_of(it) * p.acc_rows + acc_row0<false>(p, seq, b); };
    auto issue = [&](int it) {
      const int n = head_of(it), m0 = m0_of(it);
      const RowOffsets off = row_offsets(f, seq, b, n);
      const BwdRowOffsets boff = bwd_row_offsets(p, seq, b, n, kv);
      copy_tile_async<HD, BM, C::THREADS>(
          sQ, static_cast<const Elem*>(f.q) + off.q + m0 * f.q_row_stride, f.q_row_stride,
          seq.q_len - m0, tid);
      copy_tile_async<HD, BM, C::THREADS>(
          sdO, static_cast<const Elem*>(p.dout) + boff.dout + m0 * p.do_row_stride, p.do_row_stride,
          seq.q_len - m0, tid);
      cp_async_commit();
      if (tid < BM) {
        const int i = m0 + tid;
        const bool valid = i < seq.q_len;
        sLse2[tid] = valid ? lse_log2(f.lse[off.lse + i * f.lse_row_stride]) : 0.f;
        sD[tid] = valid ? p.dsum[acc0_of(it) + i] : 0.f;
      }
    };

    const LaneOffsets lo = lane_offsets<HD>(warp * 16, lane);
    const std::uint32_t lane_ds = lane_offset<BM>((lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
    const std::uint32_t aK = smem_addr(sK), aV = smem_addr(sV), aQ = smem_addr(sQ),
                        adO = smem_addr(sdO), adS = smem_addr(sdS);
    const std::uint32_t no_regs[1][1][4] = {};
    issue(0);
    for (int it = 0; it < total; ++it) {
      const int m0 = m0_of(it);
      cp_async_wait<0>();
      __syncthreads(); // Q, dO, LSE, D of this step (and K, V) landed

      float st[1][BM / 8][4], dpt[1][BM / 8][4];
#pragma unroll
      for (int nt = 0; nt < BM / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          st[0][nt][e] = dpt[0][nt][e] = 0.f;
      gemm_qk<Elem, HD, 1, BM, false>(st, no_regs, aK, aQ, lo);
      gemm_qk<Elem, HD, 1, BM, false>(dpt, no_regs, aV, adO, lo);
      const bool masked = m0 + BM > seq.q_len || rule.tile_needs_mask(m0, m0 + BM - 1, n0, BN);
      probs_and_dscores<BM>(st, dpt, ScoreGrad(f), rule, masked, m0, kw0, sLse2, sD, lane);
      gemm_pv<Elem, HD, 1, BM>(dv, st, adO, lo);
      gemm_pv<Elem, HD, 1, BM>(dk, dpt, aQ, lo);
      if (C::ATOMIC_DQ && !p.dq_kernel)
#pragma unroll
        for (int nt = 0; nt < BM / 8; ++nt)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            *reinterpret_cast<std::uint32_t*>(sdS + tile_offset<BM>(warp * 16 + g + 8 * h, nt) +
                                              2 * t) =
                ElemOps<Elem>::pack(dpt[0][nt][2 * h], dpt[0][nt][2 * h + 1]);
      __syncthreads(); // dS^T complete; Q, dO, LSE and D of this step are no longer read
      if (it + 1 < total)
        issue(it + 1);
      if (!C::ATOMIC_DQ || p.dq_kernel)
        continue; // dQ comes from bwd_dq_kernel, in a fixed order

      float dq[DT][4];
      gemm_dq<Elem, HD, BM, BN>(dq, adS, aK, lane_ds, lo.v, warp);
      float* acc = p.dq_accum + acc0_of(it) * HD;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = m0 + warp * 16 + g + 8 * h;
        if (i < seq.q_len)
#pragma unroll
          for (int dt = 0; dt < DT; ++dt) {
            atomicAdd(acc + static_cast<std::int64_t>(i) * HD + dt * 8 + 2 * t, dq[dt][2 * h]);
            atomicAdd(acc + static_cast<std::int64_t>(i) * HD + dt * 8 + 2 * t + 1,
                      dq[dt][2 * h + 1]);
          }
      }
    }
  }

  // dK, dV of this warp's keys (0 for keys no query sees, and past k_len).
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int j = kw0 + g + 8 * h;
    if (j >= key_rows)
      continue;
    Elem* gdk = static_cast<Elem*>(p.dk) + kvoff.dk + j * p.dk_row_stride + 2 * t;
    Elem* gdv = static_cast<Elem*>(p.dv) + kvoff.dv + j * p.dv_row_stride + 2 * t;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
      *reinterpret_cast<std::uint32_t*>(gdk + dt * 8) =
          ElemOps<Elem>::pack(dk[0][dt][2 * h], dk[0][dt][2 * h + 1]);
      *reinterpret_cast<std::uint32_t*>(gdv + dt * 8) =
          ElemOps<Elem>::pack(dv[0][dt][2 * h], dv[0][dt][2 * h + 1]);
    }
  }
}

} // namespace kattn::cuda_kernels::sm80
