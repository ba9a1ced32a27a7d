// Reference backward against central finite differences of the reference forward (f64), one
// case per option. Tolerances: see check_finite_differences in tests/common/oracle_checks.hpp.
#include <doctest/doctest.h>

#include "common/oracle_checks.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
Spec small() {
  Spec s;
  s.B = 2, s.T = 5, s.S = 6, s.N = 2, s.K = 1, s.H = 4, s.Hv = 4;
  return s;
}
} // namespace

TEST_CASE("reference/gradients: plain attention matches finite differences") {
  check_finite_differences(small());
}

TEST_CASE("reference/gradients: softcap") {
  Spec s = small();
  s.opt.softcap = 0.8;
  s.q_mult = 2;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: full bias (dbias)") {
  Spec s = small();
  s.bias = true;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: broadcast bias sums dbias over batch and heads") {
  Spec s = small();
  s.B = 3;
  s.bias = s.bias_bcast_b = s.bias_bcast_n = true;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: softcap then bias") {
  Spec s = small();
  s.opt.softcap = 1.2;
  s.bias = s.bias_bcast_b = true;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: ALiBi") {
  Spec s = small();
  s.alibi = 2;
  s.opt.alignment = Alignment::bottom_right;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: sliding window") {
  Spec s = small();
  s.opt.window_left = 1;
  s.opt.window_right = 2;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: bottom_right causal with T > S (fully masked rows)") {
  Spec s = small();
  s.T = 7;
  s.S = 4;
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: GQA N=4 K=2") {
  Spec s = small();
  s.N = 4;
  s.K = 2;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: MQA N=3 K=1 with Hv != H") {
  Spec s = small();
  s.N = 3;
  s.Hv = 6;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: padded batches") {
  Spec s = small();
  s.q_lens = {3, 5};
  s.k_lens = {6, 2};
  s.bias = true;
  check_finite_differences(s, 80);
}

TEST_CASE("reference/gradients: packed varlen") {
  Spec s = small();
  s.packed = true;
  s.q_lens = {3, 1, 4};
  s.k_lens = {2, 5, 4};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_finite_differences(s, 80);
}

TEST_CASE("reference/gradients: dropout (fixed seed, so the mask is fixed)") {
  Spec s = small();
  s.opt.dropout_p = 0.4;
  s.opt.dropout_seed = 17;
  s.bias = true;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: boolean mask") {
  Spec s = small();
  s.mask = true;
  s.mask_density = 0.5;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: heads-major strided views") {
  Spec s = small();
  s.heads_major = true;
  s.N = 4;
  s.K = 2;
  check_finite_differences(s);
}

TEST_CASE("reference/gradients: every option at once (padded)") {
  Spec s = small();
  s.heads_major = true;
  s.N = 4;
  s.K = 2;
  s.Hv = 3;
  s.q_lens = {4, 3};
  s.k_lens = {5, 3};
  s.opt.softcap = 2;
  s.opt.window_left = 2;
  s.opt.alignment = Alignment::bottom_right;
  s.opt.dropout_p = 0.25;
  s.opt.dropout_seed = 5;
  s.bias = s.bias_bcast_n = true;
  s.mask = true;
  s.mask_density = 0.8;
  s.alibi = 1;
  check_finite_differences(s, 64);
}
