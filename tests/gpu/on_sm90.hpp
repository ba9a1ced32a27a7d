// Whether the current CUDA device runs the sm90 kernel family (compute capability 9.x).
#pragma once

#include <cuda_runtime_api.h>

namespace kattn::test {

inline bool on_sm90() {
  int dev = 0, major = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
    return false;
  return major == 9;
}

} // namespace kattn::test
