// What the f32/f64 forward (wide_fwd_kernel.cuh) does differently per element type: its product
// on the tensor cores and its exp2/tanh.
//
//   f64: one f64 MMA (mma_f64_m16n8k8) per tile; CUDA's f64 exp2 and tanh: f64 rounding only.
//   f32: the 3xTF32 split (as CUTLASS's "fast fp32"): x = big + small with big = tf32(x) and
//        small = x - big (exact in fp32); a.b = big.big + big.small + small.big. big by integer
//        rounding (ptx.cuh's to_tf32_finite, 2 ops against cvt.rna's 4 in the SASS): 1.14-1.16x
//        the whole f32 forward on the H100 (benchmarks/results/h100-2026-12-06-cuda-f32.md). The
//        dropped small.small term (2^-22 |a||b|) and the MMA's truncation of small to TF32 (2^-21)
//        keep a product within 2^-21 |a||b| (fp32: 2^-24) at three TF32 MMAs; MUFU exp2 and the
//        16-bit kernels' tanh (relative ~1e-7). Rounding small to TF32 as well would halve the
//        second term (one more cvt per element): written, not measured (device time ran out).
//   f32 with options.allow_tf32 (WideMathTf32): the operands rounded to TF32 (cvt.rna, 2^-11
//        relative each), one MMA per product: within ~2^-10 |a||b|, a third of the MMAs.
// Fragments: a[4] and b[2] in the m16n8k8 layout of ptx.cuh. `prep_a`/`prep_b` convert a
// fragment once for all the MMAs that reuse it.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/fast_math.cuh"
#include "sm80/ptx.cuh"

namespace kattn::cuda_kernels::sm80 {

template <class T>
struct WideMath;

template <>
struct WideMath<double> {
  static constexpr const char* mode = "f64";
  using A = double[4];
  using B = double[2];
  __device__ __forceinline__ static void prep_a(A& out, const double (&a)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      out[i] = a[i];
  }
  __device__ __forceinline__ static void prep_b(B& out, const double (&b)[2]) {
    out[0] = b[0];
    out[1] = b[1];
  }
  __device__ __forceinline__ static void mma(double (&d)[4], const A& a, const B& b) {
    mma_f64_m16n8k8(d, a, b);
  }
  __device__ __forceinline__ static double exp2(double x) { return ::exp2(x); }
  __device__ __forceinline__ static double tanh(double x) { return ::tanh(x); }
};

// f32's exp2 and tanh, whatever its products: MUFU exp2 and the 16-bit kernels' tanh.
struct WideF32Functions {
  __device__ __forceinline__ static float exp2(float x) { return fast_exp2(x); }
  __device__ __forceinline__ static float tanh(float x) { return fast_tanh(x); }
};

template <>
struct WideMath<float> : WideF32Functions {
  static constexpr const char* mode = "3xtf32";
  struct A {
    std::uint32_t big[4], small[4];
  };
  struct B {
    std::uint32_t big[2], small[2];
  };
  template <int N>
  __device__ __forceinline__ static void split(std::uint32_t (&big)[N], std::uint32_t (&small)[N],
                                               const float (&x)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      big[i] = to_tf32_finite(x[i]); // a NaN x leaves small NaN
      small[i] = __float_as_uint(x[i] - __uint_as_float(big[i]));
    }
  }
  __device__ __forceinline__ static void prep_a(A& out, const float (&a)[4]) {
    split(out.big, out.small, a);
  }
  __device__ __forceinline__ static void prep_b(B& out, const float (&b)[2]) {
    split(out.big, out.small, b);
  }
  // Three TF32 MMAs into the one fp32 accumulator.
  __device__ __forceinline__ static void mma(float (&d)[4], const A& a, const B& b) {
    mma_tf32_m16n8k8(d, a.small, b.big);
    mma_tf32_m16n8k8(d, a.big, b.small);
    mma_tf32_m16n8k8(d, a.big, b.big);
  }
};

struct WideMathTf32 : WideF32Functions {
  static constexpr const char* mode = "tf32";
  using A = std::uint32_t[4];
  using B = std::uint32_t[2];
  template <int N>
  __device__ __forceinline__ static void round(std::uint32_t (&out)[N], const float (&x)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = to_tf32(x[i]);
  }
  __device__ __forceinline__ static void prep_a(A& out, const float (&a)[4]) { round(out, a); }
  __device__ __forceinline__ static void prep_b(B& out, const float (&b)[2]) { round(out, b); }
  __device__ __forceinline__ static void mma(float (&d)[4], const A& a, const B& b) {
    mma_tf32_m16n8k8(d, a, b);
  }
};

// The math of element type T, TF32 permitted or not (f64 ignores it).
template <class T, bool TF32>
struct WideMathFor {
  using type = WideMath<T>;
};
template <>
struct WideMathFor<float, true> {
  using type = WideMathTf32;
};

} // namespace kattn::cuda_kernels::sm80
