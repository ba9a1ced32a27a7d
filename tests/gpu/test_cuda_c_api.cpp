// The C API (kokkosattn.h) on CUDA memory: what the C layer adds is marshalling (pointers,
// extents, strides, the caller's stream, plans), so its results must be bitwise those of the C++
// entry point on the same memory and backend; the kernels themselves are tested elsewhere.
// Also: a GPU kernel backend is chosen, LayoutLeft-strided pointers reach it through layout
// copies, a plan on a user stream repeats the bits, and a failed call writes nothing.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <doctest/doctest.h>

#include "KokkosAttn.hpp"
#include "gpu/device_buffer.hpp"
#include "kokkosattn.h"
#include "kokkosattn/half.hpp"
#include "kokkosattn/registry.hpp"

namespace {

constexpr std::int64_t B = 2, T = 200, N = 4, H = 64, elems = B * T * N * H;
constexpr std::uint16_t poison = 0x7fc1; // a bf16 NaN no kernel writes

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { KATTN_CUDA_REQUIRE(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { (void)cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::vector<std::uint16_t> random_bf16(unsigned seed) {
  std::vector<std::uint16_t> x(elems);
  for (auto& e : x) {
    seed = seed * 1664525u + 1013904223u;
    e = kattn::float_to_bf16(float((seed >> 8) / 16777216.0 * 2.0 - 1.0));
  }
  return x;
}

void upload(void* dst, const std::vector<std::uint16_t>& x) {
  KATTN_CUDA_REQUIRE(cudaMemcpy(dst, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
}

std::vector<std::uint16_t> download(const void* src) {
  std::vector<std::uint16_t> x(elems);
  KATTN_CUDA_REQUIRE(cudaMemcpy(x.data(), src, x.size() * 2, cudaMemcpyDeviceToHost));
  return x;
}

void fill_poison(void* p) {
  upload(p, std::vector<std::uint16_t>(elems, poison));
}

kattn_problem_t c_problem(void* q, void* k, void* v, void* o, const std::int64_t* strides) {
  const std::int64_t e[4] = {B, T, N, H};
  kattn_problem_t p = nullptr;
  REQUIRE(kattn_problem_create(&p) == KATTN_OK);
  for (const auto& [role, data] : {std::pair{KATTN_Q, q}, std::pair{KATTN_K, k},
                                   std::pair{KATTN_V, v}, std::pair{KATTN_OUT, o}})
    REQUIRE(kattn_problem_set_tensor(p, role, data, KATTN_BF16, 4, e, strides, KATTN_MEMORY_CUDA) ==
            KATTN_OK);
  REQUIRE(kattn_problem_set_causal(p, 1) == KATTN_OK);
  return p;
}

} // namespace

TEST_CASE("c_api/cuda: bitwise the C++ entry point's result, a GPU kernel, plans on a stream") {
  REQUIRE(kattn_initialize() == KATTN_OK); // Kokkos is up already: a no-op
  DeviceBuffer q(elems * 2), k(elems * 2), v(elems * 2), o(elems * 2), o_cpp(elems * 2);
  upload(q.p, random_bf16(11));
  upload(k.p, random_bf16(12));
  upload(v.p, random_bf16(13));

  // The C++ entry point on the same memory (the default stream), auto backend.
  kattn::ForwardProblem cpp;
  const auto tensor = [](void* d) {
    return kattn::Tensor::contiguous(d, kattn::DType::bf16, {B, T, N, H},
                                     kattn::MemorySpace::cuda_device);
  };
  cpp.q = tensor(q.p), cpp.k = tensor(k.p), cpp.v = tensor(v.p), cpp.out = tensor(o_cpp.p);
  cpp.options.causal = true;
  fill_poison(o_cpp.p);
#ifdef KOKKOS_ENABLE_CUDA
  KokkosAttn::sdpa(Kokkos::Cuda(), cpp);
#else // a host Kokkos: raw device pointers go to the GPU backends directly
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  kattn::run_forward(kattn::default_registry(), cpp, x);
#endif
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> want = download(o_cpp.p);

  kattn_problem_t p = c_problem(q.p, k.p, v.p, o.p, nullptr);
  kattn_backend_t chosen = KATTN_BACKEND_AUTO;
  REQUIRE(kattn_selected_backend(p, &chosen) == KATTN_OK);
  CHECK((chosen == KATTN_BACKEND_CUDA || chosen == KATTN_BACKEND_CUDNN));
  fill_poison(o.p);
  REQUIRE(kattn_forward(p, nullptr) == KATTN_OK);
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  CHECK(download(o.p) == want);

  // A plan on a stream of the caller's.
  cudaStream_t stream = nullptr;
  KATTN_CUDA_REQUIRE(cudaStreamCreate(&stream));
  kattn_plan_t plan = nullptr;
  REQUIRE(kattn_plan_create(&plan, p, stream) == KATTN_OK);
  fill_poison(o.p);
  REQUIRE(kattn_plan_execute(plan, q.p, k.p, v.p, o.p) == KATTN_OK);
  KATTN_CUDA_REQUIRE(cudaStreamSynchronize(stream));
  CHECK(download(o.p) == want);
  REQUIRE(kattn_plan_destroy(plan) == KATTN_OK);

  // A forced backend that does not serve device memory: refused, nothing written.
  REQUIRE(kattn_problem_set_backend(p, KATTN_BACKEND_REFERENCE) == KATTN_OK);
  fill_poison(o.p);
  CHECK(kattn_forward(p, stream) == KATTN_ERROR_UNSUPPORTED);
  CHECK(std::strstr(kattn_last_error(), "reference") != nullptr);
  KATTN_CUDA_REQUIRE(cudaStreamSynchronize(stream));
  CHECK(download(o.p) == std::vector<std::uint16_t>(elems, poison));
  REQUIRE(kattn_problem_destroy(p) == KATTN_OK);
  KATTN_CUDA_REQUIRE(cudaStreamDestroy(stream));
}

#ifdef KOKKOS_ENABLE_CUDA // layout copies need Kokkos::Cuda
TEST_CASE("c_api/cuda: LayoutLeft strides reach the GPU kernel through layout copies") {
  // The same problem with every tensor stored LayoutLeft (b fastest, h slowest).
  const std::int64_t left[4] = {1, B, B * T, B * T * N};
  const auto to_left = [&](const std::vector<std::uint16_t>& right) {
    std::vector<std::uint16_t> x(elems);
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t n = 0; n < N; ++n)
          for (std::int64_t h = 0; h < H; ++h)
            x[b * left[0] + t * left[1] + n * left[2] + h * left[3]] =
                right[((b * T + t) * N + n) * H + h];
    return x;
  };
  const auto rq = random_bf16(21), rk = random_bf16(22), rv = random_bf16(23);
  DeviceBuffer q(elems * 2), k(elems * 2), v(elems * 2), o(elems * 2), ql(elems * 2), kl(elems * 2),
      vl(elems * 2), ol(elems * 2);
  upload(q.p, rq), upload(k.p, rk), upload(v.p, rv);
  upload(ql.p, to_left(rq)), upload(kl.p, to_left(rk)), upload(vl.p, to_left(rv));
  kattn_problem_t right = c_problem(q.p, k.p, v.p, o.p, nullptr);
  kattn_problem_t lp = c_problem(ql.p, kl.p, vl.p, ol.p, left);
  kattn_backend_t br = KATTN_BACKEND_AUTO, bl = KATTN_BACKEND_AUTO;
  REQUIRE(kattn_selected_backend(right, &br) == KATTN_OK);
  REQUIRE(kattn_selected_backend(lp, &bl) == KATTN_OK);
  CHECK(bl == br);
  std::vector<char> text(8192);
  REQUIRE(kattn_explain(lp, 0, text.data(), text.size(), nullptr) == KATTN_OK);
  INFO(text.data());
  CHECK(std::strstr(text.data(), "copies") != nullptr);
  fill_poison(o.p);
  fill_poison(ol.p);
  REQUIRE(kattn_forward(right, nullptr) == KATTN_OK);
  REQUIRE(kattn_forward(lp, nullptr) == KATTN_OK);
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  CHECK(download(ol.p) == to_left(download(o.p)));
  REQUIRE(kattn_problem_destroy(right) == KATTN_OK);
  REQUIRE(kattn_problem_destroy(lp) == KATTN_OK);
}
#endif
