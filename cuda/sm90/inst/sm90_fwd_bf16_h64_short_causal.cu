// sm90 forward, bf16, head dim 64, causal with up to 1024 keys (configurations: fwd_config.cuh).
#include "../launch.cuh"
#include "../tile_policy.hpp"
#include "instances.hpp"

namespace kattn::cuda_kernels::sm90 {

void launch_bf16_h64_short_causal(const FlashFwdParams& p, CUstream_st* stream) {
  launch_fwd<Sm90Config<true, TileChoice::h64_short_causal>>(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
