#include "host_problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "element_convert.hpp"

namespace codelab {

std::string Shape::describe() const {
  std::string s = "B=" + std::to_string(B) + " T=" + std::to_string(T);
  if (S != T)
    s += " S=" + std::to_string(S);
  s += " N=" + std::to_string(N) + " K=" + std::to_string(K) + " H=" + std::to_string(H) + " " +
       std::string(kattn::to_string(dtype));
  return causal ? s + " causal" : s;
}

HostTensor::HostTensor(const std::string& label, kattn::DType dtype,
                       std::initializer_list<std::int64_t> extents) {
  std::int64_t n = 1;
  for (std::int64_t e : extents)
    n *= e;
  // Kokkos allocations are at least 64-byte aligned (cuDNN wants 16 for its device copies).
  bytes_ = Kokkos::View<unsigned char*, Kokkos::HostSpace>(
      Kokkos::view_alloc(label, Kokkos::WithoutInitializing),
      static_cast<std::size_t>(n) * kattn::size_bytes(dtype));
  tensor_ = kattn::Tensor::contiguous(bytes_.data(), dtype, extents);
}

void HostTensor::fill_normal(unsigned seed) {
  // Chunks with their own generator, filled in parallel: one serial stream took ~2 s per
  // tensor at --full's 16k-token shapes. Seeded by (seed, chunk), so the values do not depend
  // on the thread count.
  constexpr long chunk = 1 << 16;
  const long n = long(tensor_.numel());
  void* data = tensor_.data;
  const kattn::DType dtype = tensor_.dtype;
  Kokkos::parallel_for(
      "codelab::fill_normal",
      Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, (n + chunk - 1) / chunk),
      [=](long c) {
        std::seed_seq seq{seed, static_cast<unsigned>(c), static_cast<unsigned>(c >> 32)};
        std::mt19937 rng(seq);
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (long i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i)
          store_element(data, dtype, i, dist(rng));
      });
  Kokkos::fence("codelab::fill_normal");
}

void HostTensor::fill(float x) {
  const long n = long(tensor_.numel());
  for (long i = 0; i < n; ++i)
    store_element(tensor_.data, tensor_.dtype, i, x);
}

std::vector<float> HostTensor::to_float() const {
  std::vector<float> out(static_cast<std::size_t>(tensor_.numel()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = load_element(tensor_.data, tensor_.dtype, long(i));
  return out;
}

HostProblem::HostProblem(const Shape& s, bool with_backward)
    : shape(s), q("q", s.dtype, {s.B, s.T, s.N, s.H}), k("k", s.dtype, {s.B, s.S, s.K, s.H}),
      v("v", s.dtype, {s.B, s.S, s.K, s.H}), out("out", s.dtype, {s.B, s.T, s.N, s.H}) {
  q.fill_normal(1);
  k.fill_normal(2);
  v.fill_normal(3);
  out.fill(std::numeric_limits<float>::quiet_NaN());
  if (with_backward) {
    lse = HostTensor("lse", kattn::DType::f32, {s.B, s.N, s.T});
    dout = HostTensor("dout", s.dtype, {s.B, s.T, s.N, s.H});
    dq = HostTensor("dq", s.dtype, {s.B, s.T, s.N, s.H});
    dk = HostTensor("dk", s.dtype, {s.B, s.S, s.K, s.H});
    dv = HostTensor("dv", s.dtype, {s.B, s.S, s.K, s.H});
    dout.fill_normal(4);
  }
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, const Shape& s,
                    int row_begin, int row_end) {
  if (row_end < 0)
    row_end = s.T;
  const std::size_t row = std::size_t(s.N) * std::size_t(s.H);
  double m = 0;
  for (int b0 = 0; b0 < s.B; ++b0)
    for (int i = row_begin; i < row_end; ++i) {
      const std::size_t base = (std::size_t(b0) * std::size_t(s.T) + std::size_t(i)) * row;
      for (std::size_t c = 0; c < row; ++c) {
        const double d = std::abs(double(a[base + c]) - double(b[base + c]));
        if (std::isnan(d))
          return std::numeric_limits<double>::infinity();
        m = std::max(m, d);
      }
    }
  return m;
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float x : a)
    m = std::max(m, double(std::abs(x)));
  return m;
}

} // namespace codelab
