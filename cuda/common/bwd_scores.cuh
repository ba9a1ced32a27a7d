// One score's backward arithmetic, shared by the main kernel and the dq kernel: from the raw
// score x = q.k and dP = dO.v, the probability P = exp2(z log2 e - LSE log2 e) with z the scaled
// (and softcapped) score, and dS = P (dP - D) dz/dx, so that dQ = dS K and dK = dS^T Q need no
// further scaling. Masked scores give P = 0 and dS = 0 (selected, not multiplied: a masked
// score or dP may be NaN, from padding or a key the row does not see). Every backward family.
#pragma once

#include <cmath>

#include "common/fast_math.cuh"
#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels {

struct ScoreGrad {
  float scale, softcap, cap_in; // cap_in = scale / softcap (softcap > 0)
  float scale_log2;             // scale * log2 e

  __device__ __forceinline__ explicit ScoreGrad(const FlashFwdParams& f)
      : scale(f.scale), softcap(f.softcap), cap_in(f.softcap > 0.f ? f.scale / f.softcap : 0.f),
        scale_log2(f.scale * 1.4426950408889634f) {}

  // x: raw score; dp: dO.v (replaced by dS); lse2: LSE * log2 e (0 for rows without keys); d: D.
  // Returns P.
  __device__ __forceinline__ float operator()(float x, float& dp, float lse2, float d,
                                              bool visible) const {
    float z, dz_dx;
    if (softcap > 0.f) {
      const float th = fast_tanh(x * cap_in);
      z = softcap * th;
      dz_dx = scale * (1.f - th * th);
    } else {
      z = x * scale;
      dz_dx = scale;
    }
    const float pr = visible ? fast_exp2(z * 1.4426950408889634f - lse2) : 0.f;
    dp = visible ? pr * (dp - d) * dz_dx : 0.f;
    return pr;
  }

  // The same without a softcap, in two passes (P can then be used before dP is known): the
  // probability, then dS from it.
  __device__ __forceinline__ float prob(float x, float lse2, bool visible) const {
    return visible ? fast_exp2(x * scale_log2 - lse2) : 0.f;
  }
  __device__ __forceinline__ float dscore(float pr, float dp, float d, bool visible) const {
    return visible ? pr * (dp - d) * scale : 0.f;
  }
};

// LSE * log2 e as the kernels use it: a row without visible keys has LSE -inf and only masked
// scores, whose P is set to 0 without it.
__device__ __forceinline__ float lse_log2(float lse) {
  return lse == -INFINITY ? 0.f : lse * 1.4426950408889634f;
}

} // namespace kattn::cuda_kernels
