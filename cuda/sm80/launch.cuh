// The launcher of fwd_kernel<Elem, HD>: grid (query blocks, heads, batch), dynamic shared
// memory opt-in, launch error checked.
#pragma once

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "sm80/fwd_kernel.cuh"
#include "sm80/launch.hpp"

namespace kattn::cuda_kernels::sm80 {

template <class Elem, int HD>
void launch(const FlashFwdParams& p, cudaStream_t stream) {
  using C = Config<HD>;
  if (p.B == 0 || p.T == 0 || p.N == 0)
    return;
  opt_in_smem<&fwd_kernel<Elem, HD>>(C::SMEM_BYTES, "sm80 forward");
  const dim3 grid(static_cast<unsigned>((p.T + C::BLOCK_M - 1) / C::BLOCK_M),
                  static_cast<unsigned>(p.N), static_cast<unsigned>(p.B));
  fwd_kernel<Elem, HD><<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p);
  check_cuda(cudaGetLastError(), "sm80 forward: kernel launch");
}

} // namespace kattn::cuda_kernels::sm80

// One explicit instantiation (the whole body of an inst/ file).
#define KATTN_SM80_INSTANTIATE(ELEM, HD)                                                           \
  template void kattn::cuda_kernels::sm80::launch<ELEM, HD>(const kattn::FlashFwdParams&,          \
                                                            cudaStream_t);
