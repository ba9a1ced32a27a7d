// sm90 forward, f16, head dim 256 (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "../tile_policy.hpp"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_f16_h256(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90Config<false, TileChoice::h256>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
