// Kernel arguments instead of constant memory for the backends' Kokkos kernels on GPUs.
//
// Kokkos passes a functor of more than 512 bytes to a CUDA kernel through constant memory: one
// buffer per device, so before each such launch the host waits for the previous one's kernel to
// finish (cudaEventSynchronize in Kokkos_Cuda_KernelLaunch.hpp). The host then cannot enqueue
// ahead of the GPU, and streams do not overlap. The backends' functors carry their problem
// parameters (~1 KB), which fit CUDA's kernel arguments (Kokkos allows 4 KB there); the
// light-weight hint selects them. Host spaces ignore it.
#pragma once

#include <Kokkos_Core.hpp>

namespace kattn::kokkos_common {

template <class Policy>
auto light_launch(const Policy& policy) {
  return Kokkos::Experimental::require(policy,
                                       Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

} // namespace kattn::kokkos_common
