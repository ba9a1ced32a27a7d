// Kokkos execution space instance -> kattn::ExecContext (device kind, native stream, instance).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "kokkosattn/exec_context.hpp"

namespace KokkosAttn {

// The context points at `exec`, which must outlive every call made with it.
template <class ExecSpace>
kattn::ExecContext make_exec_context(const ExecSpace& exec) {
  static_assert(Kokkos::is_execution_space_v<ExecSpace>,
                "KokkosAttn::make_exec_context: expected a Kokkos execution space instance");
  kattn::ExecContext x;
  x.kokkos_space = ExecSpace::name();
  x.kokkos_instance = &exec;
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    x.device = kattn::Device::cuda;
    x.stream = static_cast<void*>(exec.cuda_stream());
  }
#endif
#ifdef KOKKOS_ENABLE_HIP
  if constexpr (std::is_same_v<ExecSpace, Kokkos::HIP>) {
    x.device = kattn::Device::hip;
    x.stream = static_cast<void*>(exec.hip_stream());
  }
#endif
  return x;
}

} // namespace KokkosAttn
