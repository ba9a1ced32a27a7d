// dQ of the deterministic backward (options.deterministic): one CTA per (query block, query
// head, batch) keeps its Q and dO rows and walks the key blocks they see, recomputing S and dP
// (two more products than the atomics path, no atomics: every dQ element is summed by one
// thread in key order, so repeated runs are bitwise equal). Per key block, for this warp's 16 rows:
//   S = Q K^T, dP = dO V^T, dS = P (dP - D) * scale (* the softcap's 1 - tanh^2), dQ += dS K
// K and V are double-buffered (the next block's cp.async overlaps this block's products). dQ is
// written in the element type; rows past a padded sequence get 0.
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

template <class Elem, int HD>
__global__ void __launch_bounds__(BwdConfig<HD>::THREADS, 1)
    bwd_dq_kernel(const __grid_constant__ FlashBwdParams p) {
  using C = BwdConfig<HD>;
  constexpr int BM = C::BLOCK_M, BN = C::BLOCK_N, DT = HD / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Elem* sQ = reinterpret_cast<Elem*>(smem_raw);
  Elem* sdO = sQ + C::Q_ELEMS;
  Elem* sKV = sdO + C::Q_ELEMS; // stage s: K at sKV + 2 s KV_ELEMS, V after it

  const FlashFwdParams& f = p.fwd;
  const int b = static_cast<int>(blockIdx.z), n = static_cast<int>(blockIdx.y);
  const int m0 = static_cast<int>(blockIdx.x) * BM;
  const SeqSpan<int> seq = seq_span(f, b);
  const int rows_out = rows_written(f, seq);
  if (m0 >= rows_out)
    return; // packed varlen: this sequence is shorter than T
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32, g = lane >> 2, t = lane & 3;
  const BasicMaskRule<int> rule = mask_rule(f, seq);
  const int m_last = min(m0 + BM, seq.q_len) - 1;
  const IndexRange<int> keys = rule.keys_of_rows(m0, m_last);
  const int n_min = keys.lo / BN;
  const int n_max = keys.hi > keys.lo ? (keys.hi + BN - 1) / BN : n_min;
  const RowOffsets off = row_offsets(f, seq, b, n);
  const BwdRowOffsets boff = bwd_row_offsets(p, seq, b, n, n / (f.N / f.K));
  const int row0 = m0 + warp * 16 + g; // this thread's rows: row0 and row0 + 8

  float dq[1][DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dq[0][dt][e] = 0.f;

  if (n_min < n_max) {
    float lse2[2], dsum[2];
    const std::int64_t acc0 = n * p.acc_rows + acc_row0<false>(p, seq, b);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = row0 + 8 * h;
      const bool valid = i < seq.q_len;
      lse2[h] = valid ? lse_log2(f.lse[off.lse + i * f.lse_row_stride]) : 0.f;
      dsum[h] = valid ? p.dsum[acc0 + i] : 0.f;
    }
    const Elem* gK = static_cast<const Elem*>(f.k) + off.k;
    const Elem* gV = static_cast<const Elem*>(f.v) + off.v;
    auto issue_kv = [&](int nb, int stage) {
      const int j0 = nb * BN;
      Elem* sK = sKV + 2 * stage * C::KV_ELEMS;
      copy_tile_async<HD, BN, C::THREADS>(sK, gK + j0 * f.k_row_stride, f.k_row_stride,
                                          seq.k_len - j0, tid);
      copy_tile_async<HD, BN, C::THREADS>(sK + C::KV_ELEMS, gV + j0 * f.v_row_stride,
                                          f.v_row_stride, seq.k_len - j0, tid);
      cp_async_commit();
    };
    copy_tile_async<HD, BM, C::THREADS>(sQ,
                                        static_cast<const Elem*>(f.q) + off.q + m0 * f.q_row_stride,
                                        f.q_row_stride, seq.q_len - m0, tid);
    copy_tile_async<HD, BM, C::THREADS>(
        sdO, static_cast<const Elem*>(p.dout) + boff.dout + m0 * p.do_row_stride, p.do_row_stride,
        seq.q_len - m0, tid);
    issue_kv(n_min, 0);

    const LaneOffsets lo = lane_offsets<HD>(warp * 16, lane);
    const std::uint32_t aQ = smem_addr(sQ), adO = smem_addr(sdO);
    const std::uint32_t no_regs[1][1][4] = {};
    const ScoreGrad sg(f);
    for (int nb = n_min; nb < n_max; ++nb) {
      const int stage = (nb - n_min) & 1;
      cp_async_wait<0>();
      __syncthreads(); // this block's K, V landed; every warp is done with the other stage
      if (nb + 1 < n_max)
        issue_kv(nb + 1, stage ^ 1);
      const std::uint32_t aK = smem_addr(sKV + 2 * stage * C::KV_ELEMS);
      const std::uint32_t aV = aK + C::KV_ELEMS * 2;

      float s[1][BN / 8][4], dp[1][BN / 8][4];
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[0][nt][e] = dp[0][nt][e] = 0.f;
      gemm_qk<Elem, HD, 1, BN, false>(s, no_regs, aQ, aK, lo);
      gemm_qk<Elem, HD, 1, BN, false>(dp, no_regs, adO, aV, lo);
      const int j0 = nb * BN;
      const bool masked = m0 + BM > seq.q_len || rule.tile_needs_mask(m0, m0 + BM - 1, j0, BN);
#pragma unroll
      for (int nt = 0; nt < BN / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int h = e >> 1;
          const bool visible = !masked || rule.visible(row0 + 8 * h, j0 + nt * 8 + 2 * t + (e & 1));
          (void)sg(s[0][nt][e], dp[0][nt][e], lse2[h], dsum[h], visible);
        }
      gemm_pv<Elem, HD, 1, BN>(dq, dp, aK, lo);
    }
  }

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int i = row0 + 8 * h;
    if (i >= rows_out)
      continue;
    const bool valid = i < seq.q_len;
    Elem* gdq = static_cast<Elem*>(p.dq) + boff.dq + i * p.dq_row_stride + 2 * t;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
      *reinterpret_cast<std::uint32_t*>(gdq + dt * 8) =
          ElemOps<Elem>::pack(valid ? dq[0][dt][2 * h] : 0.f, valid ? dq[0][dt][2 * h + 1] : 0.f);
  }
}

} // namespace kattn::cuda_kernels::sm80
