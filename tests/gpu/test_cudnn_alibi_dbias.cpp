// ALiBi and the bias gradient in the cudnn backend against the f64 reference (tolerances:
// cudnn_case.hpp, backward_case.hpp). cuDNN's ALiBi adds slope_n * (j - i) with its own
// fixed slopes 2^(-8(n+1)/N) (the ALiBi paper's; cudnn-frontend get_alibi_slope): that is our
// -slope_n * |i + d - j| exactly for causal top-left masks (j <= i, d = 0) when the caller's
// slopes are those, which is all the backend serves; everything else is refused with a reason.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpu/backward_case.hpp"

namespace {

using kattn::Alignment;
using kattn::DType;
using kattn::test::check_backward_matches;
using kattn::test::check_matches;
using kattn::test::run_cudnn_case;
using kattn::test::Spec;

// The ALiBi paper's slopes, written independently of the backend's code: for the largest power
// of two n <= N, 2^(-8/n) to the powers 1..n, then the odd powers of 2^(-4/n) for the rest.
std::vector<double> paper_slopes(std::int64_t N) {
  std::int64_t n = 1;
  while (2 * n <= N)
    n *= 2;
  std::vector<double> s;
  for (std::int64_t h = 1; h <= n; ++h)
    s.push_back(std::pow(2.0, -8.0 * static_cast<double>(h) / static_cast<double>(n)));
  for (std::int64_t m = 0; static_cast<std::int64_t>(s.size()) < N; ++m)
    s.push_back(std::pow(2.0, -4.0 * static_cast<double>(2 * m + 1) / static_cast<double>(n)));
  return s;
}

Spec alibi(std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K) {
  Spec s;
  s.dtype = DType::bf16;
  s.B = 2, s.T = T, s.S = S, s.N = N, s.K = K, s.H = 64, s.Hv = 64;
  s.alibi = 1;
  s.opt.causal = true;
  s.seed = static_cast<std::uint64_t>(T + 3 * S + N);
  return s;
}

} // namespace

TEST_CASE("cudnn/alibi: causal top-left with the paper's slopes matches the reference") {
  check_matches(alibi(128, 128, 8, 8), nullptr, paper_slopes(8));
  check_matches(alibi(113, 203, 8, 2), nullptr, paper_slopes(8));   // T != S, GQA
  check_matches(alibi(128, 128, 12, 4), nullptr, paper_slopes(12)); // N not a power of two
  Spec br = alibi(128, 128, 8, 8); // bottom-right with T == S is the same mask
  br.opt.alignment = Alignment::bottom_right;
  check_matches(br, nullptr, paper_slopes(8));
  Spec w = alibi(128, 128, 8, 8); // with a left window
  w.opt.window_left = 17;
  check_matches(w, nullptr, paper_slopes(8));
}

TEST_CASE("cudnn/alibi: the slopes matter (the comparison can fail)") {
  Spec s = alibi(128, 128, 8, 8);
  const auto with = run_cudnn_case(s, nullptr, paper_slopes(8));
  s.alibi = 0;
  const auto without = run_cudnn_case(s);
  REQUIRE(with.supported);
  REQUIRE(without.supported);
  CHECK(kattn::test::max_abs_diff(with.ref_out, without.ref_out) > 10 * with.tol_out);
}

TEST_CASE("cudnn/alibi: backward matches the reference") {
  check_backward_matches(alibi(128, 128, 8, 8), false, paper_slopes(8));
  check_backward_matches(alibi(113, 203, 8, 2), false, paper_slopes(8));
}

TEST_CASE("cudnn/alibi: refusals name the reason, outputs untouched") {
  // Other slopes (random ones in [0.05, 0.8]).
  const auto r1 = run_cudnn_case(alibi(64, 64, 8, 8));
  CHECK_FALSE(r1.supported);
  CHECK(r1.reason.find("fixed slopes") != std::string::npos);
  CHECK(r1.out_all_nan);
  // Not causal: cuDNN's slope * (j - i) is not -slope * |i - j| above the diagonal.
  Spec nc = alibi(64, 64, 8, 8);
  nc.opt.causal = false;
  const auto r2 = run_cudnn_case(nc, nullptr, paper_slopes(8));
  CHECK_FALSE(r2.supported);
  CHECK(r2.reason.find("causal") != std::string::npos);
  // Bottom-right with T != S: cuDNN's distance has no diagonal offset.
  Spec br = alibi(64, 96, 8, 8);
  br.opt.alignment = Alignment::bottom_right;
  const auto r3 = run_cudnn_case(br, nullptr, paper_slopes(8));
  CHECK_FALSE(r3.supported);
  CHECK(r3.reason.find("bottom_right") != std::string::npos);
  // Per-batch slopes [B, N].
  Spec pb = alibi(64, 64, 8, 8);
  pb.alibi = 2;
  const auto r4 = run_cudnn_case(pb);
  CHECK_FALSE(r4.supported);
  CHECK(r4.reason.find("per head") != std::string::npos);
}

TEST_CASE("cudnn/dbias: the bias gradient for a [1, N, T, S] bias") {
  Spec s;
  s.dtype = DType::bf16;
  s.B = 2, s.T = 128, s.S = 128, s.N = 4, s.K = 4, s.H = 64, s.Hv = 64;
  s.bias = true;
  s.bias_bcast_b = true;
  s.seed = 31;
  check_backward_matches(s, true);
  Spec c = s; // causal, T != S
  c.T = 96, c.S = 160;
  c.opt.causal = true;
  check_backward_matches(c, true);
}

TEST_CASE("cudnn/dbias: other bias shapes are served or refused by cuDNN, never wrong") {
  for (int shape = 0; shape < 2; ++shape) {
    Spec s;
    s.dtype = DType::bf16;
    s.B = 2, s.T = 128, s.S = 128, s.N = 4, s.K = 4, s.H = 64, s.Hv = 64;
    s.bias = true;
    s.bias_bcast_n = shape == 1; // [B, N, T, S] then [B, 1, T, S]
    s.seed = 37;
    const auto r = kattn::test::run_backward_case(kattn::Backend::cudnn, s, 1, true);
    MESSAGE("dbias shape " << (shape == 0 ? "[B,N,T,S]" : "[B,1,T,S]") << ": "
                           << (r.supported ? "served" : "refused: " + r.reason));
    if (!r.supported) {
      CHECK(r.reason.find("cuDNN") != std::string::npos);
      continue;
    }
    CHECK(r.finite);
    for (int i = 0; i < 4; ++i)
      CHECK(r.err[i] <= r.tol[i]);
  }
}
