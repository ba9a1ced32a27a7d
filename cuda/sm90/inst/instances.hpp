// The instantiated sm90 forward kernels, one file each (compile time stays per-file);
// tile_choice.hpp picks one per problem.
#pragma once

#include "kattn_cuda/flash_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h64(const FlashFwdParams& p, CUstream_st* stream);
void launch_bf16_h64_short_causal(const FlashFwdParams& p, CUstream_st* stream);
void launch_bf16_h128_short(const FlashFwdParams& p, CUstream_st* stream);
void launch_bf16_h128_long_tail(const FlashFwdParams& p, CUstream_st* stream);
void launch_bf16_h256(const FlashFwdParams& p, CUstream_st* stream);
void launch_f16_h64(const FlashFwdParams& p, CUstream_st* stream);
void launch_f16_h64_short_causal(const FlashFwdParams& p, CUstream_st* stream);
void launch_f16_h128_short(const FlashFwdParams& p, CUstream_st* stream);
void launch_f16_h128_long_tail(const FlashFwdParams& p, CUstream_st* stream);
void launch_f16_h256(const FlashFwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::sm90
