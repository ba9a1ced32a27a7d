// KokkosAttn::Plan: choose once, execute many times; executing on differently shaped Views is an
// InvalidArgument that writes nothing. f32 tolerance 1e-5: see test_kokkos_sdpa.cpp.
#include <doctest/doctest.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "test_kokkos_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

struct Views {
  View4<float> q, k, v, out, ref;
  Views(int B, int T, int S, int N, int H, std::uint64_t seed)
      : q("q", B, T, N, H), k("k", B, S, N, H), v("v", B, S, N, H), out("out", B, T, N, H),
        ref("ref", B, T, N, H) {
    fill_random(q, seed);
    fill_random(k, seed + 1);
    fill_random(v, seed + 2);
    fill_nan(out);
  }
};

// Reads the message of the InvalidArgument `f` throws ("" when it does not throw).
template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("kokkos/plan: chooses naive on the host, explains, and executes correctly") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Views a(2, 8, 11, 2, 16, 1);
  Options o;
  o.causal = true;
  KokkosAttn::Plan plan(exec, a.q, a.k, a.v, a.out, o);
  if (default_registry().find(Backend::portable) == nullptr)
    CHECK(plan.backend() == Backend::naive);
  const std::string text = plan.explain();
  CHECK(contains(text, "plan: backend=" + std::string(to_string(plan.backend())) + " (auto)"));
  CHECK(contains(text, "naive"));
  CHECK(contains(text, "reference"));
  CHECK(plan.dims().T == 8);
  CHECK(plan.dims().window_right == 0); // causal folded in
  plan.execute(a.q, a.k, a.v, a.out);
  exec.fence();
  reference_out(a.q, a.k, a.v, a.ref, o);
  CHECK(max_diff4(a.out, a.ref) <= 1e-5);
}

TEST_CASE("kokkos/plan: executing twice on new data gives the new results") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Views a(2, 6, 9, 4, 8, 10), b(2, 6, 9, 4, 8, 20);
  KokkosAttn::Plan plan(exec, a.q, a.k, a.v, a.out);
  plan.execute(a.q, a.k, a.v, a.out);
  plan.execute(b.q, b.k, b.v, b.out);
  exec.fence();
  reference_out(a.q, a.k, a.v, a.ref);
  reference_out(b.q, b.k, b.v, b.ref);
  CHECK(max_diff4(a.out, a.ref) <= 1e-5);
  CHECK(max_diff4(b.out, b.ref) <= 1e-5);
  CHECK(max_diff4(a.out, b.out) > 1e-2); // different inputs really gave different outputs
  // Reusing the first buffers again after new contents.
  fill_random(a.q, 99);
  fill_nan(a.out);
  plan.execute(a.q, a.k, a.v, a.out);
  exec.fence();
  reference_out(a.q, a.k, a.v, a.ref);
  CHECK(max_diff4(a.out, a.ref) <= 1e-5);
}

TEST_CASE("kokkos/plan: execute rejects Views unlike the planned ones and leaves out untouched") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Views a(1, 4, 6, 2, 8, 1);
  KokkosAttn::Plan plan(exec, a.q, a.k, a.v, a.out);

  Views longer(1, 5, 6, 2, 8, 2); // T = 5 instead of 4
  std::string msg = invalid_argument_of([&] { plan.execute(longer.q, a.k, a.v, a.out); });
  CHECK(contains(msg,
                 "Plan::execute: q: expected extents [1, 4, 2, 8] as planned, got [1, 5, 2, 8]"));
  msg = invalid_argument_of([&] { plan.execute(a.q, a.k, a.v, longer.out); });
  CHECK(contains(msg, "Plan::execute: out: expected extents"));
  CHECK(all_nan4(a.out));
  CHECK(all_nan4(longer.out));

  // Same extents, different strides (LayoutLeft) and different dtype (f64).
  View4<float, Kokkos::LayoutLeft> left("left", 1, 4, 2, 8);
  msg = invalid_argument_of([&] { plan.execute(left, a.k, a.v, a.out); });
  CHECK(contains(msg, "Plan::execute: q: expected strides [64, 16, 8, 1] as planned, got"));
  View4<double> dbl("dbl", 1, 6, 2, 8);
  msg = invalid_argument_of([&] { plan.execute(a.q, dbl, a.v, a.out); });
  CHECK(contains(msg, "Plan::execute: k: expected dtype f32 as planned, got f64"));
  CHECK(all_nan4(a.out));
}

TEST_CASE("kokkos/plan: a forced backend that cannot serve the problem fails at planning") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Views a(1, 4, 4, 2, 8, 1);
  Options o;
  o.backend = Backend::naive;
  o.dropout_p = 0.5;
  CHECK_THROWS_AS(KokkosAttn::Plan(exec, a.q, a.k, a.v, a.out, o), Unsupported);
  CHECK(all_nan4(a.out));
}

TEST_CASE("kokkos/plan: KOKKOSATTN_LOG=1 prints one line at plan creation and per sdpa call") {
  const Kokkos::DefaultHostExecutionSpace exec;
  Views a(1, 4, 5, 2, 8, 1);
  std::ostringstream captured;
  std::streambuf* old = std::cerr.rdbuf(captured.rdbuf());
  ::setenv("KOKKOSATTN_LOG", "1", 1);
  KokkosAttn::Plan plan(exec, a.q, a.k, a.v, a.out);
  KokkosAttn::sdpa(exec, a.q, a.k, a.v, a.out);
  ::unsetenv("KOKKOSATTN_LOG");
  std::cerr.rdbuf(old);
  const std::string text = captured.str();
  const std::string backend(to_string(plan.backend()));
  CHECK(contains(text, "[kokkos-attention] plan: backend=" + backend + " (auto) B=1 T=4 S=5"));
  CHECK(contains(text, "[kokkos-attention] sdpa: backend=" + backend + " (auto)"));
  CHECK(contains(text, "space=" + std::string(Kokkos::DefaultHostExecutionSpace::name())));
}
