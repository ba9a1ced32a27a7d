// The sm80 family's backward hooks, called only by the entry (cuda/src/flash_bwd.cpp).
#pragma once

#include <string>

#include "kattn_kernels/flash_bwd_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::sm80 {

// Empty when the sm80 backward serves `p`, else why not.
std::string bwd_unsupported_reason(const FlashBwdParams& p);
// The kernel that would run, e.g. "sm80_bwd_bf16_h128" ("..._dq": dQ by the dq kernel).
std::string bwd_kernel_name(const FlashBwdParams& p);
// Whether dQ comes from the dq kernel (p.dq_kernel): in deterministic mode, and at head dim 128.
bool uses_dq_kernel(const FlashBwdParams& p);
// Enqueues dq_accum's zeroing, the D pass, the main kernel and the dq conversion; the caller
// checked bwd_unsupported_reason(p) and set the workspaces.
void run_bwd(const FlashBwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::sm80
