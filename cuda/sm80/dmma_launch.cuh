// The launcher of dmma_fwd_kernel<HD> (the f64 forward): grid (query blocks, heads, batch),
// dynamic shared memory opt-in, launch error checked.
#pragma once

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "sm80/dmma_fwd_kernel.cuh"
#include "sm80/launch.hpp"

namespace kattn::cuda_kernels::sm80 {

template <int HD>
void launch_dmma(const FlashFwdParams& p, cudaStream_t stream) {
  using C = DmmaConfig<HD>;
  if (p.B == 0 || p.T == 0 || p.N == 0)
    return;
  opt_in_smem<&dmma_fwd_kernel<HD>>(C::SMEM_BYTES, "sm80 f64 forward");
  const dim3 grid(static_cast<unsigned>((p.T + C::BLOCK_M - 1) / C::BLOCK_M),
                  static_cast<unsigned>(p.N), static_cast<unsigned>(p.B));
  dmma_fwd_kernel<HD><<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p);
  check_cuda(cudaGetLastError(), "sm80 f64 forward: kernel launch");
}

} // namespace kattn::cuda_kernels::sm80

// One explicit instantiation (the whole body of an inst/ file).
#define KATTN_SM80_INSTANTIATE_DMMA(HD)                                                            \
  template void kattn::cuda_kernels::sm80::launch_dmma<HD>(const kattn::FlashFwdParams&,           \
                                                           cudaStream_t);
