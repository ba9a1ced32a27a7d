// Where a C API call runs: the execution space for the problem's memory, on the caller's stream.
#pragma once

#include <Kokkos_Core.hpp>

#include <KokkosAttn_StreamInstance.hpp>

#include <string>

#include "kokkosattn.h"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::c_api {

// Kokkos must be initialised (kattn_initialize, or the host program's own Kokkos::initialize).
void require_kokkos();

// Calls on_space(exec) with the Kokkos execution space instance for memory `m` on `stream`
// (host memory: the default host space; CUDA/HIP memory: the instance on that stream,
// KokkosAttn_StreamInstance.hpp, the default instance for NULL), or on_raw(context) where this
// Kokkos has no such device space and the library's GPU backends take raw pointers.
template <class OnSpace, class OnRaw>
void on_memory(MemorySpace m, void* stream, const OnSpace& on_space, const OnRaw& on_raw) {
  require_kokkos();
  switch (m) {
  case MemorySpace::host:
    return on_space(Kokkos::DefaultHostExecutionSpace{});
  case MemorySpace::cuda_device:
#ifdef KOKKOS_ENABLE_CUDA
    if (stream != nullptr)
      return on_space(
          KokkosAttn::Impl::instance_on_stream<Kokkos::Cuda>(static_cast<cudaStream_t>(stream)));
    return on_space(Kokkos::Cuda{});
#else
    return on_raw(ExecContext{Device::cuda, stream, {}, nullptr});
#endif
  case MemorySpace::hip_device:
#ifdef KOKKOS_ENABLE_HIP
    if (stream != nullptr)
      return on_space(
          KokkosAttn::Impl::instance_on_stream<Kokkos::HIP>(static_cast<hipStream_t>(stream)));
    return on_space(Kokkos::HIP{});
#else
    return on_raw(ExecContext{Device::hip, stream, {}, nullptr});
#endif
  }
  throw InvalidArgument("memory space of q: not one of KATTN_MEMORY_HOST/CUDA/HIP");
}

} // namespace kattn::c_api
