// The MUFU-based exp2 and tanh every CUDA kernel family's softmax and backward use, and the
// TF32 rounding of the fp32 kernels' 3xTF32 split.
#pragma once

#include <cstdint>

namespace kattn::cuda_kernels {

// 2^x in one MUFU instruction (flushes subnormal results to 0, which only drops weights below
// 2^-126 of the row maximum's).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// tanh(x) = 1 - 2 / (e^(2x) + 1): one MUFU exp and a fast divide; absolute error ~1e-7 (what
// the softmax sees), unlike tanh.approx's 2^-11 relative error. The clamp keeps e^(2x) finite.
__device__ __forceinline__ float fast_tanh(float x) {
  const float e2x = fast_exp2(fminf(x * 2.885390081777927f, 64.f));
  return 1.f - __fdividef(2.f, e2x + 1.f);
}

// x rounded to TF32 (nearest, ties away) in two integer ops: add half a TF32 ulp, clear the low
// 13 bits (cvt.rna costs a compare, a predicated add and the mask on sm_90). Equal to it for
// every non-NaN x; a NaN may come back as another NaN or as -0, so use it only where
// x - result carries the NaN on (the 3xTF32 split's small part).
__device__ __forceinline__ std::uint32_t to_tf32_finite(float x) {
  return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
}

// The 3xTF32 split every fp32 kernel uses: x = big + small, big = tf32(x), small exact in fp32
// (a NaN x leaves small NaN, so the product keeps it).
__device__ __forceinline__ void tf32_split(float x, std::uint32_t& big, std::uint32_t& small) {
  big = to_tf32_finite(x);
  small = __float_as_uint(x - __uint_as_float(big));
}

} // namespace kattn::cuda_kernels
