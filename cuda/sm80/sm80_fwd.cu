// The sm80 family's hooks: what it serves, the kernel's name, and the dispatch to the
// instantiation for (dtype, head dim).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kattn_kernels/params_limits.hpp"
#include "sm80/kernel_traits.cuh"
#include "sm80/launch.hpp"
#include "sm80/sm80_fwd.hpp"
#include "sm80/wide_config.cuh"
#include "sm80/wide_math.cuh"

namespace kattn::cuda_kernels::sm80 {
namespace {

bool wide(ElemType t) {
  return t == ElemType::f32 || t == ElemType::f64;
}

// bf16/f16 (mma.sync m16n8k16) at head dims 64, 128, 256; f32 (3xTF32, or TF32 when permitted)
// and f64 (f64 MMAs) at 64
// and 128 (wide_fwd_kernel.cuh).
std::string dims_reason(const FlashFwdParams& p) {
  const bool dims_ok = p.H == p.Hv && (p.H == 64 || p.H == 128 || (!wide(p.dtype) && p.H == 256));
  if (!dims_ok)
    return "head dims H=" + std::to_string(p.H) + " Hv=" + std::to_string(p.Hv) +
           " not instantiated (sm80 kernels: H == Hv in {64, 128, 256}; f32 and f64: {64, 128})";
  return {};
}

// Largest opt-in dynamic shared memory per block of the current device (read once per device).
int device_smem_optin() {
  static std::mutex m;
  static std::unordered_map<int, int> cache;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess)
    return 0;
  const std::lock_guard<std::mutex> lock(m);
  if (auto it = cache.find(dev); it != cache.end())
    return it->second;
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    bytes = 0;
  cache[dev] = bytes;
  return bytes;
}

} // namespace

int smem_bytes(ElemType dtype, int hd) {
  if (dtype == ElemType::f64)
    return hd == 64    ? WideConfig<double, 64>::SMEM_BYTES
           : hd == 128 ? WideConfig<double, 128>::SMEM_BYTES
                       : 0;
  if (dtype == ElemType::f32)
    return hd == 64    ? WideConfig<float, 64>::SMEM_BYTES
           : hd == 128 ? WideConfig<float, 128>::SMEM_BYTES
                       : 0;
  switch (hd) {
  case 64:
    return Config<64>::SMEM_BYTES;
  case 128:
    return Config<128>::SMEM_BYTES;
  case 256:
    return Config<256>::SMEM_BYTES;
  default:
    return 0;
  }
}

std::string unsupported_reason(const FlashFwdParams& p) {
  if (std::string why = dims_reason(p); !why.empty())
    return why;
  const std::int64_t chunk_elems = p.dtype == ElemType::f64   ? 2
                                   : p.dtype == ElemType::f32 ? 4
                                                              : 8; // 16 bytes
  for (const std::string& why :
       {unit_dim_stride_limit(p), access_limit(p, 16, chunk_elems, "16-byte cp.async rows"),
        varlen_limit(p), paged_limit(p, "the sm80 kernels"), heads_limit(p), grid_limit(p)})
    if (!why.empty())
      return why;
  const int need = smem_bytes(p.dtype, p.H), have = device_smem_optin();
  if (need > have)
    return "head dim " + std::to_string(p.H) + " needs " + std::to_string(need) +
           " bytes of shared memory per block, the device allows " + std::to_string(have);
  return {};
}

std::string kernel_name(const FlashFwdParams& p) {
  // f32 names its precision mode: the 3xTF32 split, or TF32 when permitted (wide_math.cuh).
  const std::string mode = p.dtype != ElemType::f32 ? ""
                           : p.tf32                 ? std::string("_") + WideMathTf32::mode
                                                    : std::string("_") + WideMath<float>::mode;
  return std::string("sm80_fwd_") + elem_name(p.dtype) + mode + "_h" + std::to_string(p.H);
}

// The wide kernel at the problem's head dim (64 or 128: dims_reason).
template <class T, bool TF32>
void run_wide(const FlashFwdParams& p, CUstream_st* stream) {
  return p.H == 64 ? launch_wide<T, 64, TF32>(p, stream) : launch_wide<T, 128, TF32>(p, stream);
}

void run(const FlashFwdParams& p, CUstream_st* stream) {
  if (p.dtype == ElemType::f64)
    return run_wide<double, false>(p, stream);
  if (p.dtype == ElemType::f32)
    return p.tf32 ? run_wide<float, true>(p, stream) : run_wide<float, false>(p, stream);
  const bool bf = p.dtype == ElemType::bf16;
  switch (p.H) {
  case 64:
    return bf ? launch<__nv_bfloat16, 64>(p, stream) : launch<__half, 64>(p, stream);
  case 128:
    return bf ? launch<__nv_bfloat16, 128>(p, stream) : launch<__half, 128>(p, stream);
  case 256:
    return bf ? launch<__nv_bfloat16, 256>(p, stream) : launch<__half, 256>(p, stream);
  default:
    break;
  }
}

} // namespace kattn::cuda_kernels::sm80
