// What the naive backend refuses, and why; refusals never write outputs.
#include <doctest/doctest.h>

#include <string>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "test_naive_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// True when every element of out is still NaN (the poison), i.e. nothing was written.
bool untouched(const Attn& a) {
  for (double x : a.out_values())
    if (!std::isnan(x))
      return false;
  return true;
}
} // namespace

TEST_CASE("naive: supports the host problems of its feature list") {
  Spec s = spec_of(2, 5, 7, 4, 2, 8, 8);
  s.bias = s.mask = true;
  s.alibi = 1;
  s.q_lens = {5, 3};
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO(name);
    CHECK(naive::make_naive_backend()->supports(p, d, ctx).ok);
  }
}

TEST_CASE("semantics/packed_varlen: naive refuses packed varlen with a reason") {
  Spec s;
  s.packed = true;
  s.q_lens = {3, 5};
  s.k_lens = {4, 2};
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  const Support sup = naive::make_naive_backend()->supports(p, validate(p), ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "naive: packed varlen"));
}

TEST_CASE("semantics/dropout: naive refuses dropout; forcing it throws and writes nothing") {
  Spec s = spec_of(1, 4, 4, 2, 1, 8, 8);
  s.opt.dropout_p = 0.1;
  Attn a(s);
  poison(a.out.view);
  ForwardProblem p = a.forward_problem();
  const Support sup = naive::make_naive_backend()->supports(p, validate(p), ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "naive: dropout is not implemented"));
  // Direct calls re-check support before touching anything.
  CHECK_THROWS_AS(naive::make_naive_backend()->forward(p, validate(p), ExecContext{}), Unsupported);
  p.options.backend = Backend::naive;
  try {
    run_forward(default_registry(), p, ExecContext{});
    FAIL("forced naive with dropout must throw");
  } catch (const Unsupported& e) {
    CHECK(contains(e.what(), "naive"));
    CHECK(contains(e.what(), "dropout"));
  }
  CHECK(untouched(a));
}

TEST_CASE("naive: backward is refused with a reason and throws when called") {
  Spec s = spec_of(1, 4, 4, 2, 1, 8, 8);
  Attn a(s);
  const BackwardProblem p = a.backward_problem(false);
  const Dims d = validate(p);
  const auto backend = naive::make_naive_backend();
  const Support sup = backend->supports(p, d, ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(sup.reason == "naive: backward is not implemented; use reference or portable");
  CHECK_THROWS_AS(backend->backward(p, d, ExecContext{}), Unsupported);
}

TEST_CASE("naive: host memory with a CUDA or HIP context is refused") {
  Attn a(spec_of(1, 4, 4, 2, 1, 8, 8));
  const ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  const auto backend = naive::make_naive_backend();
  for (Device dev : {Device::cuda, Device::hip}) {
    ExecContext x;
    x.device = dev;
    const Support sup = backend->supports(p, d, x);
    CHECK_FALSE(sup.ok);
    CHECK(contains(sup.reason, "naive: "));
  }
  ExecContext named; // a Kokkos space name this build does not have (or Cuda with host memory)
  named.kokkos_space = "Cuda";
  named.device = Device::cuda;
  const Support sup = backend->supports(p, d, named);
  CHECK_FALSE(sup.ok);
#ifdef KOKKOS_ENABLE_CUDA
  CHECK(contains(sup.reason, "q is in host memory"));
#else
  CHECK(contains(sup.reason, "Cuda is not enabled in this build"));
#endif
}

TEST_CASE("naive: device memory with a host context is refused, naming the tensor") {
  Spec s = spec_of(1, 4, 4, 2, 1, 8, 8);
  s.bias = true;
  Attn a(s);
  ForwardProblem p = a.forward_problem();
  // Pretend everything lives on a CUDA device: supports() must not read data.
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.out, &p.extras.bias, &p.extras.lse})
    t->space = MemorySpace::cuda_device;
  const Support sup = naive::make_naive_backend()->supports(p, validate(p), ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "naive: q is in cuda_device memory"));
}

TEST_CASE("naive: auto picks naive for host problems when no faster backend supports them") {
  Attn a(spec_of(1, 4, 6, 2, 1, 8, 8));
  const ForwardProblem p = a.forward_problem();
  const Selection sel = select(default_registry(), p, ExecContext{});
  REQUIRE(sel.impl != nullptr);
  // portable/cuda/cudnn/hip precede naive in preference_order; on a host-only build without
  // portable, naive is the first to support a host problem.
  if (default_registry().find(Backend::portable) == nullptr)
    CHECK(sel.impl->id() == Backend::naive);
  const auto verdicts = explain(default_registry(), p, ExecContext{});
  bool listed = false;
  for (const auto& v : verdicts)
    if (v.backend == Backend::naive)
      listed = v.built && v.supported && !v.description.empty();
  CHECK(listed);
}

TEST_CASE("naive: raw-memory attention_forward with the backend forced matches the reference") {
  Spec s = spec_of(2, 6, 9, 4, 2, 16, 16);
  s.opt.backend = Backend::naive;
  s.opt.causal = true;
  Attn a(s);
  const Truth truth = fp64_truth(a);
  poison(a.out.view);
  poison(a.lse.view());
  attention_forward(a.forward_problem());
  CHECK(max_abs_diff(a.out_values(), truth.out) <= 1e-5); // f32: see tolerance_for
  CHECK(max_abs_diff(a.lse_values(), truth.lse) <= 1e-5);
}
