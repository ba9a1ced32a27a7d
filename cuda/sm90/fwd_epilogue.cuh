// Epilogue of the sm90 forward: normalise the output rows, store them (and the LSE) to global
// memory. Rows past the sequence are not written; an empty row stores 0 and LSE -inf.
#pragma once

#include <cmath>
#include <cstdint>

#include "fwd_config.cuh"
#include "ptx.cuh"
#include "seq_mask.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg, class TileT>
__device__ __forceinline__ void store_output(const FwdArgs& a, const TileT& t, const SeqInfo& s,
                                             const float (&o)[Cfg::kHeadDim / 2],
                                             const float (&inv)[2], const float (&lse)[2], int row0,
                                             int row1, int lane) {
  const FlashFwdParams& p = a.p;
  const bool packed = p.cu_seqlens_q != nullptr;
  auto* out = static_cast<std::uint16_t*>(p.out);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = r == 0 ? row0 : row1;
    const bool valid = row < s.q_len;
    // Padded batches own rows [q_len, T) too: they get 0 and LSE -inf.
    if (!(valid || (!packed && row < p.T))) {
      continue;
    }
    // Select, not multiply: padding rows may hold NaN computed from garbage padding queries.
    const float scale = valid ? inv[r] : 0.f;
    const std::int64_t base = packed ? static_cast<std::int64_t>(s.q_row0 + row) * p.o_row_stride +
                                           static_cast<std::int64_t>(t.head) * p.o_head_stride
                                     : static_cast<std::int64_t>(t.batch) * p.o_batch_stride +
                                           static_cast<std::int64_t>(row) * p.o_row_stride +
                                           static_cast<std::int64_t>(t.head) * p.o_head_stride;
#pragma unroll
    for (int j = 0; j < Cfg::kHeadDim / 8; ++j) {
      const int col = 8 * j + 2 * (lane % 4);
      *reinterpret_cast<std::uint32_t*>(out + base + col) =
          valid ? pack2(o[4 * j + 2 * r] * scale, o[4 * j + 2 * r + 1] * scale, Cfg::kBf16) : 0u;
    }
    if (p.lse != nullptr && lane % 4 == 0) {
      const std::int64_t li = packed
                                  ? static_cast<std::int64_t>(t.head) * p.lse_head_stride +
                                        static_cast<std::int64_t>(s.q_row0 + row) * p.lse_row_stride
                                  : static_cast<std::int64_t>(t.batch) * p.lse_batch_stride +
                                        static_cast<std::int64_t>(t.head) * p.lse_head_stride +
                                        static_cast<std::int64_t>(row) * p.lse_row_stride;
      p.lse[li] = valid ? lse[r] : -INFINITY;
    }
  }
}

} // namespace kattn::cuda_kernels::sm90
