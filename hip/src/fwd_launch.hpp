// Host side of one kernel build: picks the (dtype, head dim) instantiation and launches it.
// Included by exactly one translation unit per path (flash_fwd_mfma.hip, flash_fwd_generic.cu).
#pragma once

#include "fwd_kernel.hpp"
#include "gpu_compat.hpp"

namespace kattn::hip_kernels::detail {

template <class E, int W, bool kMfma>
void launch_dtype(const FlashFwdParams& p, kattn_gpu::Stream stream, dim3 grid, dim3 block) {
  if (p.H == 64)
    flash_fwd_kernel<E, 64, W, kMfma><<<grid, block, 0, stream>>>(p);
  else
    flash_fwd_kernel<E, 128, W, kMfma><<<grid, block, 0, stream>>>(p);
}

// `p` has passed supports(). Grid: (query tiles, heads, batch).
template <int W, bool kMfma>
void launch_fwd(const FlashFwdParams& p, kattn_gpu::Stream stream, const char* what) {
  if (p.B == 0 || p.N == 0 || p.T == 0)
    return;
  const dim3 grid(static_cast<unsigned>((p.T + kBlockM - 1) / kBlockM), static_cast<unsigned>(p.N),
                  static_cast<unsigned>(p.B));
  const dim3 block(static_cast<unsigned>(W * kWaves));
  if (p.dtype == ElemType::bf16)
    launch_dtype<Bf16, W, kMfma>(p, stream, grid, block);
  else
    launch_dtype<F16, W, kMfma>(p, stream, grid, block);
  kattn_gpu::check_launch(what);
}

} // namespace kattn::hip_kernels::detail
