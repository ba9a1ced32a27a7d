// A kernel's device workspace for one call: allocated from the device's stream-ordered pool and
// released in stream order however the call ends (the kernels that use it are enqueued on the
// same stream first). Host code only.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "common/cuda_check.hpp"

namespace kattn::cuda_kernels {

struct StreamScratch {
  void* ptr = nullptr;
  cudaStream_t stream = nullptr;
  // `who` names the caller in the error ("cuda backward": "cuda backward: cudaMallocAsync...").
  StreamScratch(std::size_t bytes, cudaStream_t s, const char* who) : stream(s) {
    if (bytes > 0)
      check_cuda(cudaMallocAsync(&ptr, bytes, stream), std::string(who) +
                                                           ": cudaMallocAsync(workspace, " +
                                                           std::to_string(bytes) + " bytes)");
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  ~StreamScratch() {
    if (ptr != nullptr)
      (void)cudaFreeAsync(ptr, stream); // nothing to report from a destructor
  }
};

} // namespace kattn::cuda_kernels
