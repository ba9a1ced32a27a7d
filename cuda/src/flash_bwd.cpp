// The framework-free entry of our CUDA backward: picks the kernel family, allocates the fp32
// workspace in stream order and enqueues the passes.
#include "kattn_cuda/flash_bwd.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "device_cc.hpp"
#include "sm80/sm80_bwd.hpp"

namespace kattn::cuda_kernels {
namespace {

std::int64_t acc_rows(const FlashBwdParams& p) {
  return p.fwd.cu_seqlens_q != nullptr ? p.fwd.total_q
                                       : std::int64_t{p.fwd.B} * std::int64_t{p.fwd.T};
}

// The workspace of one call, released in stream order however the call ends.
struct StreamScratch {
  void* ptr = nullptr;
  cudaStream_t stream = nullptr;
  StreamScratch(std::size_t bytes, cudaStream_t s) : stream(s) {
    if (bytes > 0)
      check_cuda(cudaMallocAsync(&ptr, bytes, stream), "cuda backward: cudaMallocAsync(workspace)");
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  ~StreamScratch() {
    if (ptr != nullptr)
      (void)cudaFreeAsync(ptr, stream); // nothing to report from a destructor
  }
};

} // namespace

KernelChoice choose_bwd_kernel(const FlashBwdParams& p) {
  const DeviceAndForce d = device_and_force();
  if (!d.why.empty())
    return no_kernel(d.why);
  const int cc = d.cc;
  if (d.forced == "sm90")
    return no_kernel("sm90 (forced by KOKKOSATTN_CUDA_KERNEL): no sm90 backward kernels yet");
  if (cc < 80)
    return no_kernel("sm80 backward needs compute capability >= 8.0, got " +
                     std::to_string(cc / 10) + "." + std::to_string(cc % 10));
  if (std::string r = sm80::bwd_unsupported_reason(p); !r.empty())
    return no_kernel("sm80: " + r);
  KernelChoice c;
  c.family = KernelFamily::sm80;
  c.name = sm80::bwd_kernel_name(p);
  return c;
}

std::size_t bwd_workspace_bytes(const FlashBwdParams& p) {
  const std::size_t dq_floats = sm80::uses_dq_kernel(p) ? 0 : static_cast<std::size_t>(p.fwd.H);
  return static_cast<std::size_t>(p.fwd.N) * static_cast<std::size_t>(acc_rows(p)) *
         (dq_floats + 1) * sizeof(float);
}

void flash_bwd(const FlashBwdParams& params, CUstream_st* stream) {
  const KernelChoice c = choose_bwd_kernel(params);
  if (c.family == KernelFamily::none)
    throw std::invalid_argument("no CUDA flash backward kernel serves this problem: " + c.reason);
  FlashBwdParams p = params;
  p.acc_rows = acc_rows(p);
  p.dq_kernel = sm80::uses_dq_kernel(p);
  const StreamScratch ws(bwd_workspace_bytes(p), stream);
  // dq_accum first: the conversion reads it as float2 (H is even), D needs 4-byte alignment only.
  // dq_kernel: no dq_accum (the dq kernel writes dq).
  const std::size_t rows = static_cast<std::size_t>(p.fwd.N) * static_cast<std::size_t>(p.acc_rows);
  p.dq_accum = p.dq_kernel ? nullptr : static_cast<float*>(ws.ptr);
  p.dsum =
      static_cast<float*>(ws.ptr) + (p.dq_kernel ? 0 : rows * static_cast<std::size_t>(p.fwd.H));
  sm80::run_bwd(p, stream);
}

} // namespace kattn::cuda_kernels
