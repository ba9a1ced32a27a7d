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

namespace kattn::cuda_kernels::sm80 {
namespace {

bool instantiated(int hd) {
  return hd == 64 || hd == 128 || hd == 256;
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

const char* dtype_name(ElemType t) {
  return t == ElemType::bf16 ? "bf16" : "f16";
}

} // namespace

int smem_bytes(int hd) {
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
  if (p.H != p.Hv || !instantiated(p.H))
    return "head dims H=" + std::to_string(p.H) + " Hv=" + std::to_string(p.Hv) +
           " not instantiated (sm80 kernels: H == Hv in {64, 128, 256})";
  for (const std::string& why :
       {unit_dim_stride_limit(p), access_limit(p, 16, 8, "16-byte cp.async rows"), varlen_limit(p),
        heads_limit(p), grid_limit(p)})
    if (!why.empty())
      return why;
  const int need = smem_bytes(p.H), have = device_smem_optin();
  if (need > have)
    return "head dim " + std::to_string(p.H) + " needs " + std::to_string(need) +
           " bytes of shared memory per block, the device allows " + std::to_string(have);
  return {};
}

std::string kernel_name(const FlashFwdParams& p) {
  return std::string("sm80_fwd_") + dtype_name(p.dtype) + "_h" + std::to_string(p.H);
}

void run(const FlashFwdParams& p, CUstream_st* stream) {
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
