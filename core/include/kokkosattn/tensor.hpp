// A non-owning, framework-free view of a strided tensor: pointer, dtype, extents and 64-bit
// strides counted in elements (not bytes), plus the memory space the pointer lives in.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kokkosattn/dtype.hpp"

namespace kattn {

enum class MemorySpace {
  host,        // ordinary host memory (also Kokkos::HostSpace, pinned host memory)
  cuda_device, // cudaMalloc'ed memory
  hip_device,  // hipMalloc'ed memory
};

std::string_view to_string(MemorySpace m);

// How a framework's array type becomes a Tensor: specialise with a static
// `Tensor tensor(const T&)` (the Kokkos front end does for Kokkos::View), and every Tensor
// argument and field then takes a T directly (e.g. `extras.lse = lse_view;`).
template <class T>
struct tensor_source;

struct Tensor {
  static constexpr int max_rank = 4;

  void* data = nullptr;
  DType dtype = DType::f32;
  int rank = 0; // 0 means "not given"
  std::array<std::int64_t, max_rank> extent{};
  std::array<std::int64_t, max_rank> stride{};
  MemorySpace space = MemorySpace::host;

  Tensor() = default;
  template <class T>
    requires requires(const T& t) { tensor_source<T>::tensor(t); }
  Tensor(const T& t) : Tensor(tensor_source<T>::tensor(t)) {} // NOLINT: implicit on purpose

  bool defined() const { return rank > 0; }
  std::int64_t numel() const;
  // Row-major ("LayoutRight") strides for the extents given.
  static Tensor contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> extents,
                           MemorySpace space = MemorySpace::host);
  // "[2, 128, 8, 64]"
  std::string shape_string() const;
  std::string stride_string() const;
};

// Dense row-major ("LayoutRight") strides for the tensor's extents: what a LayoutRight View has.
bool is_row_major(const Tensor& t);
// `t` with those strides, pointing at `data`.
Tensor row_major_like(const Tensor& t, void* data);

} // namespace kattn
