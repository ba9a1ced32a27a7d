// Online softmax over one wgmma accumulator tile (fp32, log2 domain). Each thread holds two
// rows (r and r + 8) of the warpgroup's 64; the four threads of a quad share a row.
#pragma once

#include <cmath>

#include "common/fast_math.cuh"
#include "ptx.cuh"
#include "seq_info.cuh"

namespace kattn::cuda_kernels::sm90 {

// softcap * tanh(scale * s / softcap), in place. The 16-bit kernels take tanh.approx (2^-11
// relative, below their inputs' rounding); kExact (the fp32 kernels) takes fast_tanh (~1e-7
// absolute).
template <bool kExact = false, int kRegs>
__device__ __forceinline__ void apply_softcap(float (&s)[kRegs], float pre, float cap) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) {
    s[i] = cap * (kExact ? fast_tanh(s[i] * pre) : tanh_approx(s[i] * pre));
  }
}

// Sets masked scores to -inf. col0: this thread's first column in the tile (absolute key).
template <int kRegs>
__device__ __forceinline__ void apply_mask(float (&s)[kRegs], int col0, IndexRange<int> r0,
                                           IndexRange<int> r1) {
#pragma unroll
  for (int j = 0; j < kRegs / 4; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int col = col0 + 8 * j + e;
      if (col < r0.lo || col >= r0.hi) {
        s[4 * j + e] = -INFINITY;
      }
      if (col < r1.lo || col >= r1.hi) {
        s[4 * j + 2 + e] = -INFINITY;
      }
    }
  }
}

struct OnlineSoftmax {
  float row_max[2] = {-INFINITY, -INFINITY}; // in score units
  float row_sum[2] = {0.f, 0.f};             // this thread's partial sums (quad-reduced at end)

  // Turns scores into unnormalised probabilities; returns in corr the factor the running output
  // rows must be multiplied by. log2_mul: score -> log2 units. kLazyMaxGrowth > 0: the running
  // max stays while no row of the warp grows it by more than that many log2 units (then corr is
  // 1 and the result false: the caller may skip rescaling O); true when O must be rescaled.
  template <float kLazyMaxGrowth = 0.f, int kRegs>
  __device__ __forceinline__ bool step(float (&s)[kRegs], float log2_mul, float (&corr)[2]) {
    float mx[2] = {row_max[0], row_max[1]};
#pragma unroll
    for (int j = 0; j < kRegs / 4; ++j) {
      mx[0] = fmaxf(mx[0], fmaxf(s[4 * j], s[4 * j + 1]));
      mx[1] = fmaxf(mx[1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
      mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
    }
    bool rescale = true;
    if constexpr (kLazyMaxGrowth > 0.f) {
      // From -inf the growth is +inf (rescale); -inf - -inf is NaN, compares false (nothing to
      // rescale: the row is still empty, O and the sum are 0).
      const bool grows = (mx[0] - row_max[0]) * log2_mul > kLazyMaxGrowth ||
                         (mx[1] - row_max[1]) * log2_mul > kLazyMaxGrowth;
      rescale = __any_sync(0xffffffffu, grows);
      if (!rescale) {
        mx[0] = row_max[0]; // corr below is exp2(0) = 1
        mx[1] = row_max[1];
      }
    }
    float base[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // A row with nothing visible yet keeps max -inf: subtract 0 so exp2 gives 0, never NaN.
      const float use = mx[r] == -INFINITY ? 0.f : mx[r];
      corr[r] = exp2_approx((row_max[r] - use) * log2_mul);
      row_max[r] = mx[r];
      base[r] = use * log2_mul;
      row_sum[r] *= corr[r];
    }
#pragma unroll
    for (int j = 0; j < kRegs / 4; ++j) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[4 * j + e] = exp2_approx(fmaf(s[4 * j + e], log2_mul, -base[0]));
        s[4 * j + 2 + e] = exp2_approx(fmaf(s[4 * j + 2 + e], log2_mul, -base[1]));
        row_sum[0] += s[4 * j + e];
        row_sum[1] += s[4 * j + 2 + e];
      }
    }
    return rescale;
  }

  // Quad-reduces the sums. Returns 1/sum (0 for an empty row) and the natural-log LSE.
  __device__ __forceinline__ void finish(float log2_mul, float (&inv)[2], float (&lse)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = row_sum[r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const bool empty = row_is_empty(sum);
      inv[r] = empty ? 0.f : 1.f / sum;
      lse[r] = empty ? -INFINITY : row_max[r] * log2_mul * 0.6931471805599453f + logf(sum);
    }
  }
};

} // namespace kattn::cuda_kernels::sm90
