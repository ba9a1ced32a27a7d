// The framework-free entry of our CUDA flash-attention kernels: params + stream. Names no CUDA
// type, so host code compiled by any C++ compiler can include it.
#pragma once

#include <string>

#include "kattn_kernels/flash_params.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace kattn::cuda_kernels {

// Which kernel family runs a problem.
enum class KernelFamily : std::uint8_t { none, sm80, sm90, decode };

struct KernelChoice {
  KernelFamily family = KernelFamily::none;
  std::string name;   // e.g. "sm90_fwd_bf16_h128" (what the dispatch log prints)
  std::string reason; // why none, when family == none
};

// Whether auto may take the split-KV decode kernel (cuda/decode/): off until its device tests,
// compute-sanitizer and the conformance runner have passed on a GPU (written 2026-12-08 with
// no device lent: compiled and host-tested only). Off, the kernel runs only when
// KOKKOSATTN_CUDA_KERNEL=decode asks for it, and the cuda backend refuses a paged cache in auto
// (portable serves it).
inline constexpr bool kDecodeVerified = false;

// Picks the kernel for `p` on the current device (compute capability read once per device):
// the split-KV decode kernel (decode/decode.hpp; in auto only once kDecodeVerified) for a paged
// cache, which only it reads, and where auto_takes() says the query rows are few; else sm_90
// prefers the sm90 family where it supports the problem (f32: from T, S >= 2048, the measured
// crossover of its fp32 kernel, sm90/sm90_fwd_f32.hpp), else sm80; sm_8x uses sm80.
// KOKKOSATTN_CUDA_KERNEL=sm80|sm90|decode forces one (a forced kernel that cannot serve the problem
// gives family none with the reason). Touches no tensor data.
KernelChoice choose_kernel(const FlashFwdParams& p);

// The kernel families this build has: "sm80 (mma.sync) and sm90 (wgmma, TMA) families" or
// "sm80 (mma.sync) family".
std::string built_families();

// Enqueues the forward on `stream`. Throws std::runtime_error naming the CUDA error (launch
// checked with cudaGetLastError) or std::invalid_argument when no kernel serves `p`.
void flash_fwd(const FlashFwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels
