// ForwardProblem + Dims -> FlashFwdParams for the HIP kernels.
#include "hip/hip_params.hpp"

#include "kattn_hip/flash_fwd.hpp"

namespace kattn::hip_kernels {

FlashParamsResult make_flash_fwd_params(const ForwardProblem& p, const Dims& d,
                                        MemorySpace memory) {
  FlashParamsResult r = make_flash_params(p, d, memory, "in the hip kernels");
  if (r.ok())
    if (const FlashSupport s = supports(r.params); !s.ok)
      r.reason = s.reason;
  return r;
}

} // namespace kattn::hip_kernels
