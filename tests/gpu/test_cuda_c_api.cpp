// The C API (kokkosattn.h) on CUDA memory: what the C layer adds is marshalling (pointers,
// extents, strides, the caller's stream, plans), so its results must be bitwise those of the C++
// entry point on the same memory and backend; the kernels themselves are tested elsewhere.
// Also: a GPU kernel backend is chosen, LayoutLeft-strided pointers reach it through layout
// copies, a plan on a user stream repeats the bits, and a failed call writes nothing.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
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

// FP8 factors set by role (KATTN_FP8_*) reach the cudnn backend as the C++ entry point's
// extras.fp8 do: the same codes, factors and stream give bitwise the same out and amax values.
// Hopper's cuDNN only (elsewhere the problem is refused with cudnn's reason, which is shown).
TEST_CASE("c_api/cuda: FP8 factors by role, bitwise the C++ entry point's") {
  REQUIRE(kattn_initialize() == KATTN_OK);
  constexpr std::int64_t Tf = 128; // cuDNN's FP8 forward: T, S multiples of 64
  constexpr std::int64_t n8 = B * Tf * N * H;
  const std::int64_t e[4] = {B, Tf, N, H}, one[1] = {1};
  std::vector<std::uint8_t> codes(3 * n8);
  unsigned seed = 7;
  for (auto& c : codes) { // e4m3 codes of magnitude < 4 (exponent field <= 8), either sign
    seed = seed * 1664525u + 1013904223u;
    c = static_cast<std::uint8_t>(((seed >> 24) & 0x80u) | ((seed >> 9) % 0x48u));
  }
  DeviceBuffer q(n8), k(n8), v(n8), o(n8), o_cpp(n8), factors(8 * sizeof(float));
  KATTN_CUDA_REQUIRE(cudaMemcpy(q.p, codes.data(), n8, cudaMemcpyHostToDevice));
  KATTN_CUDA_REQUIRE(cudaMemcpy(k.p, codes.data() + n8, n8, cudaMemcpyHostToDevice));
  KATTN_CUDA_REQUIRE(cudaMemcpy(v.p, codes.data() + 2 * n8, n8, cudaMemcpyHostToDevice));
  // descale q, k, v; descale_s, scale_s, scale_o; then the amax outputs (s, o) of each path.
  const float host_factors[6] = {0.5f, 0.25f, 1.0f, 1.0f / 64, 64.0f, 8.0f};
  KATTN_CUDA_REQUIRE(
      cudaMemcpy(factors.p, host_factors, sizeof host_factors, cudaMemcpyHostToDevice));
  float* f = static_cast<float*>(factors.p);

  kattn_problem_t p = nullptr;
  REQUIRE(kattn_problem_create(&p) == KATTN_OK);
  for (const auto& [role, data] : {std::pair{KATTN_Q, q.p}, std::pair{KATTN_K, k.p},
                                   std::pair{KATTN_V, v.p}, std::pair{KATTN_OUT, o.p}})
    REQUIRE(kattn_problem_set_tensor(p, role, data, KATTN_F8_E4M3, 4, e, nullptr,
                                     KATTN_MEMORY_CUDA) == KATTN_OK);
  const kattn_role_t roles[8] = {KATTN_FP8_DESCALE_Q, KATTN_FP8_DESCALE_K, KATTN_FP8_DESCALE_V,
                                 KATTN_FP8_DESCALE_S, KATTN_FP8_SCALE_S,   KATTN_FP8_SCALE_O,
                                 KATTN_FP8_AMAX_S,    KATTN_FP8_AMAX_O};
  for (int i = 0; i < 8; ++i)
    REQUIRE(kattn_problem_set_tensor(p, roles[i], f + i, KATTN_F32, 1, one, nullptr,
                                     KATTN_MEMORY_CUDA) == KATTN_OK);
  REQUIRE(kattn_problem_set_backend(p, KATTN_BACKEND_CUDNN) == KATTN_OK);
  kattn_backend_t chosen = KATTN_BACKEND_AUTO;
  if (kattn_selected_backend(p, &chosen) != KATTN_OK) {
    MESSAGE("FP8 through the C API not run: " << kattn_last_error());
    REQUIRE(kattn_problem_destroy(p) == KATTN_OK);
    return;
  }
  KATTN_CUDA_REQUIRE(cudaMemset(o.p, 0x7f, n8)); // poison: e4m3 NaN codes
  KATTN_CUDA_REQUIRE(cudaMemset(f + 6, 0, 2 * sizeof(float)));
  REQUIRE(kattn_forward(p, nullptr) == KATTN_OK);
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  std::vector<std::uint8_t> got(n8), want(n8);
  float amax_c[2], amax_cpp[2];
  KATTN_CUDA_REQUIRE(cudaMemcpy(got.data(), o.p, n8, cudaMemcpyDeviceToHost));
  KATTN_CUDA_REQUIRE(cudaMemcpy(amax_c, f + 6, sizeof amax_c, cudaMemcpyDeviceToHost));
  REQUIRE(kattn_problem_destroy(p) == KATTN_OK);

  kattn::ForwardProblem cpp;
  const auto tensor = [&](void* d) {
    return kattn::Tensor::contiguous(d, kattn::DType::f8_e4m3, {B, Tf, N, H},
                                     kattn::MemorySpace::cuda_device);
  };
  const auto scalar = [](float* d) {
    return kattn::Tensor::contiguous(d, kattn::DType::f32, {1}, kattn::MemorySpace::cuda_device);
  };
  cpp.q = tensor(q.p), cpp.k = tensor(k.p), cpp.v = tensor(v.p), cpp.out = tensor(o_cpp.p);
  kattn::Fp8Scales& s = cpp.extras.fp8;
  s.descale_q = scalar(f), s.descale_k = scalar(f + 1), s.descale_v = scalar(f + 2);
  s.descale_s = scalar(f + 3), s.scale_s = scalar(f + 4), s.scale_o = scalar(f + 5);
  s.amax_s = scalar(f + 6), s.amax_o = scalar(f + 7);
  cpp.options.backend = kattn::Backend::cudnn;
  KATTN_CUDA_REQUIRE(cudaMemset(o_cpp.p, 0x7f, n8));
  KATTN_CUDA_REQUIRE(cudaMemset(f + 6, 0, 2 * sizeof(float)));
#ifdef KOKKOS_ENABLE_CUDA
  KokkosAttn::sdpa(Kokkos::Cuda(), cpp);
#else
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  kattn::run_forward(kattn::default_registry(), cpp, x);
#endif
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  KATTN_CUDA_REQUIRE(cudaMemcpy(want.data(), o_cpp.p, n8, cudaMemcpyDeviceToHost));
  KATTN_CUDA_REQUIRE(cudaMemcpy(amax_cpp, f + 6, sizeof amax_cpp, cudaMemcpyDeviceToHost));
  CHECK(got == want);
  CHECK(std::memcmp(amax_c, amax_cpp, sizeof amax_c) == 0);
  CHECK(amax_c[1] > 0.f); // an output was measured, not left at the poison's 0
  CHECK(std::count(got.begin(), got.end(), std::uint8_t{0x7f}) == 0);
}

// The backward through C on CUDA memory, for each GPU backend that serves it here (cuda, cudnn):
// dq, dk, dv bitwise the C++ entry point's on the same memory, backend and stream, from a C
// forward's out and LSE; a backward plan on a stream repeats the bits.
TEST_CASE("c_api/cuda: the backward through C, bitwise the C++ entry point's (cuda, cudnn)") {
  REQUIRE(kattn_initialize() == KATTN_OK);
  const std::int64_t e[4] = {B, T, N, H}, le[3] = {B, N, T};
  DeviceBuffer q(elems * 2), k(elems * 2), v(elems * 2), o(elems * 2), dout(elems * 2),
      lse(B * N * T * 4), dq(elems * 2), dk(elems * 2), dv(elems * 2), dq_cpp(elems * 2),
      dk_cpp(elems * 2), dv_cpp(elems * 2);
  upload(q.p, random_bf16(31));
  upload(k.p, random_bf16(32));
  upload(v.p, random_bf16(33));
  upload(dout.p, random_bf16(34));
  cudaStream_t stream = nullptr;
  KATTN_CUDA_REQUIRE(cudaStreamCreate(&stream));
  for (const kattn_backend_t backend : {KATTN_BACKEND_CUDA, KATTN_BACKEND_CUDNN}) {
    CAPTURE(static_cast<int>(backend));
    kattn_problem_t p = c_problem(q.p, k.p, v.p, o.p, nullptr);
    for (const auto& [role, data] : {std::pair{KATTN_DOUT, dout.p}, std::pair{KATTN_DQ, dq.p},
                                     std::pair{KATTN_DK, dk.p}, std::pair{KATTN_DV, dv.p}})
      REQUIRE(kattn_problem_set_tensor(p, role, data, KATTN_BF16, 4, e, nullptr,
                                       KATTN_MEMORY_CUDA) == KATTN_OK);
    REQUIRE(kattn_problem_set_tensor(p, KATTN_LSE, lse.p, KATTN_F32, 3, le, nullptr,
                                     KATTN_MEMORY_CUDA) == KATTN_OK);
    REQUIRE(kattn_problem_set_backend(p, backend) == KATTN_OK);
    if (kattn_forward(p, stream) != KATTN_OK) { // out and LSE from the same backend
      MESSAGE("backend " << static_cast<int>(backend) << " not run: " << kattn_last_error());
      REQUIRE(kattn_problem_destroy(p) == KATTN_OK);
      continue;
    }
    fill_poison(dq.p), fill_poison(dk.p), fill_poison(dv.p);
    REQUIRE(kattn_backward(p, stream) == KATTN_OK);
    REQUIRE(kattn_synchronize(KATTN_MEMORY_CUDA, stream) == KATTN_OK);
    const auto got_q = download(dq.p), got_k = download(dk.p), got_v = download(dv.p);

    kattn::BackwardProblem cpp;
    const auto tensor = [](void* d) {
      return kattn::Tensor::contiguous(d, kattn::DType::bf16, {B, T, N, H},
                                       kattn::MemorySpace::cuda_device);
    };
    cpp.forward.q = tensor(q.p), cpp.forward.k = tensor(k.p), cpp.forward.v = tensor(v.p);
    cpp.forward.out = tensor(o.p);
    cpp.forward.extras.lse = kattn::Tensor::contiguous(lse.p, kattn::DType::f32, {B, N, T},
                                                       kattn::MemorySpace::cuda_device);
    cpp.forward.options.causal = true;
    cpp.forward.options.backend =
        backend == KATTN_BACKEND_CUDA ? kattn::Backend::cuda : kattn::Backend::cudnn;
    cpp.dout = tensor(dout.p), cpp.dq = tensor(dq_cpp.p), cpp.dk = tensor(dk_cpp.p);
    cpp.dv = tensor(dv_cpp.p);
    fill_poison(dq_cpp.p), fill_poison(dk_cpp.p), fill_poison(dv_cpp.p);
#ifdef KOKKOS_ENABLE_CUDA
    KokkosAttn::sdpa_backward(Kokkos::Cuda(stream), cpp);
#else
    kattn::ExecContext x;
    x.device = kattn::Device::cuda;
    x.stream = stream;
    kattn::run_backward(kattn::default_registry(), cpp, x);
#endif
    KATTN_CUDA_REQUIRE(cudaStreamSynchronize(stream));
    // dk and dv bitwise. dq may be summed over key blocks in a varying order (cuda's sm90
    // backward adds it with TMA reductions): the fp32 sums then differ by reordering alone
    // (~1e-6 of the largest dq), so after rounding to bf16 each element is the same or a
    // neighbour: within one bf16 ulp of the larger plus 1e-6 max|dq|.
    CHECK(got_k == download(dk_cpp.p));
    CHECK(got_v == download(dv_cpp.p));
    const auto want_q = download(dq_cpp.p);
    float largest = 0.f;
    for (const std::uint16_t w : want_q)
      largest = std::max(largest, std::fabs(kattn::bf16_to_float(w)));
    std::size_t differ = 0, outside = 0;
    for (std::size_t i = 0; i < got_q.size(); ++i) {
      const float a = kattn::bf16_to_float(got_q[i]), b = kattn::bf16_to_float(want_q[i]);
      differ += got_q[i] != want_q[i];
      const float ulp = std::ldexp(1.f, std::ilogb(std::max(std::fabs(a), std::fabs(b))) - 7);
      outside += !(std::fabs(a - b) <= ulp + 1e-6f * largest);
    }
    INFO("dq: " << differ << " elements differ, " << outside << " beyond the reordering bound");
    CHECK(largest > 0.f);
    CHECK(outside == 0);

    // A backward plan on the stream: dk, dv bitwise again.
    kattn_plan_t plan = nullptr;
    REQUIRE(kattn_plan_create_backward(&plan, p, stream) == KATTN_OK);
    fill_poison(dq.p), fill_poison(dk.p), fill_poison(dv.p);
    REQUIRE(kattn_plan_execute_backward(plan, q.p, k.p, v.p, o.p, dout.p, dq.p, dk.p, dv.p) ==
            KATTN_OK);
    REQUIRE(kattn_synchronize(KATTN_MEMORY_CUDA, stream) == KATTN_OK);
    CHECK(download(dk.p) == got_k);
    CHECK(download(dv.p) == got_v);
    REQUIRE(kattn_plan_destroy(plan) == KATTN_OK);
    REQUIRE(kattn_problem_destroy(p) == KATTN_OK);
  }
  KATTN_CUDA_REQUIRE(cudaStreamDestroy(stream));
}
