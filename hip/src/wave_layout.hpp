// Which elements of a 16x16 fp32 accumulator tile each lane of a wavefront holds. One layout for
// both paths: lane l holds column l % 16 of rows (l / 16) * R .. (l / 16) * R + R - 1, with
// R = 256 / W rows per lane. At W = 64 this is exactly the C/D layout of AMD's 16x16x16 MFMA
// instructions (4 fp32 per lane: row 4 * (l / 16) + r, column l % 16), so the softmax, mask and
// epilogue code below never needs to know which MMA produced the tile.
#pragma once

#include "gpu_compat.hpp"

namespace kattn::hip_kernels::detail {

template <int W>
struct WaveLayout {
  static_assert(W == 32 || W == 64, "wavefront width 32 (NVIDIA warp) or 64 (AMD CDNA)");
  static constexpr int kWidth = W;
  static constexpr int kRowsPerLane = 256 / W;
  // Lanes sharing a row are the 16 lanes l / 16 == const: reductions over a row use
  // xor-shuffles with offsets 8, 4, 2, 1 (they stay inside those 16 lanes).
  static __device__ __forceinline__ int row(int lane, int r) {
    return (lane / 16) * kRowsPerLane + r;
  }
  static __device__ __forceinline__ int col(int lane) { return lane % 16; }
};

template <int W>
__device__ __forceinline__ float row_max(float x) {
  for (int off = 8; off > 0; off /= 2)
    x = fmaxf(x, KATTN_GPU_SHFL_XOR(x, off));
  return x;
}

template <int W>
__device__ __forceinline__ float row_sum(float x) {
  for (int off = 8; off > 0; off /= 2)
    x += KATTN_GPU_SHFL_XOR(x, off);
  return x;
}

} // namespace kattn::hip_kernels::detail
