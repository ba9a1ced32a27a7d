// Test helper for the Kokkos front end on one execution space (tests/frontend/, written once and
// compiled per space by Test_<Space>_FrontEnd.cpp): tensors whose storage lives in the space's
// memory, viewed through the View type a user would pass (LayoutRight, LayoutLeft, or a
// LayoutStride over PyTorch's [B, heads, L, dim] storage), filled with random values rounded to
// the element type, checked against the f64 reference on the same rounded values.
//
// Tolerances (BRIEF.md's rule, max|out - ref| <= 2 * max|same_precision - ref| + atol, as in
// tests/gpu/test_cuda_case.hpp and backward_case.hpp, which argue them):
// * forward: 2 * max|round(ref) - ref| + 2u * max|v| + 1e-5 for f32 (fp32 accumulation over
//   S <= 256 keys of unit-variance terms: a few 1e-6) or 1e-12 for f64;
// * backward: 2 * max|round(ref) - ref| + 4u * max|grad| + 1e-5 (1e-10 for f64).
// u is the unit roundoff of the element type (2^-8 bf16, 2^-11 f16, 2^-24 f32, 2^-53 f64).
#pragma once

#include <Kokkos_Core.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "KokkosAttn.hpp"
#include "gpu/gpu_tolerance.hpp"
#include "kokkosattn/validate.hpp"
#include "reference/reference.hpp"

namespace kattn::test::frontend {

// Layout tags: the View type a test passes and the strides of its storage.
struct Right {
  using type = Kokkos::LayoutRight;
  static constexpr const char* name = "LayoutRight";
};
struct Left {
  using type = Kokkos::LayoutLeft;
  static constexpr const char* name = "LayoutLeft";
};
struct Bnth { // PyTorch's default: [B, heads, L, dim] storage seen as [B, L, heads, dim]
  using type = Kokkos::LayoutStride;
  static constexpr const char* name = "LayoutStride [B, N, T, H]";
};

template <class T>
constexpr double unit_roundoff() {
  if constexpr (std::is_same_v<T, double>)
    return 0x1p-53;
  else if constexpr (std::is_same_v<T, float>)
    return 0x1p-24;
  else if constexpr (std::is_same_v<T, Kokkos::Experimental::half_t>)
    return 0x1p-11;
  else
    return 0x1p-8;
}
template <class T>
constexpr double atol() {
  return std::is_same_v<T, double> ? 1e-12 : 1e-5;
}

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    return static_cast<double>(x);
  else
    return static_cast<double>(static_cast<float>(x));
}
template <class T>
T from_double(double x) {
  if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>)
    return static_cast<T>(x);
  else
    return static_cast<T>(static_cast<float>(x));
}
template <class T>
double rounded(double x) {
  return to_double(from_double<T>(x));
}

// Element strides of a [e0, e1, e2, e3] tensor stored per layout tag (rank 3: [e1, e2, e3]).
template <class L>
std::array<std::int64_t, 4> strides_of(const std::array<std::int64_t, 4>& e, int rank) {
  std::array<std::int64_t, 4> s{};
  const int first = 4 - rank;
  if constexpr (std::is_same_v<L, Left>) {
    std::int64_t m = 1;
    for (int d = first; d < 4; ++d)
      s[std::size_t(d)] = m, m *= e[std::size_t(d)];
  } else if constexpr (std::is_same_v<L, Bnth>) { // [B, N, L, H] storage of [B, L, N, H]
    s = {e[2] * e[1] * e[3], e[3], e[1] * e[3], 1};
  } else {
    std::int64_t m = 1;
    for (int d = 3; d >= first; --d)
      s[std::size_t(d)] = m, m *= e[std::size_t(d)];
  }
  return s;
}

// One tensor: flat storage in the space's memory and a host mirror, its logical values
// (row-major over the extents, what the reference reads) and the View a user would pass.
template <class T, class L, class Space>
struct Tensor4 {
  using Mem = typename Space::memory_space;
  std::array<std::int64_t, 4> e{1, 1, 1, 1}, s{};
  int rank = 4;
  Kokkos::View<T*, Mem> dev;
  // (The mirror type is spelt HostMirror before Kokkos 5 and host_mirror_type from 5 on.)
  decltype(Kokkos::create_mirror_view(std::declval<Kokkos::View<T*, Mem>>())) host;

  Tensor4() = default;
  Tensor4(const char* label, std::array<std::int64_t, 4> extents, int r = 4) : e(extents), rank(r) {
    s = strides_of<L>(e, rank);
    std::int64_t span = numel() > 0 ? 1 : 0; // (an empty problem's tensors have no storage)
    for (int d = 4 - rank; d < 4 && span > 0; ++d)
      span += (e[std::size_t(d)] - 1) * s[std::size_t(d)];
    dev = Kokkos::View<T*, Mem>(label, static_cast<std::size_t>(span));
    host = Kokkos::create_mirror_view(dev);
  }
  std::int64_t numel() const { return e[0] * e[1] * e[2] * e[3]; }
  std::int64_t offset(std::int64_t flat) const { // flat: row-major logical index
    std::int64_t off = 0;
    for (int d = 3; d >= 0; --d) {
      off += (flat % e[std::size_t(d)]) * s[std::size_t(d)];
      flat /= e[std::size_t(d)];
    }
    return off;
  }
  // Random N(0, 1) values, rounded to T; uploads and returns them in logical order.
  std::vector<double> randomize(std::uint64_t seed, double scale = 1.0) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> dist(0.0, scale);
    std::vector<double> v(static_cast<std::size_t>(numel()));
    for (std::int64_t i = 0; i < numel(); ++i) {
      v[std::size_t(i)] = rounded<T>(dist(rng));
      host(std::size_t(offset(i))) = from_double<T>(v[std::size_t(i)]);
    }
    Kokkos::deep_copy(dev, host);
    return v;
  }
  void poison() {
    Kokkos::deep_copy(host, from_double<T>(std::numeric_limits<double>::quiet_NaN()));
    Kokkos::deep_copy(dev, host);
  }
  std::vector<double> download() {
    Kokkos::deep_copy(host, dev);
    std::vector<double> v(static_cast<std::size_t>(numel()));
    for (std::int64_t i = 0; i < numel(); ++i)
      v[std::size_t(i)] = to_double(host(std::size_t(offset(i))));
    return v;
  }
  // The View a user would pass: a typed View of layout L over the storage.
  auto view() const {
    using V4 = Kokkos::View<T****, typename L::type, Mem>;
    T* p = dev.data();
    if constexpr (std::is_same_v<L, Bnth>)
      return V4(p, Kokkos::LayoutStride(e[0], s[0], e[1], s[1], e[2], s[2], e[3], s[3]));
    else
      return V4(p, e[0], e[1], e[2], e[3]);
  }
  // Rank 3 (packed varlen [tokens, heads, dim]; e[0] is 1), LayoutRight or LayoutLeft.
  auto view3() const {
    using V3 = Kokkos::View<T***, typename L::type, Mem>;
    return V3(dev.data(), e[1], e[2], e[3]);
  }
};

using kattn::test::max_abs; // the largest finite magnitude (gpu/gpu_tolerance.hpp)
// max |a - b|; NaN anywhere gives +inf (an unwritten, poisoned output).
inline double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]);
    if (std::isnan(d))
      return std::numeric_limits<double>::infinity();
    m = std::max(m, d);
  }
  return m;
}
// BRIEF.md's rule (the header comment): 2 * rounding baseline + k u * max|w| + atol.
template <class T>
double tolerance(const std::vector<double>& ref, double k, double w_max) {
  double base = 0;
  for (double x : ref)
    base = std::max(base, std::abs(rounded<T>(x) - x));
  return 2 * base + k * unit_roundoff<T>() * w_max + atol<T>();
}

// The f64 reference on logical (row-major) values. Shapes: q [B, T, N, H] etc. (rank 3 when
// `cu_q` is given: packed varlen, with host offsets).
struct RefInputs {
  std::array<std::int64_t, 4> q, k, v;
  int rank = 4;
  std::vector<std::int32_t> cu_q, cu_k;
};
inline Tensor f64_tensor(std::vector<double>& data, const std::array<std::int64_t, 4>& e,
                         int rank) {
  if (rank == 3)
    return Tensor::contiguous(data.data(), DType::f64, {e[1], e[2], e[3]});
  return Tensor::contiguous(data.data(), DType::f64, {e[0], e[1], e[2], e[3]});
}
inline void with_offsets(ForwardProblem& p, RefInputs& r) {
  if (r.rank != 3)
    return;
  p.extras.cu_seqlens_q =
      Tensor::contiguous(r.cu_q.data(), DType::i32, {std::int64_t(r.cu_q.size())});
  p.extras.cu_seqlens_k =
      Tensor::contiguous(r.cu_k.data(), DType::i32, {std::int64_t(r.cu_k.size())});
  p.extras.max_seqlen_q = p.extras.max_seqlen_k = 0;
}
inline std::vector<double> reference_forward(RefInputs r, std::vector<double> q,
                                             std::vector<double> k, std::vector<double> v,
                                             const Options& o, std::vector<double>* lse = nullptr) {
  std::array<std::int64_t, 4> oe = r.q;
  oe[3] = r.v[3];
  std::vector<double> out(static_cast<std::size_t>(oe[0] * oe[1] * oe[2] * oe[3]));
  ForwardProblem p;
  p.q = f64_tensor(q, r.q, r.rank);
  p.k = f64_tensor(k, r.k, r.rank);
  p.v = f64_tensor(v, r.v, r.rank);
  p.out = f64_tensor(out, oe, r.rank);
  p.options = o;
  p.options.backend = Backend::automatic;
  with_offsets(p, r);
  std::vector<float> lse32;
  if (lse) {
    lse32.resize(static_cast<std::size_t>(r.q[0] * r.q[2] * r.q[1]));
    p.extras.lse = Tensor::contiguous(lse32.data(), DType::f32, {r.q[0], r.q[2], r.q[1]});
  }
  reference::forward(p, validate(p));
  if (lse)
    lse->assign(lse32.begin(), lse32.end());
  return out;
}

// What the front end chose for a problem (a Plan of the same Views) and what it computed.
struct Outcome {
  Backend backend = Backend::automatic;
  bool copies = false;
  std::string copied; // the tensors copied ("out", "q, k, v, out")
  std::string kernel; // the kernel the backend named
  std::string explain;
  double err = 0, tol = 0, plan_err = 0;
};

inline void report(const Outcome& r, const std::string& what) {
  INFO(what << ": backend " << to_string(r.backend) << (r.copies ? " through layout copies" : "")
            << ", err " << r.err << " (plan " << r.plan_err << "), tol " << r.tol << "\n"
            << r.explain);
  CHECK(r.err <= r.tol);
  CHECK(r.plan_err <= r.tol);
}

// sdpa and a Plan on q [B, T, N, H], k/v [B, S, K, H]; both against the reference.
template <class T, class L, class Space>
Outcome forward_case(const Space& exec, std::int64_t B, std::int64_t T_, std::int64_t S,
                     std::int64_t N, std::int64_t K, std::int64_t H, const Options& o,
                     std::uint64_t seed = 1) {
  Tensor4<T, L, Space> q("q", {B, T_, N, H}), k("k", {B, S, K, H}), v("v", {B, S, K, H}),
      out("out", {B, T_, N, H}), out2("out2", {B, T_, N, H});
  const auto qv = q.randomize(seed), kv = k.randomize(seed + 1), vv = v.randomize(seed + 2);
  out.poison();
  out2.poison();
  Outcome r;
  KokkosAttn::Plan<Space> plan(exec, q.view(), k.view(), v.view(), out2.view(), o);
  r.backend = plan.backend();
  r.copies = plan.layout_copies().any();
  r.copied = plan.layout_copies().names();
  r.kernel = plan.kernel();
  r.explain = plan.explain();
  KokkosAttn::sdpa(exec, q.view(), k.view(), v.view(), out.view(), o);
  plan.execute(q.view(), k.view(), v.view(), out2.view());
  exec.fence();
  const auto ref = reference_forward({q.e, k.e, v.e, 4, {}, {}}, qv, kv, vv, o);
  r.err = max_diff(out.download(), ref);
  r.plan_err = max_diff(out2.download(), ref);
  r.tol = tolerance<T>(ref, 2, max_abs(vv));
  return r;
}

} // namespace kattn::test::frontend
