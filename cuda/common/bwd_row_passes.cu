// The backward's row passes for bf16 and fp16 (bwd_row_passes.hpp).
#include "common/bwd_row_passes.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/bwd_rows.cuh"
#include "common/cuda_check.hpp"

namespace kattn::cuda_kernels {

void bwd_prepass(const FlashBwdParams& p, CUstream_st* stream) {
  if (!p.dq_kernel)
    check_cuda(
        cudaMemsetAsync(p.dq_accum, 0,
                        static_cast<std::size_t>(p.fwd.N) * static_cast<std::size_t>(p.acc_rows) *
                            static_cast<std::size_t>(p.fwd.H) * sizeof(float),
                        stream),
        "backward: cudaMemsetAsync(dq_accum)");
  if (p.fwd.dtype == ElemType::bf16)
    launch_dot_do_o<__nv_bfloat162>(p, stream);
  else
    launch_dot_do_o<__half2>(p, stream);
}

void bwd_convert_dq(const FlashBwdParams& p, CUstream_st* stream) {
  if (p.dq_kernel)
    return;
  if (p.fwd.dtype == ElemType::bf16)
    launch_convert_dq<__nv_bfloat162>(p, stream);
  else
    launch_convert_dq<__half2>(p, stream);
}

} // namespace kattn::cuda_kernels
