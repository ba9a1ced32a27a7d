// The sm80 forward kernel: one CTA per (query block, head, batch), FlashAttention-2 order.
// Runtime flags (causal/window, alignment, GQA, varlen, padding, softcap, LSE) are switched
// inside; only the element type and head dim are template parameters.
//
// Pipeline per key tile (single K and V buffers, cp.async):
//   wait K[j] -> issue V[j] -> S = Q K[j]^T, softcap, mask -> wait V[j] -> issue K[j-1]
//   -> online softmax -> O += P V[j]
// so V's load overlaps the QK^T product and the next K's load overlaps softmax and PV. Key
// tiles are walked from the last one down, so the tile with the sequence tail comes first.
#pragma once

#include <cmath>
#include <cstdint>

#include "kattn_kernels/flash_params.hpp"
#include "sm80/block_info.cuh"
#include "sm80/epilogue.cuh"
#include "sm80/kernel_traits.cuh"
#include "sm80/mainloop.cuh"
#include "sm80/ptx.cuh"
#include "sm80/softmax.cuh"
#include "sm80/tile_copy.cuh"

namespace kattn::cuda_kernels::sm80 {

// Softcap (c * tanh(s * scale / c)) and mask (-inf) on this warp's score tile. Per row, the
// visible columns of the tile form one interval [lo, hi] (relative to this lane's first
// column), so each element costs two compares against compile-time column offsets.
template <int MT, int NT>
__device__ __forceinline__ void cap_and_mask(float (&s)[MT][NT][4], float softcap, float cap_in,
                                             bool masked, const BasicMaskRule<int>& rule, int row0,
                                             int j0, int lane) {
  const int g = lane >> 2, t = lane & 3;
  if (softcap > 0.f) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[mt][nt][e] = softcap * fast_tanh(s[mt][nt][e] * cap_in);
  }
  if (!masked)
    return;
  const int col0 = j0 + 2 * t; // key of this lane's column 0
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const IndexRange<int> keys = rule.row_keys(row0 + mt * 16 + g + 8 * h);
      const int lo = keys.lo - col0, hi = keys.hi - 1 - col0;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int c = nt * 8 + e;
          if (c < lo || c > hi)
            s[mt][nt][2 * h + e] = -INFINITY;
        }
    }
}

template <class Elem, int HD>
__global__ void __launch_bounds__(Config<HD>::THREADS, 1)
    fwd_kernel(const __grid_constant__ FlashFwdParams p) {
  using C = Config<HD>;
  constexpr int MT = C::MT, BLOCK_N = C::BLOCK_N, BLOCK_M = C::BLOCK_M;
  constexpr int NT = BLOCK_N / 8, DT = HD / 8;
  constexpr bool QR = C::Q_IN_REGS;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Elem* sQ = reinterpret_cast<Elem*>(smem_raw);
  Elem* sK = sQ + C::Q_ELEMS;
  Elem* sV = sK + C::KV_ELEMS;

  const BlockInfo bi = block_info(p);
  const int m0 = bi.m_block * BLOCK_M;
  if (m0 >= bi.rows_out)
    return; // packed varlen: this sequence is shorter than T
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int warp_row0 = warp * C::WARP_ROWS;

  const int q_len = bi.seq.q_len, k_len = bi.seq.k_len;
  // The windows come straight from the params (constant-bank operands in the loop).
  const BasicMaskRule<int> rule{q_len, k_len, bi.diag, p.window_left, p.window_right};
  const int m_last = min(m0 + BLOCK_M, q_len) - 1; // last valid row of the block
  const IndexRange<int> keys = rule.keys_of_rows(m0, m_last);
  const int n_min = keys.lo / BLOCK_N;
  const int n_max = keys.hi > keys.lo ? (keys.hi + BLOCK_N - 1) / BLOCK_N : n_min;

  const bool capped = p.softcap > 0.f;
  const float mult = (capped ? 1.f : p.scale) * 1.4426950408889634f;
  const float cap_in = capped ? p.scale / p.softcap : 0.f;

  float o[MT][DT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        o[mt][dt][e] = 0.f;
  OnlineSoftmax<MT> softmax;
  softmax.init();

  if (n_min < n_max) {
    const Elem* gQ = static_cast<const Elem*>(p.q) + bi.off.q + m0 * p.q_row_stride;
    const Elem* gK = static_cast<const Elem*>(p.k) + bi.off.k;
    const Elem* gV = static_cast<const Elem*>(p.v) + bi.off.v;
    auto load_k = [&](int nb) {
      copy_tile_async<HD, BLOCK_N, C::THREADS>(sK, gK + nb * BLOCK_N * p.k_row_stride,
                                               p.k_row_stride, k_len - nb * BLOCK_N, tid);
    };
    copy_tile_async<HD, BLOCK_M, C::THREADS>(sQ, gQ, p.q_row_stride, q_len - m0, tid);
    load_k(n_max - 1);
    cp_async_commit();

    const LaneOffsets lo = lane_offsets<HD>(warp_row0, lane);
    const std::uint32_t aQ = smem_addr(sQ), aK = smem_addr(sK), aV = smem_addr(sV);
    std::uint32_t qf[QR ? MT : 1][QR ? HD / 16 : 1][4];
    for (int nb = n_max - 1; nb >= n_min; --nb) {
      const int j0 = nb * BLOCK_N;
      cp_async_wait<0>();
      __syncthreads(); // K[nb] (and Q) landed; every warp is done with V[nb + 1]
      copy_tile_async<HD, BLOCK_N, C::THREADS>(sV, gV + j0 * p.v_row_stride, p.v_row_stride,
                                               k_len - j0, tid);
      cp_async_commit();
      if constexpr (QR) {
        if (nb == n_max - 1)
#pragma unroll
          for (int kk = 0; kk < HD / 16; ++kk) {
            std::uint32_t a[MT][4];
            load_q_frag<HD, MT>(a, aQ, lo.q, kk);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
              for (int r = 0; r < 4; ++r)
                qf[mt][kk][r] = a[mt][r];
          }
      }

      float s[MT][NT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s[mt][nt][e] = 0.f;
      gemm_qk<Elem, HD, MT, BLOCK_N, QR>(s, qf, aQ, aK, lo);
      const bool masked = rule.tile_needs_mask(m0, m_last, j0, BLOCK_N);
      if (capped || masked)
        cap_and_mask(s, p.softcap, cap_in, masked, rule, m0 + warp_row0, j0, lane);

      cp_async_wait<0>();
      __syncthreads(); // V[nb] landed; every warp is done with K[nb]
      if (nb > n_min) {
        load_k(nb - 1);
        cp_async_commit();
      }
      softmax.update(s, o, mult);
      gemm_pv<Elem, HD, MT, BLOCK_N>(o, s, aV, lo);
    }
  }

  float inv[MT][2], lse[MT][2];
  softmax.finish(mult, inv, lse);
  store_rows<Elem, HD, MT>(p, bi, m0, warp_row0, sQ, o, inv, lse, lane);
}

} // namespace kattn::cuda_kernels::sm80
