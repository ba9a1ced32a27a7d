// Online softmax over key tiles (FlashAttention-2 style), in fp32 registers. Each thread holds
// two rows per m16 tile (g and g + 8 of its warp's 16); the 4 lanes sharing a row reduce with
// two shuffles. Scores are kept in raw units; `mult` (= scale * log2(e), or log2(e) when the
// softcap already applied the scale) turns them into base-2 exponents.
#pragma once

#include <cmath>

#include "common/fast_math.cuh"
#include "kattn_kernels/mask_rule.hpp"

namespace kattn::cuda_kernels::sm80 {

// Max and sum over the 4 lanes that share a row (float here, double in the f64 kernel).
template <class T>
__device__ __forceinline__ T quad_max(T x) {
  x = fmax(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmax(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
template <class T>
__device__ __forceinline__ T quad_sum(T x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

template <int MT>
struct OnlineSoftmax {
  float row_max[MT][2]; // raw-score max so far (-inf: nothing visible yet)
  float row_sum[MT][2]; // this thread's partial sum of exp2(s * mult - max * mult)

  __device__ __forceinline__ void init() {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        row_max[mt][h] = -INFINITY;
        row_sum[mt][h] = 0.f;
      }
  }

  // Turns the scores s (masked entries -inf) into unnormalised probabilities in place and
  // rescales the output accumulator o by exp2((old max - new max) * mult).
  template <int NT, int DT>
  __device__ __forceinline__ void update(float (&s)[MT][NT][4], float (&o)[MT][DT][4], float mult) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = row_max[mt][h];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
        mx = quad_max(mx);
        // A row with nothing visible yet keeps max -inf; exponent offset 0 keeps exp2 NaN-free.
        const float base = mx == -INFINITY ? 0.f : mx * mult;
        const float corr = fast_exp2(row_max[mt][h] * mult - base);
        row_max[mt][h] = mx;
        float sum = row_sum[mt][h] * corr;
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          o[mt][dt][2 * h] *= corr;
          o[mt][dt][2 * h + 1] *= corr;
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const float p0 = fast_exp2(fmaf(s[mt][nt][2 * h], mult, -base));
          const float p1 = fast_exp2(fmaf(s[mt][nt][2 * h + 1], mult, -base));
          s[mt][nt][2 * h] = p0;
          s[mt][nt][2 * h + 1] = p1;
          sum += p0 + p1;
        }
        row_sum[mt][h] = sum;
      }
  }

  // After the last tile: 1/l for each row (0 when nothing was visible) and the natural-log LSE
  // (-inf when nothing was visible).
  __device__ __forceinline__ void finish(float mult, float (&inv)[MT][2], float (&lse)[MT][2]) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float l = quad_sum(row_sum[mt][h]);
        const bool empty = row_is_empty(l);
        inv[mt][h] = empty ? 0.f : 1.f / l;
        lse[mt][h] = empty ? -INFINITY : (row_max[mt][h] * mult + log2f(l)) * 0.6931471805599453f;
      }
  }
};

} // namespace kattn::cuda_kernels::sm80
