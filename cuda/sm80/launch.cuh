// The launcher of fwd_kernel<Elem, HD>: grid (query blocks, heads, batch), dynamic shared
// memory opt-in, launch error checked.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sm80/fwd_kernel.cuh"
#include "sm80/launch.hpp"

namespace kattn::cuda_kernels::sm80 {

inline void check_launch(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("sm80 forward: ") + what + " failed: " +
                             cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

template <class Elem, int HD>
void launch(const FlashFwdParams& p, cudaStream_t stream) {
  using C = Config<HD>;
  if (p.B == 0 || p.T == 0 || p.N == 0)
    return;
  auto* kernel = &fwd_kernel<Elem, HD>;
  // The shared-memory opt-in is per device; set it once per device and instantiation.
  static std::atomic<std::uint64_t> opted_in{0};
  int dev = 0;
  check_launch(cudaGetDevice(&dev), "cudaGetDevice");
  const std::uint64_t bit = dev < 64 ? std::uint64_t{1} << dev : 0;
  if (bit == 0 || (opted_in.load(std::memory_order_acquire) & bit) == 0) {
    check_launch(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM_BYTES),
        "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    opted_in.fetch_or(bit, std::memory_order_acq_rel);
  }
  const dim3 grid(static_cast<unsigned>((p.T + C::BLOCK_M - 1) / C::BLOCK_M),
                  static_cast<unsigned>(p.N), static_cast<unsigned>(p.B));
  kernel<<<grid, C::THREADS, C::SMEM_BYTES, stream>>>(p);
  check_launch(cudaGetLastError(), "kernel launch");
}

} // namespace kattn::cuda_kernels::sm80

// One explicit instantiation (the whole body of an inst/ file).
#define KATTN_SM80_INSTANTIATE(ELEM, HD)                                                           \
  template void kattn::cuda_kernels::sm80::launch<ELEM, HD>(                                       \
      const kattn::cuda_kernels::FlashFwdParams&, cudaStream_t);
