// The front end's backward test (frontend_tests.hpp): sdpa_backward's gradients through
// LayoutRight and LayoutLeft Views against the f64 reference, and the backend that ran it.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "frontend/frontend_space.hpp"

namespace {

template <class Q, class K, class V, class O>
ForwardProblem forward_of(const Q& q, const K& k, const V& v, const O& out, const Options& o,
                          const Extras& e) {
  return KokkosAttn::Impl::forward_problem<Space>(q.view(), k.view(), v.view(), out.view(), o, e);
}

// The f64 reference backward's problem on the same rounded inputs (their logical values), out,
// dq, dk, dv zeroed for it to write; the vectors stay where the tensors point (not copyable).
struct RefBackward {
  using Extent = std::array<std::int64_t, 4>;
  std::vector<double> q, k, v, dout, out, dq, dk, dv;
  BackwardProblem p;
  RefBackward(std::vector<double> q_, std::vector<double> k_, std::vector<double> v_,
              std::vector<double> dout_, const Extent& eq, const Extent& ek, const Extent& ev,
              const Options& o)
      : q(std::move(q_)), k(std::move(k_)), v(std::move(v_)), dout(std::move(dout_)), out(q.size()),
        dq(q.size()), dk(k.size()), dv(v.size()) {
    p.forward.q = f64_tensor(q, eq, 4);
    p.forward.k = f64_tensor(k, ek, 4);
    p.forward.v = f64_tensor(v, ev, 4);
    p.forward.out = f64_tensor(out, eq, 4);
    p.forward.options = o;
    p.dout = f64_tensor(dout, eq, 4);
    p.dq = f64_tensor(dq, eq, 4);
    p.dk = f64_tensor(dk, ek, 4);
    p.dv = f64_tensor(dv, ev, 4);
  }
  RefBackward(const RefBackward&) = delete;
  RefBackward& operator=(const RefBackward&) = delete;
};

template <class L>
void backward_case(std::uint64_t seed) {
  using T = Fast;
  const Space exec;
  const std::int64_t B = 2, T_ = 64, S = 64, N = 4, K = 2, H = 64;
  Tensor4<T, L, Space> q("q", {B, T_, N, H}), k("k", {B, S, K, H}), v("v", {B, S, K, H}),
      out("out", {B, T_, N, H}), dout("dout", {B, T_, N, H}), dq("dq", {B, T_, N, H}),
      dk("dk", {B, S, K, H}), dv("dv", {B, S, K, H});
  const auto qv = q.randomize(seed), kv = k.randomize(seed + 1), vv = v.randomize(seed + 2);
  const auto dov = dout.randomize(seed + 3);
  for (auto* g : {&dq, &dk, &dv})
    g->poison();
  Kokkos::View<float***, typename Space::memory_space> lse("lse", B, N, T_); // default layout
  Extras e;
  e.lse = lse;
  Options o;
  o.causal = true;
  KokkosAttn::sdpa(exec, q.view(), k.view(), v.view(), out.view(), o, e);
  KokkosAttn::sdpa_backward(exec, q.view(), k.view(), v.view(), out.view(), dout.view(), dq.view(),
                            dk.view(), dv.view(), o, e);
  exec.fence();

  // The f64 reference backward on the same rounded inputs.
  RefBackward r(qv, kv, vv, dov, q.e, k.e, v.e, o);
  reference::backward(r.p, validate(r.p));

  // What the backward ran: on a GPU a GPU kernel backend (cudnn), through layout copies of the
  // LayoutLeft tensors and of the LSE (a Kokkos::View<float***> is LayoutLeft on GPUs too).
  BackwardProblem bp;
  bp.forward = forward_of(q, k, v, out, o, e);
  bp.dout = KokkosAttn::as_tensor(dout.view());
  bp.dq = KokkosAttn::as_tensor(dq.view());
  bp.dk = KokkosAttn::as_tensor(dk.view());
  bp.dv = KokkosAttn::as_tensor(dv.view());
  const ExecContext x = KokkosAttn::make_exec_context(exec);
  const Selection sel = select(default_registry(), bp, x, LayoutCopy::available);
  const std::string how = format_selection(sel) + "\n" +
                          format_explain(explain(default_registry(), bp, x, LayoutCopy::available));
  MESSAGE(std::string(L::name) << " backward: " << how);
  if (fast_space)
    CHECK(is_device_kernel(sel.impl->id()));
  const std::vector<double>* refs[] = {&r.dq, &r.dk, &r.dv};
  Tensor4<T, L, Space>* got[] = {&dq, &dk, &dv};
  const char* names[] = {"dq", "dk", "dv"};
  for (int i = 0; i < 3; ++i) {
    const std::vector<double>& ref = *refs[i];
    const double err = max_diff(got[i]->download(), ref);
    const double tol = tolerance<T>(ref, 4, max_abs(ref)) + (std::is_same_v<T, double> ? 0 : 1e-5);
    INFO(std::string(L::name) << " " << names[i] << ": err " << err << " tol " << tol << "\n"
                              << how);
    CHECK(err <= tol);
  }
}

} // namespace

KATTN_FE_TEST("sdpa_backward: gradients of LayoutRight and LayoutLeft Views") {
  backward_case<Right>(1);
  backward_case<Left>(11);
}

namespace {

// Attention sinks through the front end: extras.sinks and sdpa_backward's dsinks as Views of the
// execution space's memory, against the f64 reference's out, gradients and dsinks (GQA, causal).
// On a GPU space the portable backend serves them (cuda and cudnn refuse sinks).
void sinks_case(std::uint64_t seed) {
  using T = Fast;
  const Space exec;
  const std::int64_t B = 2, T_ = 48, S = 40, N = 4, K = 2, H = 32;
  Tensor4<T, Right, Space> q("q", {B, T_, N, H}), k("k", {B, S, K, H}), v("v", {B, S, K, H}),
      out("out", {B, T_, N, H}), dout("dout", {B, T_, N, H}), dq("dq", {B, T_, N, H}),
      dk("dk", {B, S, K, H}), dv("dv", {B, S, K, H});
  const auto qv = q.randomize(seed), kv = k.randomize(seed + 1), vv = v.randomize(seed + 2);
  const auto dov = dout.randomize(seed + 3);
  for (auto* g : {&out, &dq, &dk, &dv})
    g->poison();
  std::vector<float> sink_values = {0.3f, -0.7f, 1.5f, -std::numeric_limits<float>::infinity()};
  Kokkos::View<float*, typename Space::memory_space> sinks("sinks", N), dsinks("dsinks", N);
  Kokkos::deep_copy(sinks, Kokkos::View<const float*, Kokkos::HostSpace>(sink_values.data(), N));
  Kokkos::deep_copy(dsinks, std::numeric_limits<float>::quiet_NaN());
  Extras e;
  e.sinks = sinks;
  Options o;
  o.causal = true;
  o.alignment = Alignment::bottom_right;
  KokkosAttn::sdpa(exec, q.view(), k.view(), v.view(), out.view(), o, e);
  KokkosAttn::sdpa_backward(exec, q.view(), k.view(), v.view(), out.view(), dout.view(), dq.view(),
                            dk.view(), dv.view(), o, e, {}, dsinks);
  exec.fence();

  RefBackward r(qv, kv, vv, dov, q.e, k.e, v.e, o);
  std::vector<float> gs(static_cast<std::size_t>(N));
  r.p.forward.extras.sinks = Tensor::contiguous(sink_values.data(), DType::f32, {N});
  r.p.dsinks = Tensor::contiguous(gs.data(), DType::f32, {N});
  reference::forward(r.p.forward, validate(r.p.forward));
  reference::backward(r.p, validate(r.p));

  const std::vector<double>* refs[] = {&r.out, &r.dq, &r.dk, &r.dv};
  Tensor4<T, Right, Space>* got[] = {&out, &dq, &dk, &dv};
  const char* names[] = {"out", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    const std::vector<double>& ref = *refs[i];
    const double err = max_diff(got[i]->download(), ref);
    const double tol = tolerance<T>(ref, 4, max_abs(ref)) + (std::is_same_v<T, double> ? 0 : 1e-5);
    INFO("sinks " << names[i] << ": err " << err << " tol " << tol);
    CHECK(err <= tol);
  }
  std::vector<float> got_sinks(static_cast<std::size_t>(N));
  Kokkos::deep_copy(Kokkos::View<float*, Kokkos::HostSpace>(got_sinks.data(), N), dsinks);
  // dsinks[n] = -sum over rows of P(sink) D, D = sum_h dO O: with P(sink) <= 1, the rounding of
  // the backend's out (an element-type ulp) and of D's sum bound its error by a few u_T times
  // sum |dO O| over the head's rows (computed here from the reference's out).
  for (std::int64_t n = 0; n < N; ++n) {
    double terms = 0;
    for (std::int64_t b = 0; b < B; ++b)
      for (std::int64_t i = 0; i < T_; ++i)
        for (std::int64_t h = 0; h < H; ++h) {
          const std::size_t at = static_cast<std::size_t>(((b * T_ + i) * N + n) * H + h);
          terms += std::abs(r.dout[at] * r.out[at]);
        }
    const double want = gs[static_cast<std::size_t>(n)];
    const double err = std::abs(got_sinks[static_cast<std::size_t>(n)] - want);
    const double tol = 4 * unit_roundoff<T>() * terms + 1e-5;
    INFO("dsinks[" << n << "]: " << got_sinks[static_cast<std::size_t>(n)] << " want " << want
                   << " err " << err << " tol " << tol);
    CHECK(err <= tol);
  }
}

} // namespace

KATTN_FE_TEST("sdpa and sdpa_backward: attention sinks and dsinks as Views") {
  sinks_case(21);
}
