// The split merge for both element types.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/cuda_check.hpp"
#include "decode/decode_combine.cuh"
#include "decode/decode_launch.hpp"

namespace kattn::cuda_kernels::decode {

void combine(const FlashFwdParams& p, const SplitOut& part, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(p.B) * p.N * p.T;
  const dim3 grid(static_cast<unsigned>((rows + kCombineWarps - 1) / kCombineWarps));
  if (p.dtype == ElemType::bf16)
    decode_combine<__nv_bfloat16><<<grid, 32 * kCombineWarps, 0, stream>>>(p, part);
  else
    decode_combine<__half><<<grid, 32 * kCombineWarps, 0, stream>>>(p, part);
  check_cuda(cudaGetLastError(), "cuda decode: split merge launch");
}

} // namespace kattn::cuda_kernels::decode
