// The sm80 kernel family's hooks, called only by the entry (cuda/src/flash_fwd.cu).
#pragma once

#include <string>

#include "kattn_kernels/flash_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::sm80 {

// Empty when this family serves `p`, else why not (e.g. "head dim 96 not instantiated").
std::string unsupported_reason(const FlashFwdParams& p);
// The kernel that would run, e.g. "sm80_fwd_bf16_h128".
std::string kernel_name(const FlashFwdParams& p);
// Enqueues the forward; the caller checked unsupported_reason(p) is empty.
void run(const FlashFwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::sm80
