// What the portable backend accepts and refuses (with which reason), where it runs, and that
// `auto` picks it on a CPU for the problems it supports.
#include <doctest/doctest.h>

#include <string>

#include "common/dispatch_fixture.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "reference/reference.hpp"
#include "test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}
} // namespace

TEST_CASE("portable: identifies itself and describes its build") {
  CHECK(portable_backend().id() == Backend::portable);
  CHECK(contains(portable_backend().description(), "Kokkos"));
}

TEST_CASE("portable: supports every option on every host context, forward and backward") {
  Spec s = spec_of(2, 5, 7, 4, 2, 8, 8);
  s.bias = s.mask = true;
  s.alibi = 1;
  s.q_lens = {5, 3};
  s.opt.dropout_p = 0.2;
  s.opt.softcap = 3;
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  const BackwardProblem bp = a.backward_problem(true);
  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO(name);
    CHECK(portable_backend().supports(p, validate(p), ctx).ok);
    CHECK(portable_backend().supports(bp, validate(bp), ctx).ok);
  }
}

TEST_CASE("portable: refuses device memory on a host context, and says why") {
  Spec s = spec_of(1, 4, 4, 1, 1, 8, 8);
  Attn a(s);
  ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  p.k.space = MemorySpace::cuda_device; // validation does not look at the data
  const Support sup = portable_backend().supports(p, d, ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "portable: k is in"));
  poison(a.out.view);
  CHECK_THROWS_AS(portable_backend().forward(p, d, ExecContext{}), Unsupported);
  for (double x : a.out_values())
    CHECK(std::isnan(x)); // refused: nothing written
}

TEST_CASE("portable: refuses execution spaces this build lacks, and GPU contexts without them") {
  Spec s = spec_of(1, 4, 4, 1, 1, 8, 8);
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  ExecContext bogus;
  bogus.kokkos_space = "NoSuchSpace";
  const Support sup = portable_backend().supports(p, d, bogus);
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "NoSuchSpace is not enabled"));
#ifndef KOKKOS_ENABLE_HIP
  ExecContext hip;
  hip.device = Device::hip;
  CHECK(contains(portable_backend().supports(p, d, hip).reason, "no HIP execution space"));
#endif
}

TEST_CASE("portable: refuses f8 with the dtype in the reason") {
  Spec s = spec_of(1, 4, 4, 1, 1, 8, 8);
  Attn a(s);
  ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.out})
    t->dtype = DType::f8_e4m3;
  const Support sup = portable_backend().supports(p, d, ExecContext{});
  CHECK_FALSE(sup.ok);
  CHECK(contains(sup.reason, "f8_e4m3"));
}

TEST_CASE("portable: auto picks portable on a CPU for the problems it supports") {
  // A registry with the CPU backends only (the default one may list GPU backends that refuse).
  Registry r;
  r.add(reference::make_reference_backend());
  r.add(naive::make_naive_backend());
  r.add(portable::make_portable_backend());
  Spec s = spec_of(2, 9, 11, 2, 1, 8, 8);
  s.opt.dropout_p = 0.1; // naive refuses dropout; portable must still be first
  Attn a(s);
  const ForwardProblem p = a.forward_problem();
  CHECK(select(r, p, ExecContext{}).impl->id() == Backend::portable);
  const BackwardProblem bp = a.backward_problem(false);
  CHECK(select(r, bp, ExecContext{}).impl->id() == Backend::portable);
  Spec packed;
  packed.packed = true;
  packed.q_lens = {3, 5};
  packed.k_lens = {4, 2};
  Attn b(packed);
  CHECK(select(r, b.forward_problem(), ExecContext{}).impl->id() == Backend::portable);
}

// KOKKOSATTN_PORTABLE_KERNEL (backends/portable/portable_kernel_choice.hpp): explain() names
// the host tiles; a forced device kernel on a host space, or an unknown value, is refused with
// the reason, never run as something else.
TEST_CASE("portable: the forward's kernel name and KOKKOSATTN_PORTABLE_KERNEL on host spaces") {
  Attn a(spec_of(1, 5, 7, 2, 1, 8, 8));
  const ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  HostSpaces spaces;
  for (const auto& [name, ctx] : spaces.contexts()) {
    INFO(name);
    {
      EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", nullptr);
      CHECK(portable_backend().supports(p, d, ctx).kernel == "portable_host_tiles_fwd");
    }
    {
      EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "tiles");
      CHECK(portable_backend().supports(p, d, ctx).kernel == "portable_host_tiles_fwd");
    }
    {
      EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "device");
      const Support s = portable_backend().supports(p, d, ctx);
      CHECK_FALSE(s.ok);
      CHECK(contains(s.reason, "GPU execution spaces only"));
    }
    {
      EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "fast");
      const Support s = portable_backend().supports(p, d, ctx);
      CHECK_FALSE(s.ok);
      CHECK(contains(s.reason, "must be device or tiles, got 'fast'"));
    }
  }
}
