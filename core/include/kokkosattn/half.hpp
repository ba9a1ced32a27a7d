// Bit-exact conversions between float and the 16-bit formats (IEEE binary16, bfloat16),
// round-to-nearest-even, NaN preserved. Framework-free so host code and tests can read and
// write fp16/bf16 buffers without Kokkos or CUDA headers; host/device (KATTN_INLINE) because
// Kokkos kernels use them where Kokkos has no 16-bit type of its own (bhalf_t on HIP, both on
// host-only builds). __builtin_memcpy: std::memcpy is not callable from device code.
#pragma once

#include <cstdint>

#include "kokkosattn/config.hpp"

namespace kattn {

KATTN_INLINE std::uint32_t float_bits(float f) {
  std::uint32_t u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}

KATTN_INLINE float bits_float(std::uint32_t u) {
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

KATTN_INLINE float bf16_to_float(std::uint16_t h) {
  return bits_float(static_cast<std::uint32_t>(h) << 16);
}

KATTN_INLINE std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<std::uint16_t>((u >> 16) | 0x40u); // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

KATTN_INLINE float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f)
    return bits_float(sign | 0x7f800000u | (man << 13)); // inf / NaN
  if (exp != 0)
    return bits_float(sign | ((exp + 112u) << 23) | (man << 13));
  if (man == 0)
    return bits_float(sign); // signed zero
  // Subnormal: value = man * 2^-24.
  const float mag = static_cast<float>(man) * 5.9604644775390625e-8f;
  return sign ? -mag : mag;
}

KATTN_INLINE std::uint16_t float_to_f16(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return static_cast<std::uint16_t>(sign | 0x7e00u); // NaN
  if (a >= 0x477ff000u)
    return static_cast<std::uint16_t>(sign | 0x7c00u); // rounds to inf
  if (a < 0x38800000u) {
    // Result is subnormal or zero: scale to units of 2^-24 and round to nearest even.
    const float mag = bits_float(a) * 16777216.0f; // exact: power-of-two scaling
    auto q = static_cast<std::uint32_t>(mag);
    const float rem = mag - static_cast<float>(q);
    if (rem > 0.5f || (rem == 0.5f && (q & 1u)))
      ++q;
    return static_cast<std::uint16_t>(sign | q);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  const std::uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

} // namespace kattn
