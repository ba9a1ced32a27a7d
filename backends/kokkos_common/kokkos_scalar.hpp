// Element storage types for Kokkos kernels: which C++ type holds each kattn::DType in memory,
// and how it widens to the accumulation type (float; double for f64) and narrows back.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#include "kokkosattn/dtype.hpp"
#include "kokkosattn/half.hpp"

namespace KokkosAttn::Impl {

#if KOKKOS_HALF_T_IS_FLOAT
// Host-only Kokkos builds alias half_t to float (4 bytes), but f16 buffers hold 2-byte IEEE
// halves; kernels read them through this bit container and kattn's exact conversions.
struct f16_bits {
  std::uint16_t bits;
};
using f16_storage = f16_bits;
#else
using f16_storage = Kokkos::Experimental::half_t;
#endif

#if KOKKOS_BHALF_T_IS_FLOAT
struct bf16_bits {
  std::uint16_t bits;
};
using bf16_storage = bf16_bits;
#else
using bf16_storage = Kokkos::Experimental::bhalf_t;
#endif

static_assert(sizeof(f16_storage) == 2 && sizeof(bf16_storage) == 2,
              "16-bit storage types must be 2 bytes to alias kattn's f16/bf16 buffers");

// scalar_traits<T>: acc is the accumulation type; load widens, store narrows (round to nearest
// even).
template <class T>
struct scalar_traits;

template <>
struct scalar_traits<double> {
  using acc = double;
  static constexpr kattn::DType dtype = kattn::DType::f64;
  KOKKOS_INLINE_FUNCTION static double load(double x) { return x; }
  KOKKOS_INLINE_FUNCTION static double store(double x) { return x; }
};

template <>
struct scalar_traits<float> {
  using acc = float;
  static constexpr kattn::DType dtype = kattn::DType::f32;
  KOKKOS_INLINE_FUNCTION static float load(float x) { return x; }
  KOKKOS_INLINE_FUNCTION static float store(float x) { return x; }
};

template <>
struct scalar_traits<f16_storage> {
  using acc = float;
  static constexpr kattn::DType dtype = kattn::DType::f16;
#if KOKKOS_HALF_T_IS_FLOAT
  KOKKOS_INLINE_FUNCTION static float load(f16_bits x) { return kattn::f16_to_float(x.bits); }
  KOKKOS_INLINE_FUNCTION static f16_bits store(float x) { return {kattn::float_to_f16(x)}; }
#else
  KOKKOS_INLINE_FUNCTION static float load(f16_storage x) {
    return Kokkos::Experimental::cast_from_half<float>(x);
  }
  KOKKOS_INLINE_FUNCTION static f16_storage store(float x) {
    return Kokkos::Experimental::cast_to_half(x);
  }
#endif
};

template <>
struct scalar_traits<bf16_storage> {
  using acc = float;
  static constexpr kattn::DType dtype = kattn::DType::bf16;
#if KOKKOS_BHALF_T_IS_FLOAT
  KOKKOS_INLINE_FUNCTION static float load(bf16_bits x) { return kattn::bf16_to_float(x.bits); }
  KOKKOS_INLINE_FUNCTION static bf16_bits store(float x) { return {kattn::float_to_bf16(x)}; }
#else
  KOKKOS_INLINE_FUNCTION static float load(bf16_storage x) {
    return Kokkos::Experimental::cast_from_bhalf<float>(x);
  }
  KOKKOS_INLINE_FUNCTION static bf16_storage store(float x) {
    return Kokkos::Experimental::cast_to_bhalf(x);
  }
#endif
};

// A double as Acc, finite values beyond Acc's range saturated to its largest finite value:
// an f64 bias of -1e300 must weigh on a float backend as on the reference (next to finite
// scores nothing, a row of them uniform), not become -inf, i.e. a mask (docs/semantics.md
// non_finite). Infinities and NaN stay what they are.
template <class Acc>
KOKKOS_INLINE_FUNCTION Acc narrow_saturating(double x) {
  if constexpr (std::is_same_v<Acc, double>) {
    return x;
  } else {
    constexpr double top = static_cast<double>(Kokkos::Experimental::finite_max_v<Acc>);
    return static_cast<Acc>(Kokkos::isfinite(x) ? Kokkos::clamp(x, -top, top) : x);
  }
}

// Reads element `offset` of a floating tensor of runtime dtype `t` (bias tensors may have any
// float dtype independent of q/k/v) as Acc.
template <class Acc>
KOKKOS_INLINE_FUNCTION Acc load_as(const void* data, kattn::DType t, std::int64_t offset) {
  switch (t) {
  case kattn::DType::f64:
    return narrow_saturating<Acc>(static_cast<const double*>(data)[offset]);
  case kattn::DType::f32:
    return static_cast<Acc>(static_cast<const float*>(data)[offset]);
  case kattn::DType::f16:
    return static_cast<Acc>(
        scalar_traits<f16_storage>::load(static_cast<const f16_storage*>(data)[offset]));
  case kattn::DType::bf16:
    return static_cast<Acc>(
        scalar_traits<bf16_storage>::load(static_cast<const bf16_storage*>(data)[offset]));
  default:
    return Acc(0);
  }
}

} // namespace KokkosAttn::Impl
