// sm90 forward, bf16, head dim 256.
#include "../launch.cuh"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h256(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<FwdConfig<true, 256>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
