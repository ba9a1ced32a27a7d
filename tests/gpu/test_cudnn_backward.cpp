// The cudnn backend's backward on a real GPU against the f64 reference gradients
// (tolerances: backward_case.hpp).
#include <doctest/doctest.h>

#include "gpu/backward_case.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::check_backward_matches;
using kattn::test::Spec;

Spec bwd(DType t, std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
         std::int64_t H) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = H;
  s.seed = static_cast<std::uint64_t>(T * 17 + S * 3 + H + N + 5);
  return s;
}

} // namespace

TEST_CASE("cudnn/backward: dq, dk, dv match the reference") {
  for (DType t : {DType::bf16, DType::f16}) {
    check_backward_matches(bwd(t, 2, 128, 128, 2, 2, 64));
    check_backward_matches(bwd(t, 2, 113, 203, 2, 2, 128));
  }
}

TEST_CASE("cudnn/backward: causal both alignments, windows, GQA/MQA, bias") {
  Spec c = bwd(DType::bf16, 2, 113, 203, 4, 2, 64);
  c.opt.causal = true;
  check_backward_matches(c);
  c.opt.alignment = Alignment::bottom_right;
  check_backward_matches(c);
  Spec w = bwd(DType::bf16, 2, 128, 128, 2, 2, 64);
  w.opt.window_left = 7;
  w.opt.window_right = 3;
  check_backward_matches(w);
  Spec m = bwd(DType::bf16, 2, 97, 160, 8, 1, 64);
  check_backward_matches(m);
  Spec b = bwd(DType::bf16, 2, 64, 96, 2, 2, 64);
  b.bias = true;
  check_backward_matches(b);
}

TEST_CASE("cudnn/backward: bitwise repeatable in deterministic mode") {
  Spec s = bwd(DType::bf16, 2, 256, 256, 4, 2, 64);
  s.opt.deterministic = true;
  const auto r = kattn::test::run_backward_case(kattn::Backend::cudnn, s, 3);
  REQUIRE(r.supported);
  for (int i = 0; i < 3; ++i) {
    CHECK_FALSE(r.bits[i].empty()); // emptied when a repeat differed
    CHECK(r.err[i] <= r.tol[i]);
  }
}

TEST_CASE("cudnn/backward: refusals (no LSE, dbias)") {
  Spec s = bwd(DType::bf16, 1, 16, 16, 2, 2, 64);
  s.opt.backend = kattn::Backend::cudnn;
  kattn::test::Attn a(s);
  kattn::test::DeviceCopy q(a.q.view), k(a.k.view), v(a.v.view), out(a.out.view), dout(a.dout.view),
      dq(a.dq.view), dk(a.dk.view), dv(a.dv.view);
  kattn::BackwardProblem b = a.backward_problem(false);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = {};
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  CHECK_THROWS_WITH_AS(kattn::run_backward(kattn::default_registry(), b, x),
                       doctest::Contains("extras.lse"), kattn::Unsupported);
}
