// The launcher of wide_fwd_kernel<T, HD, TF32> (the f32/f64 forward): grid (query blocks, heads,
// batch), dynamic shared memory opt-in, launch error checked.
#pragma once

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "sm80/launch.hpp"
#include "sm80/wide_fwd_kernel.cuh"

namespace kattn::cuda_kernels::sm80 {

template <class T, int HD, bool TF32>
void launch_wide(const FlashFwdParams& p, cudaStream_t stream) {
  using C = WideConfig<T, HD>;
  if (p.B == 0 || p.T == 0 || p.N == 0)
    return;
  opt_in_smem<&wide_fwd_kernel<T, HD, TF32>>(C::SMEM_BYTES, "sm80 f32/f64 forward");
  const dim3 grid(static_cast<unsigned>((p.T + C::BLOCK_M - 1) / C::BLOCK_M),
                  static_cast<unsigned>(p.N), static_cast<unsigned>(p.B));
  wide_fwd_kernel<T, HD, TF32><<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p);
  check_cuda(cudaGetLastError(), "sm80 f32/f64 forward: kernel launch");
}

} // namespace kattn::cuda_kernels::sm80

// One explicit instantiation (the whole body of an inst/ file).
#define KATTN_SM80_INSTANTIATE_WIDE(T, HD, TF32)                                                   \
  template void kattn::cuda_kernels::sm80::launch_wide<T, HD, TF32>(const kattn::FlashFwdParams&,  \
                                                                    cudaStream_t);
