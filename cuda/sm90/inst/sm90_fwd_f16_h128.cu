// sm90 forward, f16, head dim 128.
#include "../launch.cuh"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_f16_h128(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<FwdConfig<false, 128>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
