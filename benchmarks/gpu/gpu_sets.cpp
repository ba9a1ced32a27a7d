#include "gpu_sets.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "common/cuda_check.hpp"
#include "kokkosattn/dtype.hpp"
#include "kokkosattn/half.hpp"

namespace kattn_bench {

using kattn::cuda_kernels::check_cuda;

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  check_cuda(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}

DeviceBuffer::~DeviceBuffer() {
  (void)cudaFree(ptr_);
}

namespace {

kattn::Tensor bthd(void* data, kattn::DType t, std::int64_t B, std::int64_t T, std::int64_t N,
                   std::int64_t H) {
  return kattn::Tensor::contiguous(data, t, {B, T, N, H}, kattn::MemorySpace::cuda_device);
}

// `count` values uniform in [-2, 2) from a xorshift generator (they only need to be ordinary
// numbers), stored as dtype t.
std::vector<unsigned char> random_values(kattn::DType t, std::size_t count, std::uint64_t seed) {
  const std::size_t es = kattn::size_bytes(t);
  std::vector<unsigned char> v(count * es);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < count; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const float f = static_cast<float>(x >> 40) / static_cast<float>(1ull << 24) * 4.0f - 2.0f;
    unsigned char* e = v.data() + i * es;
    if (t == kattn::DType::bf16) {
      const std::uint16_t b = kattn::float_to_bf16(f);
      std::memcpy(e, &b, 2);
    } else if (t == kattn::DType::f16) {
      const std::uint16_t b = kattn::float_to_f16(f);
      std::memcpy(e, &b, 2);
    } else if (t == kattn::DType::f32) {
      std::memcpy(e, &f, 4);
    } else {
      const double d = f;
      std::memcpy(e, &d, 8);
    }
  }
  return v;
}

// A device tensor of `count` values from its own seed: every tensor of every set differs, as
// the peers' inputs do (benchmarks/peers.py). (Until 2026-12-03 one block of 2^22 values was
// tiled into q, k, v and dout alike: q == k, and the same bytes in every set, which made our
// rows and the peers' differ in data as well as in code.)
std::unique_ptr<DeviceBuffer> random_tensor(kattn::DType t, std::size_t count, std::uint64_t seed) {
  const std::vector<unsigned char> host = random_values(t, count, seed);
  auto b = std::make_unique<DeviceBuffer>(host.size());
  check_cuda(cudaMemcpy(b->get(), host.data(), host.size(), cudaMemcpyHostToDevice),
             "cudaMemcpy(inputs)");
  return b;
}

} // namespace

kattn::ForwardProblem TensorSet::forward(const Shape& s, bool with_lse) const {
  kattn::ForwardProblem p;
  p.q = bthd(q->get(), s.dtype, s.B, s.T, s.N, s.H);
  p.k = bthd(k->get(), s.dtype, s.B, s.S, s.K, s.H);
  p.v = bthd(v->get(), s.dtype, s.B, s.S, s.K, s.H);
  p.out = bthd(out->get(), s.dtype, s.B, s.T, s.N, s.H);
  if (with_lse)
    p.extras.lse = kattn::Tensor::contiguous(lse->get(), kattn::DType::f32, {s.B, s.N, s.T},
                                             kattn::MemorySpace::cuda_device);
  p.options.causal = s.causal;
  p.options.deterministic = s.deterministic;
  p.options.allow_tf32 = s.tf32;
  return p;
}

kattn::BackwardProblem TensorSet::backward(const Shape& s) const {
  kattn::BackwardProblem b;
  b.forward = forward(s, true);
  b.dout = bthd(dout->get(), s.dtype, s.B, s.T, s.N, s.H);
  b.dq = bthd(dq->get(), s.dtype, s.B, s.T, s.N, s.H);
  b.dk = bthd(dk->get(), s.dtype, s.B, s.S, s.K, s.H);
  b.dv = bthd(dv->get(), s.dtype, s.B, s.S, s.K, s.H);
  return b;
}

SetRing::SetRing(const Shape& s, bool grads, std::size_t l2_bytes) {
  const auto nq = static_cast<std::size_t>(s.B * s.T * s.N * s.H);
  const auto nk = static_cast<std::size_t>(s.B * s.S * s.K * s.H);
  const auto nl = static_cast<std::size_t>(s.B * s.N * s.T);
  const std::size_t es = kattn::size_bytes(s.dtype);
  bytes_per_set_ = es * (2 * nq + 2 * nk) + 4 * nl;
  if (grads)
    bytes_per_set_ += es * (2 * nq + 2 * nk);
  const std::size_t want = (3 * l2_bytes + bytes_per_set_ - 1) / bytes_per_set_;
  const std::size_t count = std::clamp<std::size_t>(want, 2, 64);
  std::uint64_t seed = 7;
  for (std::size_t i = 0; i < count; ++i) {
    TensorSet t;
    t.q = random_tensor(s.dtype, nq, seed++);
    t.k = random_tensor(s.dtype, nk, seed++);
    t.v = random_tensor(s.dtype, nk, seed++);
    t.out = std::make_unique<DeviceBuffer>(nq * es);
    t.lse = std::make_unique<DeviceBuffer>(nl * 4);
    if (grads) {
      t.dout = random_tensor(s.dtype, nq, seed++);
      t.dq = std::make_unique<DeviceBuffer>(nq * es);
      t.dk = std::make_unique<DeviceBuffer>(nk * es);
      t.dv = std::make_unique<DeviceBuffer>(nk * es);
    }
    sets_.push_back(std::move(t));
  }
}

} // namespace kattn_bench
