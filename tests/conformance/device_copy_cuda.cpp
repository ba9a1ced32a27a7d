#include "conformance/device_copy.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "common/cuda_check.hpp"

namespace kattn::conformance {
namespace {

using cuda_kernels::check_cuda;

// Elements spanned by dims [from, rank) of a view with non-negative strides.
std::int64_t span(const Tensor& t, int from) {
  std::int64_t last = 0;
  for (int d = from; d < t.rank; ++d) {
    const auto u = static_cast<std::size_t>(d);
    last += (t.extent[u] - 1) * t.stride[u];
  }
  return last + 1;
}

} // namespace

bool cuda_device_present() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

std::string cuda_device_name() {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ")";
}

void cuda_synchronize() {
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

DeviceCopy::DeviceCopy(const Tensor& host_view) : host_(host_view) {
  if (!host_.defined())
    return;
  // An empty view still gets a (tiny) buffer so that its pointer is a device pointer.
  const std::int64_t elems = host_.numel() > 0 ? span(host_, 0) : 1;
  bytes_ = static_cast<std::size_t>(elems) * size_bytes(host_.dtype);
  check_cuda(cudaMalloc(&ptr_, std::max<std::size_t>(bytes_, 16)), "cudaMalloc");
  upload();
}

DeviceCopy::~DeviceCopy() {
  if (ptr_)
    (void)cudaFree(ptr_); // nothing useful to do with an error in a destructor
}

void DeviceCopy::copy(bool to_device) {
  if (!ptr_ || host_.numel() == 0)
    return;
  const std::size_t es = size_bytes(host_.dtype);
  auto* dev = static_cast<char*>(ptr_);
  auto* host = static_cast<char*>(host_.data);
  const auto kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const std::int64_t inner = host_.rank > 1 ? span(host_, 1) : 0;
  if (host_.rank > 1 && host_.extent[0] > 1 && host_.stride[0] > inner) {
    // Gaps between batch entries (sparse 64-bit index cases): copy only what is addressed.
    const auto n = static_cast<std::size_t>(inner) * es;
    for (std::int64_t i = 0; i < host_.extent[0]; ++i) {
      const auto off = static_cast<std::size_t>(i * host_.stride[0]) * es;
      check_cuda(to_device ? cudaMemcpy(dev + off, host + off, n, kind)
                           : cudaMemcpy(host + off, dev + off, n, kind),
                 "cudaMemcpy");
    }
    return;
  }
  check_cuda(to_device ? cudaMemcpy(dev, host, bytes_, kind) : cudaMemcpy(host, dev, bytes_, kind),
             "cudaMemcpy");
}

void DeviceCopy::upload() {
  copy(true);
}

void DeviceCopy::download() {
  copy(false);
}

Tensor DeviceCopy::view() const {
  Tensor t = host_;
  if (!t.defined())
    return t;
  t.data = ptr_;
  t.space = MemorySpace::cuda_device;
  return t;
}

} // namespace kattn::conformance
