// The two tensor-core products of one key tile, per warp: S = Q K^T (Q from registers or
// shared memory, K from shared memory) and O += P V (P from the score registers, V from
// shared memory through ldmatrix.trans). Fragment layouts are those of mma.m16n8k16: a thread
// (g = lane / 4, t = lane % 4) holds rows g and g + 8, columns 2t and 2t + 1 of each 16 x 8
// accumulator tile, which is also P's A-fragment layout, so P never leaves registers.
#pragma once

#include <cstdint>

#include "sm80/kernel_traits.cuh"
#include "sm80/ptx.cuh"

namespace kattn::cuda_kernels::sm80 {

// Per-lane byte offsets (kernel_traits.cuh's lane_offset) of the three ldmatrix patterns.
struct LaneOffsets {
  std::uint32_t q, k, v;
};

template <int HD>
__device__ __forceinline__ LaneOffsets lane_offsets(int warp_row0, int lane) {
  LaneOffsets o;
  // A (Q rows, row-major): lanes 0-15 rows 0-15 at chunk 2k, lanes 16-31 at chunk 2k + 1.
  o.q = lane_offset<HD>(warp_row0 + (lane & 15), lane >> 4);
  // B of S (K rows = n): matrices (n 0-7, 2k), (n 0-7, 2k+1), (n 8-15, 2k), (n 8-15, 2k+1).
  o.k = lane_offset<HD>((lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
  // B of O (V rows = keys, transposed): (keys 0-7, 2n), (8-15, 2n), (0-7, 2n+1), (8-15, 2n+1).
  o.v = lane_offset<HD>(lane & 15, lane >> 4);
  return o;
}

// A fragments of the warp's Q rows for k-step kk (16 head-dim columns).
template <int HD, int MT>
__device__ __forceinline__ void load_q_frag(std::uint32_t (&a)[MT][4], std::uint32_t sQ,
                                            std::uint32_t lane_q, int kk) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
    ldmatrix_x4(a[mt], sQ + swizzled<HD>(lane_q, mt * 16, 2 * kk));
}

// s[MT][BLOCK_N / 8][4] += Q K^T for this warp's rows.
template <class Elem, int HD, int MT, int BLOCK_N, bool Q_IN_REGS>
__device__ __forceinline__ void
gemm_qk(float (&s)[MT][BLOCK_N / 8][4],
        const std::uint32_t (&qf)[Q_IN_REGS ? MT : 1][Q_IN_REGS ? HD / 16 : 1][4], std::uint32_t sQ,
        std::uint32_t sK, const LaneOffsets& lo) {
#pragma unroll
  for (int kk = 0; kk < HD / 16; ++kk) {
    std::uint32_t a[MT][4];
    if constexpr (Q_IN_REGS) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          a[mt][r] = qf[mt][kk][r];
    } else {
      load_q_frag<HD, MT>(a, sQ, lo.q, kk);
    }
#pragma unroll
    for (int np = 0; np < BLOCK_N / 16; ++np) {
      std::uint32_t b[4]; // B fragments of key n-tiles 2np and 2np + 1
      ldmatrix_x4(b, sK + swizzled<HD>(lo.k, np * 16, 2 * kk));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ElemOps<Elem>::mma(s[mt][2 * np], a[mt], b[0], b[1]);
        ElemOps<Elem>::mma(s[mt][2 * np + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

// o[MT][HD / 8][4] += P V, P = the probabilities in s rounded to Elem.
template <class Elem, int HD, int MT, int BLOCK_N>
__device__ __forceinline__ void gemm_pv(float (&o)[MT][HD / 8][4],
                                        const float (&s)[MT][BLOCK_N / 8][4], std::uint32_t sV,
                                        const LaneOffsets& lo) {
#pragma unroll
  for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
    std::uint32_t a[MT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      a[mt][0] = ElemOps<Elem>::pack(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      a[mt][1] = ElemOps<Elem>::pack(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      a[mt][2] = ElemOps<Elem>::pack(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      a[mt][3] = ElemOps<Elem>::pack(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
#pragma unroll
    for (int np = 0; np < HD / 16; ++np) {
      std::uint32_t b[4]; // B fragments of output n-tiles 2np and 2np + 1
      ldmatrix_x4_trans(b, sV + swizzled<HD>(lo.v, kk * 16, 2 * np));
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        ElemOps<Elem>::mma(o[mt][2 * np], a[mt], b[0], b[1]);
        ElemOps<Elem>::mma(o[mt][2 * np + 1], a[mt], b[2], b[3]);
      }
    }
  }
}

} // namespace kattn::cuda_kernels::sm80
