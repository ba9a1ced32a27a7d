// The launchers of decode_kernel<Elem, HD> (one explicit instantiation per inst/ file) and the
// resident CTAs per SM the split heuristic needs.
#pragma once

#include <cuda_runtime_api.h>

#include "common/cuda_check.hpp"
#include "decode/decode_kernel.cuh"
#include "decode/decode_launch.hpp"

namespace kattn::cuda_kernels::decode {

template <class Elem, int HD>
int resident_ctas() {
  using C = Config<HD>;
  opt_in_smem<&decode_kernel<Elem, HD>>(C::SMEM_BYTES, "cuda decode");
  int n = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, &decode_kernel<Elem, HD>, C::THREADS,
                                                           C::SMEM_BYTES),
             "cuda decode: cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return n;
}

template <class Elem, int HD>
void launch(const FlashFwdParams& p, const SplitOut& part, cudaStream_t stream) {
  using C = Config<HD>;
  opt_in_smem<&decode_kernel<Elem, HD>>(C::SMEM_BYTES, "cuda decode");
  const dim3 grid(static_cast<unsigned>(decode_row_blocks(p.N, p.K, p.T)),
                  static_cast<unsigned>(part.splits), static_cast<unsigned>(p.B * p.K));
  decode_kernel<Elem, HD><<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p, part);
  check_cuda(cudaGetLastError(), "cuda decode: kernel launch");
}

} // namespace kattn::cuda_kernels::decode

// One explicit instantiation (the whole body of an inst/ file).
#define KATTN_DECODE_INSTANTIATE(ELEM, HD)                                                         \
  template int kattn::cuda_kernels::decode::resident_ctas<ELEM, HD>();                             \
  template void kattn::cuda_kernels::decode::launch<ELEM, HD>(                                     \
      const kattn::FlashFwdParams&, const kattn::cuda_kernels::decode::SplitOut&, cudaStream_t);
