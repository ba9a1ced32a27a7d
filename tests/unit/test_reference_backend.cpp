// The reference backend as a registry entry: its id, its support check (host memory, CPU,
// f64/f32/f16/bf16) and that forward()/backward() run the reference functions.
#include <doctest/doctest.h>

#include "common/oracle_attention.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
Spec small() {
  Spec s;
  s.B = 2, s.T = 4, s.S = 5, s.N = 2, s.K = 1, s.H = 8, s.Hv = 8;
  return s;
}
} // namespace

TEST_CASE("reference/backend: id and description") {
  const auto impl = reference::make_reference_backend();
  CHECK(impl->id() == Backend::reference);
  CHECK_FALSE(impl->description().empty());
}

TEST_CASE("reference/backend: supports host problems of every float dtype, forward and backward") {
  const auto impl = reference::make_reference_backend();
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    Spec s = small();
    s.dtype = t;
    s.bias = true;
    s.mask = true;
    s.alibi = 1;
    Attn a(s);
    CAPTURE(to_string(t));
    const Support f = impl->supports(a.forward_problem(), a.dims, ExecContext{});
    CHECK(f.ok);
    CHECK(f.reason.empty());
    CHECK(impl->supports(a.backward_problem(), a.dims, ExecContext{}).ok);
  }
}

TEST_CASE("reference/backend: refuses device memory and names the tensor") {
  const auto impl = reference::make_reference_backend();
  Attn a(small());
  ForwardProblem p = a.forward_problem();
  p.q.space = MemorySpace::cuda_device;
  const Support s = impl->supports(p, a.dims, ExecContext{});
  CHECK_FALSE(s.ok);
  CHECK(s.reason == "reference: q is in cuda_device memory; the reference backend runs on the "
                    "host only");
  BackwardProblem bp = a.backward_problem();
  bp.dv.space = MemorySpace::hip_device;
  const Support sb = impl->supports(bp, a.dims, ExecContext{});
  CHECK_FALSE(sb.ok);
  CHECK(sb.reason.find("dv is in hip_device memory") != std::string::npos);
}

TEST_CASE("reference/backend: refuses fp8 with the dtype in the reason") {
  const auto impl = reference::make_reference_backend();
  Attn a(small());
  ForwardProblem p = a.forward_problem();
  p.q.dtype = p.k.dtype = p.v.dtype = p.out.dtype = DType::f8_e4m3;
  const Support s = impl->supports(p, a.dims, ExecContext{});
  CHECK_FALSE(s.ok);
  CHECK(s.reason.rfind("reference: dtype f8_e4m3 not supported", 0) == 0);
}

TEST_CASE("reference/backend: refuses a GPU execution context") {
  const auto impl = reference::make_reference_backend();
  Attn a(small());
  ExecContext x;
  x.device = Device::cuda;
  const Support s = impl->supports(a.forward_problem(), a.dims, x);
  CHECK_FALSE(s.ok);
  CHECK(s.reason == "reference: runs on the cpu only, got device cuda");
  x.device = Device::hip;
  CHECK_FALSE(impl->supports(a.backward_problem(), a.dims, x).ok);
  // Any CPU context is fine, whatever Kokkos space it names.
  x.device = Device::cpu;
  x.kokkos_space = "OpenMP";
  CHECK(impl->supports(a.forward_problem(), a.dims, x).ok);
}

TEST_CASE("reference/backend: forward() and backward() compute the oracle's result") {
  // f64 vs fp64 oracle: summation order only, see oracle_checks.hpp (1e-12).
  const auto impl = reference::make_reference_backend();
  Spec s = small();
  s.bias = true;
  s.opt.causal = true;
  Attn a(s);
  poison(a.out.view);
  poison(a.lse.view());
  impl->forward(a.forward_problem(), a.dims, ExecContext{});
  const OracleResult o = oracle(a);
  CHECK(rel_err(a.out_values(), o.out) <= 1e-12);
  CHECK(rel_err(a.lse_values(), o.lse) <= 1e-6);
  poison(a.dq.view);
  poison(a.dk.view);
  poison(a.dv.view);
  poison(a.dbias.view());
  impl->backward(a.backward_problem(), a.dims, ExecContext{});
  CHECK(rel_err(read_logical(a.dq.view), o.dq) <= 1e-12);
  CHECK(rel_err(read_logical(a.dk.view), o.dk) <= 1e-12);
  CHECK(rel_err(read_logical(a.dv.view), o.dv) <= 1e-12);
  CHECK(rel_err(a.dbias.to_doubles(), o.dbias) <= 1e-12);
}

TEST_CASE("reference/backend: backward does not write the forward's out or lse") {
  Attn a(small());
  a.forward();
  const auto out = a.out_values(), lse = a.lse_values();
  a.backward(false);
  CHECK(max_abs_diff(a.out_values(), out) == 0.0);
  CHECK(max_abs_diff(a.lse_values(), lse) == 0.0);
}

TEST_CASE("reference/backend: the tests' hand-resolved Dims agree with kattn::validate") {
  // The reference trusts Dims; the test fixture builds them by hand, so both must agree with
  // the library's own resolution for every kind of problem the tests use.
  std::vector<Spec> specs;
  specs.push_back(small());
  Spec s = small();
  s.opt.causal = true;
  s.opt.window_left = 2;
  s.opt.alignment = Alignment::bottom_right;
  s.opt.scale = 0.3;
  s.bias = s.bias_bcast_b = true;
  s.mask = true;
  s.alibi = 2;
  s.heads_major = true;
  specs.push_back(s);
  s = small();
  s.q_lens = {3, 4};
  s.k_lens = {5, 1};
  s.Hv = 5;
  specs.push_back(s);
  s = small();
  s.packed = true;
  s.q_lens = {3, 1, 6};
  s.k_lens = {2, 7, 4};
  s.opt.dropout_p = 0.2;
  s.opt.window_right = 3;
  specs.push_back(s);
  for (const Spec& spec : specs) {
    Attn a(spec);
    const Dims d = validate(a.backward_problem());
    CHECK(d.B == a.dims.B);
    CHECK(d.T == a.dims.T);
    CHECK(d.S == a.dims.S);
    CHECK(d.N == a.dims.N);
    CHECK(d.K == a.dims.K);
    CHECK(d.H == a.dims.H);
    CHECK(d.Hv == a.dims.Hv);
    CHECK(d.packed == a.dims.packed);
    CHECK(d.padded == a.dims.padded);
    CHECK(d.scale == a.dims.scale);
    CHECK(d.window_left == a.dims.window_left);
    CHECK(d.window_right == a.dims.window_right);
  }
}
