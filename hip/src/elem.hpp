// 16-bit element conversions for device code, written on the bit patterns so that they are the
// same under hipcc and nvcc (no __half / __hip_bfloat16 types). Round to nearest even, NaN kept.
#pragma once

#include <cstdint>

#include "gpu_compat.hpp"

namespace kattn::hip_kernels::detail {

struct Bf16 {
  static constexpr bool kIsBf16 = true;
  static __device__ __forceinline__ float to_float(std::uint16_t h) {
    return __uint_as_float(static_cast<std::uint32_t>(h) << 16);
  }
  static __device__ __forceinline__ std::uint16_t from_float(float f) {
    const std::uint32_t u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
      return static_cast<std::uint16_t>((u >> 16) | 0x40u);
    const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<std::uint16_t>((u + rounding) >> 16);
  }
};

struct F16 {
  static constexpr bool kIsBf16 = false;
  static __device__ __forceinline__ float to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    const std::uint32_t man = h & 0x3ffu;
    if (exp == 0x1fu) // inf / NaN
      return __uint_as_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) // zero / subnormal: man * 2^-24, exact in fp32
      return __uint_as_float(sign) + (sign ? -1.f : 1.f) * static_cast<float>(man) * 0x1p-24f;
    return __uint_as_float(sign | ((exp + 112u) << 23) | (man << 13));
  }
  static __device__ __forceinline__ std::uint16_t from_float(float f) {
    const std::uint32_t u = __float_as_uint(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
      return static_cast<std::uint16_t>(sign | 0x7e00u);
    if (a >= 0x477ff000u) // rounds to >= 65520: inf
      return static_cast<std::uint16_t>(sign | 0x7c00u);
    if (a < 0x38800000u) { // below 2^-14: subnormal half, step 2^-24 (rint: nearest even)
      const float m = __uint_as_float(a) * 0x1p24f;
      return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(rintf(m)));
    }
    // Normal: drop 13 mantissa bits with round to nearest even, rebias 127 -> 15.
    const std::uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
    return static_cast<std::uint16_t>(sign | ((r - (112u << 23)) >> 13));
  }
};

} // namespace kattn::hip_kernels::detail
