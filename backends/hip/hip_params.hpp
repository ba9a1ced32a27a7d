// From kokkos-attention's framework-free problem descriptor to the HIP kernels' params: what a
// `hip` registry entry does before it launches, kept here (plain C++, core headers only) so the
// generic path's GPU tests exercise the same translation on real hardware.
#pragma once

#include <string>

#include "kattn_hip/flash_params.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::hip_kernels {

struct ParamsFromProblem {
  FlashFwdParams params;
  std::string reason; // empty: params are filled and supports(params) passed
  bool ok() const { return reason.empty(); }
};

// `p` is validated and `d` resolved (kattn::validate). Every tensor must live in `memory`
// (hip_device for the HIP backend; cuda_device when the generic path runs on NVIDIA). Refuses,
// with a reason, what the kernels do not implement: bias, boolean mask, ALiBi, dropout, other
// dtypes and head dims, head-dim stride != 1, packed varlen without max_seqlen_q/k.
ParamsFromProblem make_flash_fwd_params(const ForwardProblem& p, const Dims& d, MemorySpace memory);

} // namespace kattn::hip_kernels
