// What the f32/f64 forward (wide_fwd_kernel.cuh) does differently per element type: its product
// on the tensor cores and its exp2/tanh.
//
//   f64: one f64 MMA (mma_f64_m16n8k8) per tile; CUDA's f64 exp2 and tanh: f64 rounding only.
//   f32: the 3xTF32 split (as CUTLASS's "fast fp32"): x = big + small with big = tf32(x) and
//        small = x - big (exact in fp32); a.b = big.big + big.small + small.big. big by integer
//        rounding (common/fast_math.cuh's to_tf32_finite, 2 ops against cvt.rna's 4 in the
//        SASS): 1.14-1.16x the whole f32 forward on the H100
//        (benchmarks/results/h100-2026-12-06-cuda-f32.md). The dropped small.small term (2^-22
//        |a||b|) and the MMA's truncation of small to TF32 (2^-21) keep a product within 2^-21
//        |a||b| (fp32: 2^-24) at three TF32 MMAs; MUFU exp2 and the 16-bit kernels' tanh (relative
//        ~1e-7). Rounding small to TF32 as well would halve the second term (one more cvt per
//        element): written, not measured (device time ran out).
//        The MMA's fp32 accumulation truncates (round toward zero) each sum, a bias that grows
//        with the additions into one accumulator: O over all keys in one accumulator was 1.6x
//        the fp32 rule's error at S = 4096 (H100, run s35a). So kFreshTiles: each key tile's
//        P V goes into fresh accumulators, added into O with round-to-nearest.
//   f32 with options.allow_tf32 (WideMathTf32): the operands rounded to TF32 (cvt.rna, 2^-11
//        relative each), one MMA per product: within ~2^-10 |a||b|, a third of the MMAs.
// Fragments: a[4] and b[2] in the m16n8k8 layout of ptx.cuh. `prep_a` converts an A fragment
// (Q, P) once for all the MMAs that reuse it. The B operands (K, V) are shared by every warp of
// the CTA: `convert` may turn a landed 16-byte chunk of them into the operand form once per
// tile, in place in shared memory (by the thread that copied it, wide_fwd_kernel.cuh), and
// `load_b` reads a fragment from there and finishes it (`make_b` from values already loaded). The
// TF32 mode rounds in place (1.03-1.07x over each warp rounding its own fragments: 8 warps rounded
// the same K and V).
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
  static constexpr bool kFreshTiles = false; // f64 accumulation
  using A = double[4];
  using B = double[2];
  __device__ __forceinline__ static void prep_a(A& out, const double (&a)[4]) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      out[i] = a[i];
  }
  // K and V stay as they are in shared memory.
  __device__ __forceinline__ static void convert(double*) {}
  __device__ __forceinline__ static void make_b(B& out, double x, double y) {
    out[0] = x;
    out[1] = y;
  }
  __device__ __forceinline__ static void load_b(B& out, const double* p, int second) {
    make_b(out, p[0], p[second]);
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
  static constexpr bool kFreshTiles = true;
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
      tf32_split(x[i], big[i], small[i]);
    }
  }
  __device__ __forceinline__ static void prep_a(A& out, const float (&a)[4]) {
    split(out.big, out.small, a);
  }
  // Split per warp as the fragment is loaded. Splitting once per tile in shared memory (the big
  // part in place, the small one in a second array) ran 1.01-1.03x at head dim 64 and 0.99-1.01x
  // at 128 on the H100 (the kernel is bound by its three MMAs per product, not by the splits),
  // and doubles K's and V's shared memory: 198 KiB at head dim 128, past the A100's 163 KiB.
  __device__ __forceinline__ static void convert(float*) {}
  __device__ __forceinline__ static void make_b(B& out, float x, float y) {
    split(out.big, out.small, {x, y});
  }
  __device__ __forceinline__ static void load_b(B& out, const float* p, int second) {
    make_b(out, p[0], p[second]);
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
  static constexpr bool kFreshTiles = false; // TF32's operand rounding dominates
  using A = std::uint32_t[4];
  using B = std::uint32_t[2];
  template <int N>
  __device__ __forceinline__ static void round(std::uint32_t (&out)[N], const float (&x)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      out[i] = to_tf32(x[i]);
  }
  __device__ __forceinline__ static void prep_a(A& out, const float (&a)[4]) { round(out, a); }
  // Rounded to TF32 in place.
  __device__ __forceinline__ static void convert(float* x) {
    const float4 v = *reinterpret_cast<const float4*>(x);
    *reinterpret_cast<uint4*>(x) = uint4{to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w)};
  }
  __device__ __forceinline__ static void make_b(B& out, float x, float y) {
    out[0] = __float_as_uint(x);
    out[1] = __float_as_uint(y);
  }
  __device__ __forceinline__ static void load_b(B& out, const float* p, int second) {
    make_b(out, p[0], p[second]);
  }
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
