// The CUDA device, for GPU backends (cudnn, cuda) that take raw device memory. device_cuda.cpp
// implements it in CUDA builds (host C++ calling the CUDA runtime, every call checked);
// device_none.cpp in the others, where available() is false and nothing else is called.
#pragma once

#include <kokkosattn/tensor.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace codelab::device {

// This build has CUDA support (device_cuda.cpp).
bool built();
// A CUDA runtime that answers and at least one device; why_not says why not.
bool available(std::string* why_not = nullptr);
// Facts for the results' env: GPU name, compute capability, memory, driver and runtime.
std::vector<std::pair<std::string, std::string>> describe();
// The stream every GPU backend call and every timing event uses.
void* stream();
void synchronize();
// Device memory in use (total - free, cudaMemGetInfo): the whole device, all processes.
std::size_t used_bytes();
// Milliseconds between CUDA events recorded on stream() before and after fn.
double time_ms(const std::function<void()>& fn);

// A cudaMalloc'ed copy of a contiguous host tensor.
class Mirror {
public:
  explicit Mirror(const kattn::Tensor& host);
  Mirror(const Mirror&) = delete;
  Mirror& operator=(const Mirror&) = delete;
  ~Mirror();
  void upload();
  void download();
  // The host tensor re-pointed at the device copy (MemorySpace::cuda_device).
  kattn::Tensor view() const;

private:
  kattn::Tensor host_;
  // Unused in device_none.cpp builds (clang says so under -Wunused-private-field).
  [[maybe_unused]] void* ptr_ = nullptr;
  [[maybe_unused]] std::size_t bytes_ = 0;
};

} // namespace codelab::device
