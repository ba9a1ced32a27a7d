// Kokkos::View -> kattn::Tensor: pointer, dtype, extents, strides (in elements, any layout) and
// the memory space the data lives in. No data is copied. A View converts implicitly wherever a
// Tensor is taken (kattn::tensor_source below).
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kokkosattn/errors.hpp"
#include "kokkosattn/tensor.hpp"

namespace KokkosAttn {

namespace Impl {

template <class>
inline constexpr bool always_false = false;

// The kattn dtype a View's value_type stands for. On host-only Kokkos builds half_t and bhalf_t
// are aliases of float, so such Views are f32 tensors; to pass raw 16-bit buffers use
// as_tensor(view_of_uint16, DType::f16 / DType::bf16).
template <class T>
constexpr kattn::DType dtype_of() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, double>)
    return kattn::DType::f64;
  else if constexpr (std::is_same_v<U, float>)
    return kattn::DType::f32;
#if !KOKKOS_HALF_T_IS_FLOAT
  else if constexpr (std::is_same_v<U, Kokkos::Experimental::half_t>)
    return kattn::DType::f16;
#endif
#if !KOKKOS_BHALF_T_IS_FLOAT
  else if constexpr (std::is_same_v<U, Kokkos::Experimental::bhalf_t>)
    return kattn::DType::bf16;
#endif
  else if constexpr (std::is_same_v<U, std::int32_t>)
    return kattn::DType::i32;
  else if constexpr (std::is_same_v<U, bool> || std::is_same_v<U, std::uint8_t>)
    return kattn::DType::boolean;
  else
    static_assert(always_false<U>, "KokkosAttn::as_tensor: unsupported View value_type; expected "
                                   "double, float, half_t, bhalf_t, int32_t, bool or uint8_t");
}

// Where a Kokkos memory space's allocations live, in kattn's terms.
template <class MemSpace>
constexpr kattn::MemorySpace memory_space_of() {
  using M = MemSpace;
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<M, Kokkos::CudaSpace> || std::is_same_v<M, Kokkos::CudaUVMSpace>)
    return kattn::MemorySpace::cuda_device;
  else if constexpr (std::is_same_v<M, Kokkos::CudaHostPinnedSpace>)
    return kattn::MemorySpace::host;
  else
#endif
#ifdef KOKKOS_ENABLE_HIP
      if constexpr (std::is_same_v<M, Kokkos::HIPSpace> ||
                    std::is_same_v<M, Kokkos::HIPManagedSpace>)
    return kattn::MemorySpace::hip_device;
  else if constexpr (std::is_same_v<M, Kokkos::HIPHostPinnedSpace>)
    return kattn::MemorySpace::host;
  else
#endif
      if constexpr (Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace, M>::accessible)
    return kattn::MemorySpace::host; // HostSpace, SharedSpace of host-only builds, ...
  else
    static_assert(always_false<M>, "KokkosAttn::as_tensor: the View's memory space is neither "
                                   "host memory nor a CUDA/HIP device space");
}

template <class View>
kattn::Tensor as_tensor_impl(const View& view, kattn::DType dtype) {
  static_assert(Kokkos::is_view_v<View>, "KokkosAttn::as_tensor: expected a Kokkos::View");
  const int rank = static_cast<int>(view.rank());
  if (rank < 1 || rank > kattn::Tensor::max_rank)
    throw kattn::InvalidArgument("KokkosAttn::as_tensor: View '" + std::string(view.label()) +
                                 "': expected rank 1 to 4, got rank " + std::to_string(rank));
  kattn::Tensor t;
  t.data = const_cast<void*>(static_cast<const void*>(view.data()));
  t.dtype = dtype;
  t.rank = rank;
  for (int d = 0; d < rank; ++d) {
    const auto r = static_cast<std::size_t>(d);
    t.extent[r] = static_cast<std::int64_t>(view.extent(r));
    t.stride[r] = static_cast<std::int64_t>(view.stride(r));
  }
  t.space = memory_space_of<typename View::memory_space>();
  return t;
}

} // namespace Impl

// The Tensor a View describes. A const View gives a const-cast pointer: kattn only writes to
// tensors that are outputs.
template <class View>
kattn::Tensor as_tensor(const View& view) {
  return Impl::as_tensor_impl(view, Impl::dtype_of<typename View::value_type>());
}

// Same, reinterpreting the elements as `dtype` (same size), e.g. Views of std::uint16_t holding
// f16/bf16 bits on host-only Kokkos builds where half_t is an alias of float.
template <class View>
kattn::Tensor as_tensor(const View& view, kattn::DType dtype) {
  using U = std::remove_cv_t<typename View::value_type>;
  if (sizeof(U) != kattn::size_bytes(dtype))
    throw kattn::InvalidArgument("KokkosAttn::as_tensor: View '" + std::string(view.label()) +
                                 "': cannot reinterpret " + std::to_string(sizeof(U)) +
                                 "-byte elements as " + std::string(kattn::to_string(dtype)) +
                                 " (" + std::to_string(kattn::size_bytes(dtype)) + " bytes)");
  return Impl::as_tensor_impl(view, dtype);
}

} // namespace KokkosAttn

// A View wherever a kattn::Tensor is taken (extras, dbias, the raw-tensor overloads): as_tensor.
template <class DataType, class... Properties>
struct kattn::tensor_source<Kokkos::View<DataType, Properties...>> {
  static kattn::Tensor tensor(const Kokkos::View<DataType, Properties...>& view) {
    return KokkosAttn::as_tensor(view);
  }
};
