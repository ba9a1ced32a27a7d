// sm90 forward, bf16, head dim 64 (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h64(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90H64<true>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
