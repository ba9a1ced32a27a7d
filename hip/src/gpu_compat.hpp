// Our own small compatibility layer: the few runtime/device names the HIP kernel source uses,
// mapped to HIP (hipcc, HIP_PLATFORM=amd) or to CUDA (nvcc). HIP 5.7's own NVIDIA-platform
// headers do not compile against CUDA 13, so the generic path never includes them.
//
// Kernel code uses: KATTN_GPU_SHFL_XOR, kattn_gpu::Stream, kattn_gpu::check_launch(), and the
// keywords both dialects share (__global__, __device__, __shared__, __syncthreads, <<<...>>>).
#pragma once

#include <stdexcept>
#include <string>

#if defined(__HIP__) // clang compiling HIP (hipcc with HIP_PLATFORM=amd)
#include <hip/hip_runtime.h>
#define KATTN_GPU_HIP 1
// 64-bit mask-free shuffle: the whole wavefront takes part.
#define KATTN_GPU_SHFL_XOR(v, lane_mask) __shfl_xor((v), (lane_mask))
namespace kattn_gpu {
using Stream = hipStream_t;
inline void check_launch(const char* what) {
  const hipError_t e = hipGetLastError();
  if (e != hipSuccess)
    throw std::runtime_error(std::string(what) + ": " + hipGetErrorName(e) + " (" +
                             hipGetErrorString(e) + ")");
}
} // namespace kattn_gpu
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define KATTN_GPU_CUDA 1
#define KATTN_GPU_SHFL_XOR(v, lane_mask) __shfl_xor_sync(0xffffffffu, (v), (lane_mask))
namespace kattn_gpu {
using Stream = cudaStream_t;
inline void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" +
                             cudaGetErrorString(e) + ")");
}
} // namespace kattn_gpu
#else
#error "gpu_compat.hpp: compile with hipcc (HIP_PLATFORM=amd) or nvcc"
#endif
