// docs/semantics.md rule empty through the front end (frontend_tests.hpp): no tokens, no keys,
// no queries.
#pragma once

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "frontend/frontend_space.hpp"

// docs/semantics.md rule empty, through Views on this space: an MPI rank holding no tokens this
// step (T = S = 0) calls sdpa, a Plan and sdpa_backward and nothing runs; no keys (S = 0) leaves
// every row fully masked and no queries (T = 0) leaves dk and dv zero. On a GPU those two run on
// the portable backend: the GPU kernels refuse them (kokkosattn/detail/empty_sides.hpp).
template <class L>
void empty_case() {
  const Space exec;
  using Mem = typename Space::memory_space;
  const auto sdpa_explain = [&](const auto& q, const auto& k, const auto& v, const auto& out,
                                const Extras& e) {
    const std::string how =
        KokkosAttn::explain(exec, q.view(), k.view(), v.view(), out.view(), Options{}, e);
    INFO(L::name << ": " << how);
    KokkosAttn::sdpa(exec, q.view(), k.view(), v.view(), out.view(), Options{}, e);
    return how;
  };
  { // no tokens at all: a no-op, planned or not
    Tensor4<Fast, L, Space> q("q", {2, 0, 4, 64}), k("k", {2, 0, 2, 64}), v("v", {2, 0, 2, 64}),
        out("out", {2, 0, 4, 64});
    CHECK(has(sdpa_explain(q, k, v, out, {}), "nothing to compute"));
    KokkosAttn::Plan<Space> plan(exec, q.view(), k.view(), v.view(), out.view());
    CHECK(plan.backend() == Backend::automatic);
    plan.execute(q.view(), k.view(), v.view(), out.view());
  }
  { // no keys: out 0, LSE -inf
    Tensor4<Fast, L, Space> q("q", {2, 5, 4, 64}), k("k", {2, 0, 2, 64}), v("v", {2, 0, 2, 64}),
        out("out", {2, 5, 4, 64});
    q.randomize(1);
    out.poison();
    Kokkos::View<float***, Mem> lse("lse", 2, 4, 5);
    Kokkos::deep_copy(lse, std::numeric_limits<float>::quiet_NaN());
    Extras e;
    e.lse = lse;
    const std::string how = sdpa_explain(q, k, v, out, e);
    exec.fence();
    INFO(how);
    if (fast_space && std::is_same_v<L, Right>) // (LayoutLeft: the head-dim stride comes first)
      CHECK(has(how, "no keys"));
    const std::vector<double> o = out.download();
    CHECK(std::all_of(o.begin(), o.end(), [](double x) { return x == 0.0; }));
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), lse);
    for (std::size_t i = 0; i < h.size(); ++i)
      CHECK(h.data()[i] == -std::numeric_limits<float>::infinity());
  }
  { // no queries: dk = dv = 0
    Tensor4<Fast, L, Space> q("q", {2, 0, 4, 64}), k("k", {2, 6, 2, 64}), v("v", {2, 6, 2, 64}),
        out("out", {2, 0, 4, 64}), dout("dout", {2, 0, 4, 64}), dq("dq", {2, 0, 4, 64}),
        dk("dk", {2, 6, 2, 64}), dv("dv", {2, 6, 2, 64});
    k.randomize(2);
    v.randomize(3);
    dk.poison();
    dv.poison();
    Kokkos::View<float***, Mem> lse("lse", 2, 4, 0);
    Extras e;
    e.lse = lse;
    KokkosAttn::sdpa_backward(exec, q.view(), k.view(), v.view(), out.view(), dout.view(),
                              dq.view(), dk.view(), dv.view(), Options{}, e);
    exec.fence();
    for (auto* g : {&dk, &dv}) {
      const std::vector<double> got = g->download();
      CHECK(std::all_of(got.begin(), got.end(), [](double x) { return x == 0.0; }));
    }
  }
}

KATTN_FE_TEST("empty problems: no tokens is a no-op, no keys gives out 0 and LSE -inf, no "
              "queries gives dk = dv = 0") {
  empty_case<Right>();
  empty_case<Left>();
}
