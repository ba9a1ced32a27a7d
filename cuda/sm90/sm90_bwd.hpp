// The sm90 family's backward hooks, called only by the entry (cuda/src/flash_bwd.cpp).
#pragma once

#include <string>

#include "kattn_kernels/flash_bwd_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::sm90 {

// Empty when the sm90 backward serves `p` (the caller checked the device), else why not.
std::string bwd_unsupported_reason(const FlashBwdParams& p);
// The kernel that would run, e.g. "sm90_bwd_bf16_h128".
std::string bwd_kernel_name(const FlashBwdParams& p);
// Enqueues dq_accum's zeroing, the D pass, the main kernel and the dq conversion; the caller
// checked bwd_unsupported_reason(p) and set the workspaces (dq_accum: no dq kernel here).
void run_bwd(const FlashBwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::sm90
