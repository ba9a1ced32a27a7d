// doctest main of the GPU test binary. Without a CUDA GPU it runs nothing, says so on one
// visible line and exits 77 (CTest's SKIP_RETURN_CODE: the test shows as "Skipped").
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>

namespace {

// How many test cases this binary has (doctest --count, captured).
std::string count_test_cases() {
  const char* args[] = {"kokkosattn_gpu_tests", "--count", "--no-colors"};
  doctest::Context c(3, args);
  std::ostringstream os;
  c.setCout(&os);
  c.run();
  std::smatch m;
  const std::string s = os.str();
  return std::regex_search(s, m, std::regex("filters: ([0-9]+)")) ? m[1].str() : "?";
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("SKIPPED: no CUDA GPU present (%s tests not run; cudaGetDeviceCount: %s)\n",
                count_test_cases().c_str(), e == cudaSuccess ? "0 devices" : cudaGetErrorName(e));
    return 77;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    std::printf("GPU 0: %s (sm_%d%d), %d device(s)\n", prop.name, prop.major, prop.minor, devices);
  // The registry also holds the Kokkos backends, whose support checks may ask Kokkos.
  Kokkos::ScopeGuard kokkos(argc, argv);
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
