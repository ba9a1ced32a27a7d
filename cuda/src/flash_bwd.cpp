// The framework-free entry of our CUDA backward: picks the kernel family, allocates the fp32
// workspace in stream order and enqueues the passes.
#include "kattn_cuda/flash_bwd.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/stream_scratch.hpp"
#include "device_cc.hpp"
#include "kattn_kernels/bwd_geometry.hpp"
#include "sm80/sm80_bwd.hpp"
#ifdef KATTN_HAVE_SM90
#include "sm90/sm90_bwd.hpp"
#endif

namespace kattn::cuda_kernels {
namespace {

std::string sm90_bwd_reason(const FlashBwdParams& p, int cc) {
  if (std::string why = sm90_device_reason(cc); !why.empty())
    return why;
#ifdef KATTN_HAVE_SM90
  return sm90::bwd_unsupported_reason(p);
#else
  (void)p;
  return {};
#endif
}

std::string sm80_bwd_reason(const FlashBwdParams& p, int cc) {
  if (cc < 80)
    return "sm80 backward needs compute capability >= 8.0, got " + std::to_string(cc / 10) + "." +
           std::to_string(cc % 10);
  return sm80::bwd_unsupported_reason(p);
}

KernelChoice pick_bwd(KernelFamily f, const FlashBwdParams& p) {
  KernelChoice c;
  c.family = f;
#ifdef KATTN_HAVE_SM90
  c.name = f == KernelFamily::sm90 ? sm90::bwd_kernel_name(p) : sm80::bwd_kernel_name(p);
#else
  c.name = sm80::bwd_kernel_name(p);
#endif
  return c;
}

// dQ from the sm80 family's dq kernel (no dq_accum) rather than atomics.
bool dq_kernel_of(const KernelChoice& c, const FlashBwdParams& p) {
  return c.family == KernelFamily::sm80 && sm80::uses_dq_kernel(p);
}

// The workspace: N x accumulator rows of D, and as many of dq_accum's H floats without a dq
// kernel.
std::size_t workspace_rows(const FlashBwdParams& p) {
  return static_cast<std::size_t>(p.fwd.N) * static_cast<std::size_t>(acc_rows_total(p.fwd));
}
std::size_t dq_floats(const FlashBwdParams& p, bool dq_kernel) {
  return dq_kernel ? 0 : static_cast<std::size_t>(p.fwd.H);
}
// Then, for the sm90 family in deterministic mode, the order of its dQ additions.
std::size_t order_ints(const KernelChoice& c, const FlashBwdParams& p) {
  return c.family == KernelFamily::sm90 && p.deterministic
             ? static_cast<std::size_t>(dq_order_ints(p.fwd))
             : 0;
}
std::size_t workspace_bytes(const KernelChoice& c, const FlashBwdParams& p, bool dq_kernel) {
  return workspace_rows(p) * (dq_floats(p, dq_kernel) + 1) * sizeof(float) +
         order_ints(c, p) * sizeof(std::int32_t);
}

} // namespace

// Whether auto may take the sm90 backward: on since its TMA-reduction version passed the device
// tests (both families forced), compute-sanitizer and the conformance runner on the H200; its
// fwd+bwd runs 1.5-2.1x the sm80 backward's (benchmarks/results/h200-2026-12-03-sm90-backward.md).
// Off again, the family runs only when KOKKOSATTN_CUDA_KERNEL=sm90 asks for it.
constexpr bool kSm90BackwardVerified = true;

// The sm90 family first where it serves the problem (see kSm90BackwardVerified), else sm80;
// KOKKOSATTN_CUDA_KERNEL forces one and then refuses instead of falling back.
KernelChoice choose_bwd_kernel(const FlashBwdParams& p) {
  const DeviceAndForce d = device_and_force();
  if (!d.why.empty())
    return no_kernel(d.why);
  if (d.forced == "decode")
    return no_kernel(
        "decode (forced by KOKKOSATTN_CUDA_KERNEL): the decode kernel is forward only");
  std::string r90 = "opt-in (KOKKOSATTN_CUDA_KERNEL=sm90) until verified on a device";
  if (d.forced == "sm90" || (d.forced.empty() && kSm90BackwardVerified)) {
    r90 = sm90_bwd_reason(p, d.cc);
    if (r90.empty())
      return pick_bwd(KernelFamily::sm90, p);
    if (d.forced == "sm90")
      return no_kernel("sm90 (forced by KOKKOSATTN_CUDA_KERNEL): " + r90);
  }
  const std::string r80 = sm80_bwd_reason(p, d.cc);
  if (r80.empty())
    return pick_bwd(KernelFamily::sm80, p);
  if (d.forced == "sm80")
    return no_kernel("sm80 (forced by KOKKOSATTN_CUDA_KERNEL): " + r80);
  return no_kernel("sm90: " + r90 + "; sm80: " + r80);
}

std::size_t bwd_workspace_bytes(const FlashBwdParams& p) {
  const KernelChoice c = choose_bwd_kernel(p);
  return workspace_bytes(c, p, dq_kernel_of(c, p));
}

void flash_bwd(const FlashBwdParams& params, CUstream_st* stream) {
  const KernelChoice c = choose_bwd_kernel(params);
  if (c.family == KernelFamily::none)
    throw std::invalid_argument("no CUDA flash backward kernel serves this problem: " + c.reason);
  FlashBwdParams p = params;
  p.acc_rows = acc_rows_total(p.fwd);
  p.dq_kernel = dq_kernel_of(c, p);
  const std::size_t rows = workspace_rows(p), dq = dq_floats(p, p.dq_kernel);
  const StreamScratch ws(workspace_bytes(c, p, p.dq_kernel), stream, "cuda backward");
  // dq_accum first: the conversion reads it as float2 (H is even), D and the order's counters
  // need 4-byte alignment only. dq_kernel: no dq_accum (the dq kernel writes dq).
  p.dq_accum = p.dq_kernel ? nullptr : static_cast<float*>(ws.ptr);
  p.dsum = static_cast<float*>(ws.ptr) + rows * dq;
  p.dq_order = order_ints(c, p) > 0 ? reinterpret_cast<std::int32_t*>(p.dsum + rows) : nullptr;
#ifdef KATTN_HAVE_SM90
  if (c.family == KernelFamily::sm90) {
    sm90::run_bwd(p, stream);
    return;
  }
#endif
  sm80::run_bwd(p, stream);
}

} // namespace kattn::cuda_kernels
