// The reference backend against the independent fp64 oracle of tests/common, forward and
// backward, over BRIEF.md's shapes and every option. Tolerances: see check_against_oracle.
#include <doctest/doctest.h>

#include <random>

#include "common/oracle_checks.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
Spec shape(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
           std::int64_t H, std::int64_t Hv) {
  Spec s;
  s.B = B, s.T = T, s.S = S, s.N = N, s.K = K, s.H = H, s.Hv = Hv;
  return s;
}
} // namespace

TEST_CASE("reference/oracle: T=1 S=1") {
  check_against_oracle(shape(2, 1, 1, 2, 2, 8, 8));
}

TEST_CASE("reference/oracle: T=239 S=1") {
  check_against_oracle(shape(1, 239, 1, 2, 1, 8, 8));
}

TEST_CASE("reference/oracle: T=799 S=3 bottom_right causal (fully masked rows)") {
  Spec s = shape(1, 799, 3, 1, 1, 8, 8);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: T=113 S=203") {
  check_against_oracle(shape(1, 113, 203, 2, 1, 8, 8));
}

TEST_CASE("reference/oracle: T=1023 S=1024 causal") {
  Spec s = shape(1, 1023, 1024, 1, 1, 4, 4);
  s.opt.causal = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: decode T=1 S=300 bottom_right causal") {
  Spec s = shape(3, 1, 300, 4, 2, 16, 16);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: head dim 64") {
  check_against_oracle(shape(1, 9, 11, 2, 1, 64, 64));
}
TEST_CASE("reference/oracle: head dim 96") {
  check_against_oracle(shape(1, 9, 11, 2, 1, 96, 96));
}
TEST_CASE("reference/oracle: head dim 128") {
  check_against_oracle(shape(1, 9, 11, 2, 1, 128, 128));
}
TEST_CASE("reference/oracle: head dim 192") {
  check_against_oracle(shape(1, 9, 11, 2, 1, 192, 192));
}
TEST_CASE("reference/oracle: head dim 256") {
  check_against_oracle(shape(1, 9, 11, 2, 1, 256, 256));
}

TEST_CASE("reference/oracle: Hv != H") {
  check_against_oracle(shape(2, 7, 9, 2, 1, 16, 8));
  check_against_oracle(shape(2, 7, 9, 2, 2, 8, 24));
}

TEST_CASE("reference/oracle: causal in both alignments, T < S and T > S") {
  for (auto al : {Alignment::top_left, Alignment::bottom_right})
    for (auto [T, S] : {std::pair{6, 13}, std::pair{13, 6}, std::pair{8, 8}}) {
      Spec s = shape(2, T, S, 2, 1, 8, 8);
      s.opt.causal = true;
      s.opt.alignment = al;
      CAPTURE(T);
      CAPTURE(S);
      check_against_oracle(s);
    }
}

TEST_CASE("reference/oracle: random windows in both alignments") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> w(-1, 6), len(1, 14);
  for (int trial = 0; trial < 24; ++trial) {
    Spec s = shape(1, len(rng), len(rng), 2, 1, 8, 8);
    s.opt.window_left = w(rng);
    s.opt.window_right = w(rng);
    s.opt.alignment = trial % 2 ? Alignment::bottom_right : Alignment::top_left;
    s.seed = static_cast<std::uint64_t>(trial + 10);
    CAPTURE(trial);
    check_against_oracle(s);
  }
}

TEST_CASE("reference/oracle: causal with a left window") {
  Spec s = shape(2, 12, 12, 2, 2, 8, 8);
  s.opt.causal = true;
  s.opt.window_left = 3;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: softcap") {
  Spec s = shape(2, 9, 10, 2, 1, 8, 8);
  s.opt.softcap = 1.5;
  s.q_mult = 3;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: explicit scale") {
  Spec s = shape(2, 9, 10, 2, 1, 8, 8);
  s.opt.scale = 0.77;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: full bias [B, N, T, S] with dbias") {
  Spec s = shape(2, 7, 9, 2, 1, 8, 8);
  s.bias = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: bias broadcast over batch [1, N, T, S]") {
  Spec s = shape(3, 7, 9, 2, 1, 8, 8);
  s.bias = s.bias_bcast_b = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: bias broadcast over heads [B, 1, T, S]") {
  Spec s = shape(2, 7, 9, 3, 1, 8, 8);
  s.bias = s.bias_bcast_n = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: bias broadcast over both [1, 1, T, S], f32 bias") {
  Spec s = shape(2, 7, 9, 2, 2, 8, 8);
  s.bias = s.bias_bcast_b = s.bias_bcast_n = true;
  s.bias_dtype = DType::f32;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: boolean mask, including fully masked rows") {
  for (double density : {0.7, 0.15}) {
    Spec s = shape(2, 10, 6, 2, 1, 8, 8);
    s.mask = true;
    s.mask_density = density;
    CAPTURE(density);
    check_against_oracle(s);
  }
}

TEST_CASE("reference/oracle: boolean mask broadcast over batch and heads") {
  Spec s = shape(3, 10, 8, 2, 1, 8, 8);
  s.mask = s.mask_bcast_b = s.mask_bcast_n = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: ALiBi slopes [N]") {
  Spec s = shape(2, 9, 12, 4, 2, 8, 8);
  s.alibi = 1;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: ALiBi slopes [B, N], bottom_right, causal") {
  Spec s = shape(2, 5, 12, 4, 2, 8, 8);
  s.alibi = 2;
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: GQA N=6 K=2") {
  check_against_oracle(shape(2, 8, 9, 6, 2, 8, 8));
}
TEST_CASE("reference/oracle: MQA N=4 K=1") {
  check_against_oracle(shape(2, 8, 9, 4, 1, 8, 8));
}

TEST_CASE("reference/oracle: padded batches") {
  Spec s = shape(3, 9, 11, 2, 1, 8, 8);
  s.q_lens = {9, 4, 1};
  s.k_lens = {3, 11, 6};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  s.bias = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: padded query lengths only") {
  Spec s = shape(2, 9, 11, 2, 1, 8, 8);
  s.q_lens = {5, 9};
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: packed varlen") {
  Spec s = shape(0, 0, 0, 2, 1, 8, 8);
  s.packed = true;
  s.q_lens = {5, 1, 12, 7};
  s.k_lens = {6, 9, 12, 2};
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: packed varlen with GQA, bottom_right causal, ALiBi") {
  Spec s = shape(0, 0, 0, 4, 2, 8, 8);
  s.packed = true;
  s.q_lens = {5, 1, 12, 7};
  s.k_lens = {6, 9, 10, 2};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  s.alibi = 2;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: dropout") {
  Spec s = shape(2, 9, 11, 2, 1, 8, 8);
  s.opt.dropout_p = 0.3;
  s.opt.dropout_seed = 1234;
  s.opt.dropout_offset = 7;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: dropout with packed varlen and softcap") {
  Spec s = shape(0, 0, 0, 2, 2, 8, 8);
  s.packed = true;
  s.q_lens = {3, 8};
  s.k_lens = {7, 4};
  s.opt.dropout_p = 0.5;
  s.opt.dropout_seed = 99;
  s.opt.softcap = 2.0;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: heads-major strided views") {
  Spec s = shape(2, 7, 9, 4, 2, 8, 12);
  s.heads_major = true;
  s.bias = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: packed varlen in heads-major strides") {
  Spec s = shape(0, 0, 0, 2, 1, 8, 8);
  s.packed = s.heads_major = true;
  s.q_lens = {4, 6};
  s.k_lens = {5, 3};
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: outlier inputs") {
  Spec s = shape(2, 40, 50, 2, 1, 32, 32);
  s.outliers = true;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: scaled inputs q*5 k*3") {
  Spec s = shape(2, 20, 25, 2, 1, 16, 16);
  s.q_mult = 5;
  s.k_mult = 3;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: logits below -5e4") {
  // Every score near -6e4: exp() underflows unless the row max is subtracted. The shift makes
  // the scores' absolute rounding ~6e4 * 2^-52 ~ 1e-11, hence the looser 1e-10.
  Spec s = shape(2, 8, 9, 2, 1, 8, 8);
  s.bias = true;
  s.bias_shift = -6e4;
  check_against_oracle(s, true, 1e-10);
}

TEST_CASE("reference/oracle: huge score spread (scale 2e4)") {
  // Scores spread over ~1e5: probabilities are one-hot up to exp(-huge); checks no overflow.
  Spec s = shape(2, 8, 9, 2, 1, 8, 8);
  s.opt.scale = 2e4;
  check_against_oracle(s, true, 1e-10);
}

TEST_CASE("reference/oracle: every option at once (padded; bias and mask are not packed)") {
  Spec s = shape(3, 10, 10, 6, 2, 8, 12);
  s.heads_major = true;
  s.q_lens = {7, 2, 10};
  s.k_lens = {9, 5, 10};
  s.opt.window_left = 4;
  s.opt.window_right = 1;
  s.opt.alignment = Alignment::bottom_right;
  s.opt.softcap = 3;
  s.opt.dropout_p = 0.2;
  s.opt.dropout_seed = 3;
  s.bias = s.bias_bcast_b = true;
  s.mask = true;
  s.mask_density = 0.8;
  s.alibi = 1;
  check_against_oracle(s);
}

TEST_CASE("reference/oracle: without an LSE output") {
  Spec s = shape(2, 6, 7, 2, 1, 8, 8);
  s.lse = false;
  check_against_oracle(s);
}
