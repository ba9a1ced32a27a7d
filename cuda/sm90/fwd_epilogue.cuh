// Epilogue of the sm90 forward: normalise the output rows, store them (and the LSE) to global
// memory. Rows past the sequence are not written; an empty row stores 0 and LSE -inf.
#pragma once

#include <cmath>
#include <cstdint>

#include "fwd_config.cuh"
#include "ptx.cuh"
#include "seq_info.cuh"

namespace kattn::cuda_kernels::sm90 {

// 4 x 4 transpose of 32-bit words across the lanes of a quad: lane q ends with word q of each
// lane, in lane order. In the accumulator layout a quad holds 8 adjacent output columns per
// 32-bit word index; after the transpose each lane holds 8 columns of 4 adjacent word indices,
// i.e. 16 contiguous bytes of the row.
__device__ __forceinline__ void quad_transpose(std::uint32_t (&x)[4], int q) {
#pragma unroll
  for (int m = 1; m <= 2; m *= 2) {
    const bool upper = (q & m) != 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if ((k & m) == 0) {
        const std::uint32_t recv = __shfl_xor_sync(0xffffffffu, upper ? x[k] : x[k | m], m);
        if (upper) {
          x[k] = recv;
        } else {
          x[k | m] = recv;
        }
      }
    }
  }
}

// Where output row `row` of tile t goes: writes (padded batches own rows [q_len, T) too: they
// get 0 and LSE -inf), the factor its values take (a select, not a multiply: padding rows may
// hold NaN computed from garbage padding queries) and its element offset in out.
template <class TileT>
__device__ __forceinline__ void out_row(const FlashFwdParams& p, const TileT& t, const SeqInfo& s,
                                        int row, float inv, bool& writes, float& scale,
                                        std::int64_t& base) {
  const bool packed = p.cu_seqlens_q != nullptr;
  const bool valid = row < s.q_len;
  writes = valid || (!packed && row < p.T);
  scale = valid ? inv : 0.f;
  base = packed ? static_cast<std::int64_t>(s.q_row0 + row) * p.o_row_stride +
                      static_cast<std::int64_t>(t.head) * p.o_head_stride
                : static_cast<std::int64_t>(t.batch) * p.o_batch_stride +
                      static_cast<std::int64_t>(row) * p.o_row_stride +
                      static_cast<std::int64_t>(t.head) * p.o_head_stride;
}

// The LSE of this thread's two rows (one lane per quad), -inf past the sequence.
template <class TileT>
__device__ __forceinline__ void store_lse(const FlashFwdParams& p, const TileT& t, const SeqInfo& s,
                                          int row0, int row1, const bool (&writes)[2],
                                          const float (&lse)[2], int lane) {
  const bool packed = p.cu_seqlens_q != nullptr;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = r == 0 ? row0 : row1;
    if (writes[r] && p.lse != nullptr && lane % 4 == 0) {
      const std::int64_t li = packed
                                  ? static_cast<std::int64_t>(t.head) * p.lse_head_stride +
                                        static_cast<std::int64_t>(s.q_row0 + row) * p.lse_row_stride
                                  : static_cast<std::int64_t>(t.batch) * p.lse_batch_stride +
                                        static_cast<std::int64_t>(t.head) * p.lse_head_stride +
                                        static_cast<std::int64_t>(row) * p.lse_row_stride;
      p.lse[li] = row < s.q_len ? lse[r] : -INFINITY;
    }
  }
}

// Stores output columns [8 kJ0, 8 kJ1) of this thread's two rows; the part that ends the row
// also stores the LSE (Cfg::kSplitLastPv stores each half as soon as its P V has landed).
// Probe::kStoreOutput false (an A/B-tool probe, probe.cuh): computed, not stored.
template <class Cfg, class Probe, int kJ0 = 0, int kJ1 = Cfg::kHeadDim / 8, class TileT>
__device__ __forceinline__ void store_output(const FwdArgs& a, const TileT& t, const SeqInfo& s,
                                             const float (&o)[Cfg::kHeadDim / 2],
                                             const float (&inv)[2], const float (&lse)[2], int row0,
                                             int row1, int lane) {
  constexpr int D = Cfg::kHeadDim;
  const FlashFwdParams& p = a.p;
  auto* out = static_cast<std::uint16_t*>(p.out);
  bool writes[2];
  float scale[2];
  std::int64_t base[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    out_row(p, t, s, r == 0 ? row0 : row1, inv[r], writes[r], scale[r], base[r]);
  }
  // Row r, columns 8 j + 2 (lane % 4) + {0, 1}, as a packed pair (converted per store, not
  // all up front: the epilogue then needs few registers beyond O).
  const auto packed_word = [&](int r, int j) -> std::uint32_t {
    const bool valid = (r == 0 ? row0 : row1) < s.q_len;
    return valid ? pack2(o[4 * j + 2 * r] * scale[r], o[4 * j + 2 * r + 1] * scale[r], Cfg::kBf16)
                 : 0u;
  };
  if (a.out_vec16) {
    // 16-byte stores: a quad writes 64 contiguous bytes of a row per instruction instead of 16
    // (4-byte stores held each warpgroup ~2 us per tile, measured by tile trace).
    const int q = lane % 4;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
#pragma unroll
      for (int c = kJ0 / 4; c < kJ1 / 4; ++c) {
        std::uint32_t x[4] = {packed_word(r, 4 * c), packed_word(r, 4 * c + 1),
                              packed_word(r, 4 * c + 2), packed_word(r, 4 * c + 3)};
        quad_transpose(x, q); // all lanes, before any row is skipped
        if constexpr (!Probe::kStoreOutput) {
          asm volatile("" ::"r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]));
        } else if (writes[r]) {
          *reinterpret_cast<uint4*>(out + base[r] + 32 * c + 8 * q) =
              make_uint4(x[0], x[1], x[2], x[3]);
        }
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (writes[r]) {
#pragma unroll
        for (int j = kJ0; j < kJ1; ++j) {
          *reinterpret_cast<std::uint32_t*>(out + base[r] + 8 * j + 2 * (lane % 4)) =
              packed_word(r, j);
        }
      }
    }
  }
  if (kJ1 == D / 8 && Probe::kStoreOutput) {
    store_lse(p, t, s, row0, row1, writes, lse, lane);
  }
}

} // namespace kattn::cuda_kernels::sm90
