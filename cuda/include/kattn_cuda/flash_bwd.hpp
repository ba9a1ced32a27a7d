// The framework-free entry of our CUDA flash-attention backward: params + stream, like
// flash_fwd.hpp (whose KernelFamily and KernelChoice it shares).
#pragma once

#include <cstddef>

#include "kattn_cuda/flash_fwd.hpp"
#include "kattn_kernels/flash_bwd_params.hpp"

namespace kattn::cuda_kernels {

// Picks the backward kernel for `p` on the current device: the sm90 family (wgmma, TMA) on
// compute capability 9.0 for head dims 64 and 128 outside deterministic mode (dQ by TMA
// reductions; flash_bwd.cpp's kSm90BackwardVerified can take it out of auto), else the sm80 family
// (mma.sync) on any device of compute capability >= 8.0, whose
// deterministic mode and head dim 128 compute dq in a kernel of its own (no atomics: bitwise
// repeatable). KOKKOSATTN_CUDA_KERNEL=sm80|sm90 forces a family (then refused with its reason,
// never a fallback). Touches no tensor data.
KernelChoice choose_bwd_kernel(const FlashBwdParams& p);

// Bytes of fp32 workspace one backward of `p` allocates (D and dq_accum): 4 N R (H + 1) with R
// the accumulator rows (B T, or Tq_total when packed); 4 N R when dq has its own kernel
// (the sm80 family in deterministic mode, or at head dim 128: no dq_accum).
std::size_t bwd_workspace_bytes(const FlashBwdParams& p);

// Enqueues the backward on `stream`: the workspace comes from the device's stream-ordered pool
// (cudaMallocAsync) and is released in stream order after the last pass, so the call does not
// synchronise. Throws std::runtime_error naming the CUDA error, std::invalid_argument when no
// kernel serves `p`. p.dsum, p.dq_accum and p.acc_rows are set here (the caller's are ignored).
void flash_bwd(const FlashBwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels
