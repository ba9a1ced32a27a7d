// The backward's passes around a family's main kernel, one definition for every family (the row
// kernels of bwd_rows.cuh, compiled once in bwd_row_passes.cu).
#pragma once

#include "kattn_kernels/flash_bwd_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels {

// Before the main kernel: dq_accum zeroed (unless p.dq_kernel), then D = rowsum(dO * O).
void bwd_prepass(const FlashBwdParams& p, CUstream_st* stream);
// After it (unless p.dq_kernel): dq = dq_accum rounded to the element type.
void bwd_convert_dq(const FlashBwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels
