// device.hpp on the CUDA runtime. Every call is checked; a failure throws
// kattn::BackendFailure naming the call.
#include <cuda_runtime_api.h>

#include <kokkosattn/errors.hpp>

#include <string>

#include "device.hpp"

namespace codelab::device {
namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw kattn::BackendFailure(std::string("codelab: ") + call + ": " + cudaGetErrorName(e) +
                                " (" + cudaGetErrorString(e) + ")");
}

std::string version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

cudaStream_t the_stream() {
  static cudaStream_t s = [] {
    cudaStream_t made = nullptr;
    check(cudaStreamCreateWithFlags(&made, cudaStreamNonBlocking), "cudaStreamCreate");
    return made; // lives until the process exits, like the CUDA context
  }();
  return s;
}

} // namespace

bool built() {
  return true;
}

bool available(std::string* why_not) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why_not)
      *why_not = e != cudaSuccess ? std::string("no CUDA GPU (") + cudaGetErrorName(e) + ")"
                                  : "no CUDA GPU on this machine";
    return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> describe() {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  return {{"gpu", std::string(prop.name)},
          {"gpu_cc", "sm_" + std::to_string(prop.major) + std::to_string(prop.minor)},
          {"gpu_memory_bytes", std::to_string(prop.totalGlobalMem)},
          {"gpu_sms", std::to_string(prop.multiProcessorCount)},
          {"cuda_driver", version(driver)},
          {"cuda_runtime", version(runtime)}};
}

void* stream() {
  return the_stream();
}

void synchronize() {
  check(cudaStreamSynchronize(the_stream()), "cudaStreamSynchronize");
}

std::size_t used_bytes() {
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return total - free;
}

double time_ms(const std::function<void()>& fn) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  float ms = 0;
  try {
    check(cudaEventRecord(start, the_stream()), "cudaEventRecord");
    fn();
    check(cudaEventRecord(stop, the_stream()), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  } catch (...) {
    (void)cudaEventDestroy(start);
    (void)cudaEventDestroy(stop);
    throw;
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return double(ms);
}

Mirror::Mirror(const kattn::Tensor& host) : host_(host) {
  bytes_ = std::size_t(host.numel()) * kattn::size_bytes(host.dtype);
  check(cudaMalloc(&ptr_, bytes_ > 16 ? bytes_ : 16), "cudaMalloc");
  upload();
}

Mirror::~Mirror() {
  if (ptr_)
    (void)cudaFree(ptr_); // nothing useful to do with an error here
}

// On the backends' stream, then waited for: ordered after the work that wrote the data.
void Mirror::upload() {
  check(cudaMemcpyAsync(ptr_, host_.data, bytes_, cudaMemcpyHostToDevice, the_stream()),
        "cudaMemcpyAsync H2D");
  synchronize();
}

void Mirror::download() {
  check(cudaMemcpyAsync(host_.data, ptr_, bytes_, cudaMemcpyDeviceToHost, the_stream()),
        "cudaMemcpyAsync D2H");
  synchronize();
}

kattn::Tensor Mirror::view() const {
  kattn::Tensor t = host_;
  t.data = ptr_;
  t.space = kattn::MemorySpace::cuda_device;
  return t;
}

} // namespace codelab::device
