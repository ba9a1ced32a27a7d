// The merge of a split run's partial rows (decode_kernel.cuh, SplitOut): one warp per output
// row (b, n, t) weighs split s by exp(lse_s - max lse), so out = sum w_s o_s / sum w_s and
// LSE = max + log(sum w_s). A split at the max (or every split of an empty row) weighs 1: an
// empty row stays out 0 / LSE -inf, a NaN partial stays NaN (mask_rule.hpp, row_is_empty).
#pragma once

#include <cmath>
#include <cstdint>

#include "decode/decode_config.cuh"
#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels::decode {

constexpr int kCombineWarps = 4;

__device__ __forceinline__ float split_weight(float lse, float mx) {
  return lse == mx ? 1.f : expf(lse - mx);
}

template <class Elem>
__global__ void __launch_bounds__(32 * kCombineWarps)
    decode_combine(const __grid_constant__ FlashFwdParams p, const SplitOut part) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t rows = static_cast<std::int64_t>(p.B) * p.N * p.T;
  const std::int64_t row =
      static_cast<std::int64_t>(blockIdx.x) * kCombineWarps + static_cast<int>(threadIdx.x) / 32;
  if (row >= rows)
    return;
  float mx = -INFINITY;
  for (int s = lane; s < part.splits; s += 32)
    mx = fmaxf(mx, part.lse[s * rows + row]);
#pragma unroll
  for (int d = 16; d > 0; d /= 2)
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, d));
  float sum = 0.f;
  for (int s = lane; s < part.splits; s += 32)
    sum += split_weight(part.lse[s * rows + row], mx);
#pragma unroll
  for (int d = 16; d > 0; d /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, d);
  // row = (b * N + n) * T + t
  const int t = static_cast<int>(row % p.T), n = static_cast<int>(row / p.T % p.N);
  const int b = static_cast<int>(row / (static_cast<std::int64_t>(p.T) * p.N));
  Elem* out =
      static_cast<Elem*>(p.out) + b * p.o_batch_stride + t * p.o_row_stride + n * p.o_head_stride;
  const float inv = 1.f / sum;
  for (int col = lane; col < p.Hv; col += 32) {
    float acc = 0.f;
    for (int s = 0; s < part.splits; ++s)
      acc += split_weight(part.lse[s * rows + row], mx) * part.o[(s * rows + row) * p.Hv + col];
    out[col] = Elem(acc * inv);
  }
  if (p.lse != nullptr && lane == 0)
    p.lse[b * p.lse_batch_stride + n * p.lse_head_stride + t * p.lse_row_stride] = mx + logf(sum);
}

} // namespace kattn::cuda_kernels::decode
