// The framework-free entry of our CUDA kernels: picks the family for the current device
// (compute capability read once per device) and enqueues the forward.
#include "kattn_cuda/flash_fwd.hpp"

#include <cuda_runtime_api.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "decode/decode.hpp"
#include "device_cc.hpp"
#include "kattn_kernels/params_limits.hpp"
#include "sm80/sm80_fwd.hpp"
#ifdef KATTN_HAVE_SM90
#include "sm90/sm90_fwd.hpp"
#include "sm90/sm90_fwd_f32.hpp"
#endif

namespace kattn::cuda_kernels {
namespace {

std::string sm90_reason(const FlashFwdParams& p, int cc) {
  if (std::string why = sm90_device_reason(cc); !why.empty())
    return why;
#ifdef KATTN_HAVE_SM90
  return sm90::unsupported_reason(p);
#else
  (void)p;
  return {};
#endif
}

std::string sm80_reason(const FlashFwdParams& p, int cc) {
  // sm_80/sm_90 SASS plus PTX (JIT-compiled on newer devices): anything from 8.0 up.
  if (cc < 80)
    return "sm80 kernels need compute capability >= 8.0 (mma.sync bf16, cp.async), got " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return sm80::unsupported_reason(p);
}

std::string decode_reason(const FlashFwdParams& p, int cc) {
  if (cc < 80)
    return "the decode kernel needs compute capability >= 8.0 (mma.sync bf16, cp.async), got " +
           std::to_string(cc / 10) + "." + std::to_string(cc % 10);
  return decode::unsupported_reason(p);
}

KernelChoice pick(KernelFamily f, const FlashFwdParams& p) {
  KernelChoice c;
  c.family = f;
  if (f == KernelFamily::decode) {
    c.name = decode::kernel_name(p);
    return c;
  }
#ifdef KATTN_HAVE_SM90
  c.name = f == KernelFamily::sm90 ? sm90::kernel_name(p) : sm80::kernel_name(p);
#else
  c.name = sm80::kernel_name(p);
#endif
  return c;
}

// The decode kernel where it is forced, where the cache is paged (no other kernel reads one) or
// where auto prefers it; nullopt: ask the flash families.
std::optional<KernelChoice> decode_choice(const FlashFwdParams& p, int cc,
                                          const std::string& forced) {
  const bool paged = p.page_table != nullptr;
  if (forced != "decode" && !(forced.empty() && decode::auto_takes(p)) && !paged)
    return std::nullopt;
  if (paged && !forced.empty() && forced != "decode")
    return no_kernel(forced + " (forced by KOKKOSATTN_CUDA_KERNEL): " +
                     paged_limit(p, ("the " + forced + " kernels").c_str()));
  if (forced.empty() && !kDecodeVerified) {
    if (paged)
      return no_kernel(
          "paged KV cache: the decode kernel is opt-in (KOKKOSATTN_CUDA_KERNEL=decode) "
          "until verified on a device");
    return std::nullopt;
  }
  const std::string why = decode_reason(p, cc);
  if (why.empty())
    return pick(KernelFamily::decode, p);
  if (forced == "decode")
    return no_kernel("decode (forced by KOKKOSATTN_CUDA_KERNEL): " + why);
  if (paged)
    return no_kernel("decode: " + why);
  return std::nullopt; // auto: the flash families may still serve it
}

// Whether auto takes the sm90 family where it serves p: always, except f32 problems below the
// sm90 fp32 kernel's measured crossover (sm90::f32_auto).
bool sm90_auto(const FlashFwdParams& p) {
#ifdef KATTN_HAVE_SM90
  return p.dtype != ElemType::f32 || sm90::f32_auto(p);
#else
  (void)p;
  return true;
#endif
}

} // namespace

KernelChoice choose_kernel(const FlashFwdParams& p) {
  const DeviceAndForce d = device_and_force();
  if (!d.why.empty())
    return no_kernel(d.why);
  const int cc = d.cc;
  const std::string& forced = d.forced;
  if (std::optional<KernelChoice> c = decode_choice(p, cc, forced))
    return *c;
  if (forced != "sm80") {
    const std::string r90 = sm90_reason(p, cc);
    if (r90.empty() && (forced == "sm90" || sm90_auto(p)))
      return pick(KernelFamily::sm90, p);
    if (forced == "sm90")
      return no_kernel("sm90 (forced by KOKKOSATTN_CUDA_KERNEL): " + r90);
    const std::string r80 = sm80_reason(p, cc);
    if (r80.empty())
      return pick(KernelFamily::sm80, p);
    return no_kernel("sm90: " + r90 + "; sm80: " + r80);
  }
  const std::string r80 = sm80_reason(p, cc);
  if (r80.empty())
    return pick(KernelFamily::sm80, p);
  return no_kernel("sm80 (forced by KOKKOSATTN_CUDA_KERNEL): " + r80);
}

std::string built_families() {
#ifdef KATTN_HAVE_SM90
  return "sm80 (mma.sync) and sm90 (wgmma, TMA) families";
#else
  return "sm80 (mma.sync) family";
#endif
}

void flash_fwd(const FlashFwdParams& p, CUstream_st* stream) {
  const KernelChoice c = choose_kernel(p);
  switch (c.family) {
  case KernelFamily::decode:
    decode::run(p, stream);
    return;
  case KernelFamily::sm80:
    sm80::run(p, stream);
    return;
  case KernelFamily::sm90:
#ifdef KATTN_HAVE_SM90
    sm90::run(p, stream);
    return;
#else
    break;
#endif
  case KernelFamily::none:
    break;
  }
  throw std::invalid_argument("no CUDA flash kernel serves this problem: " + c.reason);
}

} // namespace kattn::cuda_kernels
