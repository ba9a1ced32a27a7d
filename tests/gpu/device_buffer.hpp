// Test helper: device copies of HostTensor-backed buffers, with every CUDA call checked.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include <doctest/doctest.h>

#include "common/host_tensor.hpp"

namespace kattn::test {

#define KATTN_CUDA_REQUIRE(call)                                                                   \
  do {                                                                                             \
    const cudaError_t kattn_e_ = (call);                                                           \
    INFO(#call << ": " << cudaGetErrorString(kattn_e_));                                           \
    REQUIRE(kattn_e_ == cudaSuccess);                                                              \
  } while (0)

// Owns a cudaMalloc'ed copy of a host tensor's storage; view() is the host view (same extents
// and strides) re-pointed at device memory.
class DeviceCopy {
public:
  DeviceCopy() = default;
  explicit DeviceCopy(const Tensor& host_view) : host_(host_view) {
    if (!host_.defined())
      return;
    bytes_ = static_cast<std::size_t>(storage_elements(host_)) * size_bytes(host_.dtype);
    KATTN_CUDA_REQUIRE(cudaMalloc(&ptr_, bytes_));
    upload();
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() {
    if (ptr_)
      (void)cudaFree(ptr_);
  }

  // Host -> device (poisoned host outputs give NaN-poisoned device outputs).
  void upload() {
    if (ptr_)
      KATTN_CUDA_REQUIRE(cudaMemcpy(ptr_, host_.data, bytes_, cudaMemcpyHostToDevice));
  }
  // Device -> host, into the host tensor's own storage.
  void download() {
    if (ptr_)
      KATTN_CUDA_REQUIRE(cudaMemcpy(host_.data, ptr_, bytes_, cudaMemcpyDeviceToHost));
  }
  Tensor view() const {
    Tensor t = host_;
    if (!t.defined())
      return t;
    t.data = ptr_;
    t.space = MemorySpace::cuda_device;
    return t;
  }

private:
  // Elements spanned by the (non-negative) strides: the storage behind a permuted view.
  static std::int64_t storage_elements(const Tensor& t) {
    std::int64_t last = 0;
    for (int d = 0; d < t.rank; ++d)
      last += (t.extent[static_cast<std::size_t>(d)] - 1) * t.stride[static_cast<std::size_t>(d)];
    return last + 1;
  }

  Tensor host_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

} // namespace kattn::test
