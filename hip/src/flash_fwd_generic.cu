// The generic build of the HIP forward kernel, compiled by nvcc through gpu_compat.hpp: the
// same tiles, masks, softmax and indexing as the MFMA build, with plain FMAs for the 16x16x16
// products and a wavefront (warp) of 32. It exists to run that source on NVIDIA hardware.
#include <stdexcept>

#include "fwd_launch.hpp"
#include "kattn_hip/flash_fwd.hpp"

namespace kattn::hip_kernels {

void flash_fwd_generic_cuda(const FlashFwdParams& p, CUstream_st* stream) {
  if (const FlashSupport s = supports(p); !s.ok)
    throw std::invalid_argument("kattn::hip_kernels::flash_fwd_generic_cuda: " + s.reason);
  detail::launch_fwd<32, false>(p, stream, "kattn::hip_kernels::flash_fwd_generic_cuda launch");
}

} // namespace kattn::hip_kernels
