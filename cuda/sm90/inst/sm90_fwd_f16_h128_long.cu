// sm90 forward, f16, head dim 128, 4096 keys or more (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_f16_h128_long(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90H128Long<false>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
