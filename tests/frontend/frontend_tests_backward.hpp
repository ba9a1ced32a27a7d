// The front end's backward test (frontend_tests.hpp): sdpa_backward's gradients through
// LayoutRight and LayoutLeft Views against the f64 reference, and the backend that ran it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frontend/frontend_space.hpp"

namespace {

template <class Q, class K, class V, class O>
ForwardProblem forward_of(const Q& q, const K& k, const V& v, const O& out, const Options& o,
                          const Extras& e) {
  return KokkosAttn::Impl::forward_problem<Space>(q.view(), k.view(), v.view(), out.view(), o, e);
}

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
  std::vector<double> rq = qv, rk = kv, rv = vv, rdo = dov, ro(qv.size());
  std::vector<double> gq(qv.size()), gk(kv.size()), gv(vv.size());
  BackwardProblem p;
  p.forward.q = f64_tensor(rq, q.e, 4);
  p.forward.k = f64_tensor(rk, k.e, 4);
  p.forward.v = f64_tensor(rv, v.e, 4);
  p.forward.out = f64_tensor(ro, out.e, 4);
  p.forward.options = o;
  p.dout = f64_tensor(rdo, dout.e, 4);
  p.dq = f64_tensor(gq, dq.e, 4);
  p.dk = f64_tensor(gk, dk.e, 4);
  p.dv = f64_tensor(gv, dv.e, 4);
  reference::backward(p, validate(p));

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
  const std::vector<double>* refs[] = {&gq, &gk, &gv};
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
