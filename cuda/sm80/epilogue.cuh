// Writes a warp's finished rows: O normalised by 1/l and rounded to Elem, staged through the
// warp's own rows of the Q tile (swizzled, conflict-free) so global stores are 16-byte and
// row-contiguous; LSE by one lane per row. Rows past the sequence get O = 0 and LSE = -inf
// (padded batches); rows past the tensor are not touched.
#pragma once

#include <cmath>
#include <cstdint>

#include "kattn_kernels/flash_params.hpp"
#include "sm80/block_info.cuh"
#include "sm80/kernel_traits.cuh"
#include "sm80/ptx.cuh"

namespace kattn::cuda_kernels::sm80 {

template <class Elem, int HD, int MT>
__device__ __forceinline__ void store_rows(const FlashFwdParams& p, const BlockInfo& bi, int m0,
                                           int warp_row0, Elem* sO, const float (&o)[MT][HD / 8][4],
                                           const float (&inv)[MT][2], const float (&lse)[MT][2],
                                           int lane) {
  const int g = lane >> 2, t = lane & 3;
  __syncwarp(); // this warp's last reads of its Q rows are done
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = warp_row0 + mt * 16 + g + 8 * h;
      const int i = m0 + row;
      const bool valid = i < bi.seq.q_len;
      const float f = valid ? inv[mt][h] : 0.f;
#pragma unroll
      for (int dt = 0; dt < HD / 8; ++dt)
        *reinterpret_cast<std::uint32_t*>(sO + tile_offset<HD>(row, dt) + 2 * t) =
            ElemOps<Elem>::pack(o[mt][dt][2 * h] * f, o[mt][dt][2 * h + 1] * f);
      if (p.lse != nullptr && t == 0 && i < bi.rows_out)
        p.lse[bi.off.lse + i * p.lse_row_stride] = valid ? lse[mt][h] : -INFINITY;
    }
  __syncwarp();
  constexpr int CHUNKS = HD / 8;
  Elem* out = static_cast<Elem*>(p.out) + bi.off.o;
#pragma unroll
  for (int it = 0; it < 16 * MT * CHUNKS / 32; ++it) {
    const int idx = lane + 32 * it;
    const int row = warp_row0 + idx / CHUNKS;
    const int chunk = idx % CHUNKS;
    const int i = m0 + row;
    if (i < bi.rows_out)
      *reinterpret_cast<uint4*>(out + i * p.o_row_stride + chunk * 8) =
          *reinterpret_cast<const uint4*>(sO + tile_offset<HD>(row, chunk));
  }
}

} // namespace kattn::cuda_kernels::sm80
