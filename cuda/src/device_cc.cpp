#include "device_cc.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

namespace kattn::cuda_kernels {

namespace {

// major * 10 + minor of the current device; 0 with `why` set when there is none usable.
int current_cc(std::string& why) {
  static std::mutex m;
  static std::unordered_map<int, int> cache;
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) {
    why = std::string("no usable CUDA device (cudaGetDevice: ") + cudaGetErrorName(e) + ")";
    return 0;
  }
  const std::lock_guard<std::mutex> lock(m);
  if (auto it = cache.find(dev); it != cache.end())
    return it->second;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    why = "cannot read the compute capability of device " + std::to_string(dev);
    return 0;
  }
  return cache[dev] = major * 10 + minor;
}

} // namespace

DeviceAndForce device_and_force() {
  DeviceAndForce d;
  d.cc = current_cc(d.why);
  if (d.cc == 0)
    return d;
  const char* env = std::getenv("KOKKOSATTN_CUDA_KERNEL");
  d.forced = env ? env : "";
  if (!d.forced.empty() && d.forced != "sm80" && d.forced != "sm90" && d.forced != "decode")
    d.why = "KOKKOSATTN_CUDA_KERNEL=" + d.forced + ": expected sm80, sm90 or decode";
  return d;
}

std::string sm90_device_reason(int cc) {
#ifdef KATTN_HAVE_SM90
  if (cc != 90)
    return "sm90 kernels need compute capability 9.0 (sm_90a), got " + std::to_string(cc / 10) +
           "." + std::to_string(cc % 10);
  return {};
#else
  (void)cc;
  return "sm90 kernels not built in this library";
#endif
}

} // namespace kattn::cuda_kernels
