// acc += A(16x16) * B(16x16) for one wavefront, in the accumulator layout of wave_layout.hpp.
// A is row-major in LDS (a[m * lda + k]); B's element (k, n) is b[k * bk + n * bn], so K tiles
// (B = K^T: bk = 1) and V tiles (bk = row stride, bn = 1) need no transposed copy.
//
// Mma16<E, W, false>: the generic path, plain fp32 FMAs (any wavefront width; nvcc and hipcc).
// Mma16<E, 64, true>: AMD MFMA v_mfma_f32_16x16x16{f16,bf16_1k} (gfx90a, gfx942). Operand layout
// (AMD CDNA2/CDNA3 ISA, matrix instruction calculator): lane l supplies A[l % 16][4 (l / 16) + i]
// and B[4 (l / 16) + i][l % 16], i = 0..3; it receives D[4 (l / 16) + r][l % 16], r = 0..3.
#pragma once

#include <cstdint>

#include "elem.hpp"
#include "wave_layout.hpp"

namespace kattn::hip_kernels::detail {

template <class E, int W, bool kMfma>
struct Mma16;

template <class E, int W>
struct Mma16<E, W, false> {
  using L = WaveLayout<W>;
  // Not inlined, loops not unrolled: a test path, and fully unrolled scalar 16x16x16 products
  // (thousands per kernel) make ptxas take many minutes.
  static __device__ __noinline__ void run(float (&acc)[L::kRowsPerLane], const std::uint16_t* a,
                                          int lda, const std::uint16_t* b, int bk, int bn,
                                          int lane) {
    const int n = L::col(lane);
    float bcol[16];
#pragma unroll
    for (int k = 0; k < 16; ++k)
      bcol[k] = E::to_float(b[k * bk + n * bn]);
#pragma unroll 1
    for (int r = 0; r < L::kRowsPerLane; ++r) {
      const std::uint16_t* arow = a + L::row(lane, r) * lda;
      float s = acc[r];
#pragma unroll
      for (int k = 0; k < 16; ++k)
        s = fmaf(E::to_float(arow[k]), bcol[k], s);
      acc[r] = s;
    }
  }
};

#if defined(KATTN_GPU_HIP)
typedef float f32x4 __attribute__((ext_vector_type(4)));
typedef short i16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 f16x4 __attribute__((ext_vector_type(4)));

template <class E>
struct Mma16<E, 64, true> {
  using L = WaveLayout<64>;
  static __device__ __forceinline__ void run(float (&acc)[4], const std::uint16_t* a, int lda,
                                             const std::uint16_t* b, int bk, int bn, int lane) {
    const int m = lane % 16, k0 = 4 * (lane / 16);
    i16x4 av, bv;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      av[i] = static_cast<short>(a[m * lda + k0 + i]);
      bv[i] = static_cast<short>(b[(k0 + i) * bk + m * bn]);
    }
    f32x4 c = {acc[0], acc[1], acc[2], acc[3]};
#if defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__)
    if constexpr (E::kIsBf16)
      c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(av, bv, c, 0, 0, 0);
    else
      c = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(f16x4, av),
                                                __builtin_bit_cast(f16x4, bv), c, 0, 0, 0);
#elif defined(__HIP_DEVICE_COMPILE__)
#error "the MFMA path is for gfx90a and gfx942 (add the target's MFMA here)"
#endif
#pragma unroll
    for (int r = 0; r < 4; ++r)
      acc[r] = c[r];
  }
};
#endif

} // namespace kattn::hip_kernels::detail
