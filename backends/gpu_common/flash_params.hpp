// ForwardProblem + Dims -> the kernel contract's FlashFwdParams (kernels/include/kattn_kernels/):
// the one place that encodes a problem for our GPU kernels (cuda/sm80, cuda/sm90, hip/) and
// refuses, with a reason naming the argument, what all of them lack. Each family then applies
// its own limits to the params (cuda_kernels::choose_kernel, hip_kernels::supports).
#pragma once

#include <string>
#include <string_view>

#include "kattn_kernels/flash_bwd_params.hpp"
#include "kattn_kernels/flash_params.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn {

struct FlashParamsResult {
  FlashFwdParams params;
  std::string reason; // empty: params are filled
  bool ok() const { return reason.empty(); }
};

// `p` validated and `d` resolved (kattn::validate). Every tensor must live in `memory`. `who`
// ends the "not implemented" reasons ("in the cuda backend"). Refused: other dtypes, head-dim
// stride != 1 (q, k, v: unless sequence-major, row stride 1), non-contiguous lengths, bias, boolean
// mask, ALiBi, dropout, and sizes beyond the kernels' 32-bit index arithmetic (T + S > 2^30 - 1).
// (Validation encodes windows that cut nothing, >= T + S, as unbounded.)
FlashParamsResult make_flash_params(const ForwardProblem& p, const Dims& d, MemorySpace memory,
                                    std::string_view who);

struct FlashBwdParamsResult {
  FlashBwdParams params;
  std::string reason; // empty: params are filled
  bool ok() const { return reason.empty(); }
};

// The backward's params: make_flash_params of p.forward, and dout, dq, dk, dv in `memory` with
// q's dtype and head-dim stride 1. Refused besides: no LSE from the forward (extras.lse), dbias.
// The workspaces are left to the launcher.
FlashBwdParamsResult make_flash_bwd_params(const BackwardProblem& p, const Dims& d,
                                           MemorySpace memory, std::string_view who);

} // namespace kattn
