// What the HIP forward kernels serve, decided on the params alone (shared by both builds).
#include <cstdint>
#include <string>

#include "kattn_hip/flash_fwd.hpp"
#include "kattn_kernels/params_limits.hpp"

namespace kattn::hip_kernels {
namespace {

FlashSupport no(std::string why) {
  return {false, std::move(why)};
}

} // namespace

FlashSupport supports(const FlashFwdParams& p) {
  if (std::string why = half_dtype_limit(p, "hip kernels"); !why.empty())
    return no(std::move(why));
  if (p.H != p.Hv || (p.H != 64 && p.H != 128))
    return no("head dims: expected H == Hv in {64, 128}, got H=" + std::to_string(p.H) +
              " Hv=" + std::to_string(p.Hv));
  if (p.B < 0 || p.T < 0 || p.S < 0)
    return no("sizes: expected B, T, S >= 0");
  for (std::string why :
       {unit_dim_stride_limit(p), access_limit(p, 8, 4, "64-bit loads"), heads_limit(p),
        grid_limit(p), varlen_limit(p), paged_limit(p, "the hip kernels")})
    if (!why.empty())
      return no(std::move(why));
  if (!(p.scale > 0.f) || p.softcap < 0.f)
    return no("scale: expected > 0 and softcap >= 0");
  return {true, {}};
}

std::string kernel_name(const FlashFwdParams& p, bool mfma) {
  return std::string(mfma ? "hip_mfma_fwd_" : "hip_generic_fwd_") +
         (p.dtype == ElemType::bf16 ? "bf16" : "f16") + "_h" + std::to_string(p.H);
}

} // namespace kattn::hip_kernels
