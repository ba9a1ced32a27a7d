// Device copies of a case's tensors for GPU backends (cudnn, cuda), which take CUDA device memory.
// Implemented in device_copy_cuda.cpp, built only with CUDA (KOKKOSATTN_CONFORMANCE_CUDA); every
// CUDA runtime call is checked and a failure throws std::runtime_error naming the call.
#pragma once

#include <cstddef>
#include <string>

#include <Kokkos_Core.hpp>

#include "kokkosattn/backend.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::conformance {

// Backends whose problems live in CUDA device memory. Against a Kokkos with CUDA the Kokkos
// backends (naive, portable) run there too, on Kokkos::Cuda through the front end (runner.cpp).
inline bool needs_cuda_device(Backend b) {
#ifdef KOKKOS_ENABLE_CUDA
  return b != Backend::reference;
#else
  return b == Backend::cudnn || b == Backend::cuda;
#endif
}

#ifdef KOKKOSATTN_CONFORMANCE_CUDA

// A CUDA runtime that answers and at least one device.
bool cuda_device_present();

// "NVIDIA H200 (sm_90)" for device 0.
std::string cuda_device_name();

// Waits for the device; throws on an asynchronous error.
void cuda_synchronize();

// Owns a cudaMalloc'ed buffer with the host view's extents and strides (element strides, so the
// same layout); view() is the host view re-pointed at it. Only the bytes the view addresses are
// copied, batch entry by batch entry when the batch stride leaves gaps (64-bit index cases).
class DeviceCopy {
public:
  explicit DeviceCopy(const Tensor& host_view);
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy();

  void upload();   // host -> device
  void download(); // device -> host, into the host view's storage
  Tensor view() const;

private:
  void copy(bool to_device);
  Tensor host_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

#endif

} // namespace kattn::conformance
