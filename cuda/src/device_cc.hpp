// What both entries (flash_fwd.cpp, flash_bwd.cpp) read before choosing a kernel: the current
// device's compute capability (once per device) and the family KOKKOSATTN_CUDA_KERNEL forces.
#pragma once

#include <string>
#include <utility>

#include "kattn_cuda/flash_fwd.hpp"

namespace kattn::cuda_kernels {

struct DeviceAndForce {
  int cc = 0;         // major * 10 + minor
  std::string forced; // "", "sm80", "sm90" or "decode" (forward only)
  std::string why;    // non-empty: no kernel can run (no device, or a bad KOKKOSATTN_CUDA_KERNEL)
};
DeviceAndForce device_and_force();

// Empty when the sm90 family can run on a device of compute capability cc (9.0, and the family
// built into this library), else why not. Both entries ask it before the family's own check.
std::string sm90_device_reason(int cc);

inline KernelChoice no_kernel(std::string why) {
  KernelChoice c;
  c.reason = std::move(why);
  return c;
}

} // namespace kattn::cuda_kernels
