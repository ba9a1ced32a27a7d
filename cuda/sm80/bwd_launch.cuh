// The launcher of bwd_kernel<Elem, HD> (grid: key blocks, KV heads, batch) and, with
// p.dq_kernel, of bwd_dq_kernel<Elem, HD> after it (grid: query blocks, query heads,
// batch): dynamic shared memory opt-in, launch errors checked. The row passes around them are
// launched by sm80_bwd.cu.
#pragma once

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "sm80/bwd_dq_kernel.cuh"
#include "sm80/bwd_kernel.cuh"
#include "sm80/launch.hpp"

namespace kattn::cuda_kernels::sm80 {

template <class Elem, int HD>
void launch_bwd(const FlashBwdParams& p, cudaStream_t stream) {
  using C = BwdConfig<HD>;
  opt_in_smem<&bwd_kernel<Elem, HD>>(C::SMEM_BYTES, "sm80 backward");
  const dim3 grid(static_cast<unsigned>((p.fwd.S + C::BLOCK_N - 1) / C::BLOCK_N),
                  static_cast<unsigned>(p.fwd.K), static_cast<unsigned>(p.fwd.B));
  bwd_kernel<Elem, HD><<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p);
  check_cuda(cudaGetLastError(), "sm80 backward: kernel launch");
  if (!p.dq_kernel)
    return;
  opt_in_smem<&bwd_dq_kernel<Elem, HD>>(C::DQ_SMEM_BYTES, "sm80 backward (dq)");
  const dim3 dq_grid(static_cast<unsigned>((p.fwd.T + C::BLOCK_M - 1) / C::BLOCK_M),
                     static_cast<unsigned>(p.fwd.N), static_cast<unsigned>(p.fwd.B));
  bwd_dq_kernel<Elem, HD><<<dq_grid, C::THREADS, C::DQ_SMEM_BYTES, stream>>>(p);
  check_cuda(cudaGetLastError(), "sm80 backward (dq): kernel launch");
}

} // namespace kattn::cuda_kernels::sm80

// One explicit instantiation (the whole body of an inst/bwd_ file).
#define KATTN_SM80_INSTANTIATE_BWD(ELEM, HD)                                                       \
  template void kattn::cuda_kernels::sm80::launch_bwd<ELEM, HD>(const kattn::FlashBwdParams&,      \
                                                                cudaStream_t);
