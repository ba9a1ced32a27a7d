// KokkosAttn::Plan: choose once, execute many times; executing on differently shaped Views is an
// InvalidArgument that writes nothing. f32 tolerance 1e-5: see test_kokkos_sdpa.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
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
  // The backend's kernel, where it names one, sits between the backend and the sizes.
  CHECK(contains(text, "[kokkos-attention] plan: backend=" + backend + " (auto)"));
  CHECK(contains(text, " B=1 T=4 S=5"));
  if (plan.backend() == Backend::portable)
    CHECK(contains(text, " (auto) kernel=portable_host_tiles_fwd B=1 T=4 S=5"));
  CHECK(contains(text, "[kokkos-attention] sdpa: backend=" + backend + " (auto)"));
  CHECK(contains(text, "space=" + std::string(Kokkos::DefaultHostExecutionSpace::name())));
}

// Issue 20 item 4: execute() did not re-check the contents of the length tensors the plan
// captured; changing them made reference and portable write past out (ASan: heap overflow).
TEST_CASE("semantics/packed_varlen: a Plan validates the length contents again on every "
          "execute") {
  const Kokkos::DefaultHostExecutionSpace exec;
  const int N = 2, H = 8;
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> cu_q("cu_q", 3), cu_k("cu_k", 3);
  const auto set = [&](std::int32_t a, std::int32_t b) { cu_q(1) = a, cu_q(2) = b; };
  cu_k(0) = 0, cu_k(1) = 4, cu_k(2) = 6;
  cu_q(0) = 0;
  set(3, 8); // lengths 3 and 5
  using View3 = Kokkos::View<double***, Kokkos::HostSpace>;
  View3 q("q", 8, N, H), k("k", 6, N, H), v("v", 6, N, H), out("out", 8, N, H);
  std::mt19937_64 rng(5);
  std::normal_distribution<double> dist;
  for (View3 t : {q, k, v})
    for (std::size_t i = 0; i < t.size(); ++i)
      t.data()[i] = dist(rng);
  Extras e;
  e.cu_seqlens_q = KokkosAttn::as_tensor(cu_q);
  e.cu_seqlens_k = KokkosAttn::as_tensor(cu_k);
  for (Backend backend : {Backend::reference, Backend::portable}) {
    if (default_registry().find(backend) == nullptr)
      continue;
    INFO("backend " << to_string(backend));
    Options o;
    o.backend = backend;
    set(3, 8);
    KokkosAttn::Plan plan(exec, q, k, v, out, o, e);
    const auto nothing_written = [&] {
      bool all = true;
      for (std::size_t i = 0; i < out.size(); ++i)
        all = all && std::isnan(out.data()[i]);
      return all;
    };
    Kokkos::deep_copy(out, std::numeric_limits<double>::quiet_NaN());
    set(9, 8); // offsets past total_q and decreasing
    CHECK(
        contains(invalid_argument_of([&] { plan.execute(q, k, v, out); }), "extras.cu_seqlens_q"));
    CHECK(nothing_written());
    set(1, 8); // valid, but the longest sequence (T) is now 7, not the planned 5
    CHECK(contains(invalid_argument_of([&] { plan.execute(q, k, v, out); }),
                   "Plan::execute: extras sequence lengths: expected B=2 T=5 S=4 as planned, "
                   "got B=2 T=7 S=4"));
    CHECK(nothing_written());
    set(5, 8); // lengths 5 and 3: the same sizes, new contents: runs, and matches sdpa
    plan.execute(q, k, v, out);
    exec.fence();
    View3 ref("ref", 8, N, H);
    KokkosAttn::sdpa(exec, q, k, v, ref, o, e);
    exec.fence();
    for (std::size_t i = 0; i < out.size(); ++i)
      CHECK(out.data()[i] == ref.data()[i]);
  }
}
