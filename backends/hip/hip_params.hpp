// From kokkos-attention's framework-free problem descriptor to the HIP kernels' params: what a
// `hip` registry entry does before it launches (the shared encoding of gpu_common/, then the
// HIP kernels' own limits), kept here (plain C++, core headers only) so the generic path's GPU
// tests exercise the same translation on real hardware.
#pragma once

#include "gpu_common/flash_params.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::hip_kernels {

// `p` is validated and `d` resolved (kattn::validate). Every tensor must live in `memory`
// (hip_device for the HIP backend; cuda_device when the generic path runs on NVIDIA). Refuses,
// with a reason, what make_flash_params refuses and what hip_kernels::supports refuses (other
// head dims, alignment).
FlashParamsResult make_flash_fwd_params(const ForwardProblem& p, const Dims& d, MemorySpace memory);

} // namespace kattn::hip_kernels
