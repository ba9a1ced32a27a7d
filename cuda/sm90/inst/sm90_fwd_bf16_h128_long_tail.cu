// sm90 forward, bf16, head dim 128, 4096 keys or more, last key block of at most 64 keys
// (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "../tile_policy.hpp"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h128_long_tail(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90Config<true, TileChoice::h128_long_tail>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
