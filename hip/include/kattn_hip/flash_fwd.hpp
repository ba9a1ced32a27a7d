// The framework-free entries of our HIP flash-attention kernels: params + stream. Names no HIP
// or CUDA type, so host code compiled by any C++ compiler can include it.
//
// Two builds of ONE kernel source (hip/src/fwd_kernel.hpp):
// * flash_fwd: the MFMA path for AMD gfx90a (MI200) and gfx942 (MI300), wavefront 64, compiled
//   by hipcc (HIP_PLATFORM=amd). Needs libamdhip64 and an AMD GPU at run time.
// * flash_fwd_generic_cuda: the generic path (plain FMAs instead of MFMA, wavefront width 32),
//   compiled by nvcc through hip/src/gpu_compat.hpp. Same tiles, masks, softmax and indexing:
//   it is how that code is tested on NVIDIA hardware. Not a production kernel.
#pragma once

#include <string>

#include "kattn_kernels/flash_params.hpp"

struct ihipStream_t; // hipStream_t is ihipStream_t*
struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace kattn::hip_kernels {

struct FlashSupport {
  bool ok = false;
  std::string reason; // empty when ok
};

// The kernels' limits, checked on the params alone (no device, no data): bf16/f16, H == Hv in
// {64, 128}, head-dim stride 1, q/k/v/out 8-byte aligned with row/head/batch strides multiples
// of 4 elements (64-bit loads), N % K == 0, sizes within int, packed needs both cu_seqlens.
FlashSupport supports(const FlashFwdParams& p);

// Enqueues the MFMA forward on `stream` (nullptr = the null stream). Throws std::invalid_argument
// (supports() failed) or std::runtime_error naming the HIP error (launch checked with
// hipGetLastError). Only in builds with the HIP runtime (hip/src/flash_fwd_mfma.hip).
void flash_fwd(const FlashFwdParams& p, ihipStream_t* stream);

// The current HIP device, for the registry entry (HIP runtime builds only): empty when it is a
// gfx90a/gfx942 device the code objects serve, else why not ("no HIP device (...)", "device
// gfx1100: code objects only for gfx90a, gfx942"). description: "HIP 5.7, gfx942 (MI300X)".
std::string device_unsupported_reason();
std::string device_description();

// The generic path on a CUDA device (target kokkosattn_hip_generic_cuda). Same contract.
void flash_fwd_generic_cuda(const FlashFwdParams& p, CUstream_st* stream);

// Kernel names as the dispatch log would print them, e.g. "hip_mfma_fwd_bf16_h128".
std::string kernel_name(const FlashFwdParams& p, bool mfma);

} // namespace kattn::hip_kernels
