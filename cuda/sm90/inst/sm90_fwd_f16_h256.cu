// sm90 forward, f16, head dim 256.
#include "../launch.cuh"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_f16_h256(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<FwdConfig<false, 256>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
