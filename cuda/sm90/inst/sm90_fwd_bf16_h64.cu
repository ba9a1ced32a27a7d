// sm90 forward, bf16, head dim 64 (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "../tile_policy.hpp"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h64(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90Config<true, TileChoice::h64>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
