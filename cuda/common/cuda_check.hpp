// Host helpers every CUDA kernel family and its tools share: the CUDA runtime error check and
// the dynamic shared-memory opt-in. Host code only (no device code), so the kernels compile the
// same whichever family includes it.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kattn::cuda_kernels {

// Throws std::runtime_error "<what> failed: <error name> (<error string>) at <file>:<line>";
// `what` names the call (and, where the caller wants it, who made it: "sm80 forward: ...").
[[noreturn]] inline void throw_cuda_error(cudaError_t e, std::string_view what,
                                          const std::source_location& where) {
  throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorName(e) + " (" +
                           cudaGetErrorString(e) + ") at " + where.file_name() + ":" +
                           std::to_string(where.line()));
}

// Throws (above) unless e is cudaSuccess; `where` defaults to the caller's line.
inline void check_cuda(cudaError_t e, std::string_view what,
                       std::source_location where = std::source_location::current()) {
  if (e != cudaSuccess) [[unlikely]] {
    throw_cuda_error(e, what, where);
  }
}

// Lets Kernel use `bytes` of dynamic shared memory (cudaFuncAttributeMaxDynamicSharedMemorySize)
// on the current device. The attribute is per device: it is set once per device id below 64 (a
// bit each) and on every call for others. `who` prefixes the messages of a failed call.
template <auto Kernel>
void opt_in_smem(int bytes, std::string_view who,
                 std::source_location where = std::source_location::current()) {
  static std::atomic<std::uint64_t> done{0};
  int dev = 0;
  if (const cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) [[unlikely]] {
    throw_cuda_error(e, std::string(who) + ": cudaGetDevice", where);
  }
  const std::uint64_t bit = dev >= 0 && dev < 64 ? std::uint64_t{1} << dev : 0;
  if (bit == 0 || (done.load(std::memory_order_acquire) & bit) == 0) {
    const cudaError_t e =
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    if (e != cudaSuccess) [[unlikely]] {
      throw_cuda_error(e, std::string(who) + ": cudaFuncSetAttribute(MaxDynamicSharedMemorySize)",
                       where);
    }
    done.fetch_or(bit, std::memory_order_release);
  }
}

} // namespace kattn::cuda_kernels
