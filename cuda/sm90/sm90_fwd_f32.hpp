// The sm90 family's exact-fp32 forward (f32_config.cuh), called by sm90_fwd.cu's hooks.
#pragma once

#include <string>

#include "kattn_kernels/flash_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::sm90 {

// Empty when the fp32 kernel serves the f32 problem `p`, else why not.
std::string f32_unsupported_reason(const FlashFwdParams& p);
// Whether auto prefers this kernel to sm80's for a problem it serves: T and S >= 2048. Measured
// (H100, run s34b, head dim 128, T = S): at 1024 sm80's mma.sync kernel is as fast non-causal and
// 1.21x faster causal (the per-call split of k and v and each tile's unoverlapped first S and last
// P V weigh more on short rows); from 2048 this one is 1.06-1.21x faster, 1.39-1.51x at 16384.
bool f32_auto(const FlashFwdParams& p);
// "sm90_fwd_f32_3xtf32_h128".
std::string f32_kernel_name(const FlashFwdParams& p);
// Splits k and v into a stream-ordered workspace (2 x their size in fp32, v padded to whole
// groups of 8 keys) and enqueues the forward; the caller checked f32_unsupported_reason(p) is
// empty.
void run_f32(const FlashFwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::sm90
