// The portable forward against the fp64 reference on every host execution context, across the
// options of docs/semantics.md, dtypes and BRIEF.md's shapes. Tolerances: check_portable() in
// test_portable_helpers.hpp (2x the same-precision naive error + a floor, where naive serves).
// Shapes are scaled down in B, N, H so that the reference stays fast; lengths cross the tile
// sizes (64 rows/keys for fp32, 32 for f64) where it matters.
#include <doctest/doctest.h>

#include <limits>
#include <utility>

#include "common/masked_rows_check.hpp"
#include "test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};
const std::pair<std::int64_t, std::int64_t> brief_shapes[] = {
    {1, 1}, {239, 1}, {799, 3}, {113, 203}};
} // namespace

TEST_CASE("semantics/layout: portable matches reference, batched, every dtype") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    check_portable(spec_of(2, 70, 75, 2, 2, 32, 32, t));
  }
}

TEST_CASE("semantics/dtypes: portable on BRIEF.md's non-tile shapes, every dtype") {
  for (DType t : all_dtypes)
    for (auto [T, S] : brief_shapes) {
      INFO(to_string(t), " T=", T, " S=", S);
      check_portable(spec_of(1, T, S, 2, 1, 16, 16, t));
    }
}

TEST_CASE("portable: (T, S) = (1023, 1024), causal, fp32") {
  Spec s = spec_of(1, 1023, 1024, 1, 1, 16, 16);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_portable(s);
}

// The host forward's fast path (96x96 tiles, 6x16 register blocks, the row max taken in the
// Q K^T product, the O rescale folded into P V) at the codelab's head dim over many tiles:
// 1000 = 10 x 96 + 40 leaves a partial last tile, and GQA shares each K/V tile between heads.
TEST_CASE("portable: head dim 64, T = S = 1000, GQA, causal and not, f32 and bf16") {
  for (DType t : {DType::f32, DType::bf16})
    for (bool causal : {false, true}) {
      Spec s = spec_of(1, 1000, 1000, 2, 1, 64, 64, t);
      s.opt.causal = causal;
      INFO(to_string(t), " causal=", causal);
      check_portable(s);
    }
}

TEST_CASE("semantics/causal: portable top_left with T = S, T < S, T > S, every dtype") {
  for (DType t : all_dtypes)
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}}) {
      Spec s = spec_of(1, T, S, 2, 1, 16, 16, t);
      s.opt.causal = true;
      INFO(to_string(t), " T=", T, " S=", S);
      check_portable(s);
    }
}

TEST_CASE("semantics/alignment: portable bottom_right causal, decode T = 1 and chunked prefill") {
  for (DType t : all_dtypes)
    for (auto [T, S] : {std::pair{1, 300}, std::pair{70, 200}}) {
      Spec s = spec_of(2, T, S, 2, 2, 64, 64, t);
      s.opt.causal = true;
      s.opt.alignment = Alignment::bottom_right;
      INFO(to_string(t), " T=", T, " S=", S);
      check_portable(s);
    }
}

TEST_CASE("semantics/fully_masked_rows: portable bottom_right causal T > S gives exactly 0, -inf") {
  for (DType t : all_dtypes) {
    Spec s = spec_of(1, 150, 20, 2, 1, 8, 8, t);
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    INFO(to_string(t));
    check_portable(s); // compares exact 0 / -inf rows too (max_abs_diff: inf only equals inf)
    check_fully_masked_rows_exact(portable_backend(), s);
  }
}

TEST_CASE("semantics/window: portable sliding windows in both alignments across tiles") {
  const std::pair<std::int64_t, std::int64_t> windows[] = {
      {5, 0}, {0, 70}, {100, 3}, {-1, 1}, {3, -1}};
  for (auto al : {Alignment::top_left, Alignment::bottom_right})
    for (auto [T, S] : {std::pair{150, 170}, std::pair{170, 90}})
      for (auto [l, r] : windows) {
        Spec s = spec_of(1, T, S, 1, 1, 8, 8);
        s.opt.window_left = l;
        s.opt.window_right = r;
        s.opt.alignment = al;
        INFO("alignment ", to_string(al), " T=", T, " S=", S, " window (", l, ", ", r, ")");
        check_portable(s);
      }
}

TEST_CASE("semantics/window: portable f64 windows (32-row tiles)") {
  Spec s = spec_of(2, 77, 101, 2, 1, 8, 8, DType::f64);
  s.opt.window_left = 9;
  s.opt.window_right = 4;
  s.opt.alignment = Alignment::bottom_right;
  check_portable(s);
}

TEST_CASE("semantics/gqa: portable grouped-query and multi-query attention") {
  check_portable(spec_of(2, 37, 71, 8, 2, 16, 16)); // GQA: 4 query heads per KV head
  check_portable(spec_of(2, 37, 71, 8, 1, 16, 16)); // MQA
  check_portable(spec_of(1, 37, 71, 6, 3, 16, 16, DType::bf16));
}

TEST_CASE("semantics/hv_ne_h: portable with value head dim != query head dim") {
  check_portable(spec_of(2, 33, 65, 2, 1, 32, 48));
  check_portable(spec_of(1, 20, 30, 4, 2, 24, 8));
  check_portable(spec_of(1, 20, 30, 2, 2, 5, 19, DType::f64));
}

TEST_CASE("portable: head dims 64, 96, 128, 192, 256") {
  for (std::int64_t h : {64, 96, 128, 192, 256}) {
    INFO("H=", h);
    check_portable(spec_of(1, 70, 66, 1, 1, h, h));
  }
}

TEST_CASE("semantics/scale: portable honours an explicit scale") {
  Spec s = spec_of(2, 6, 10, 2, 2, 16, 16);
  s.opt.scale = 0.37;
  check_portable(s);
}

TEST_CASE("semantics/softcap: portable applies c * tanh(s / c)") {
  for (DType t : all_dtypes) {
    Spec s = spec_of(2, 20, 70, 2, 2, 16, 16, t);
    s.opt.softcap = 1.5;
    s.q_mult = 3.0; // logits well beyond the cap so that tanh saturates
    INFO(to_string(t));
    check_portable(s);
  }
}

TEST_CASE("semantics/bias_broadcast: portable bias of every broadcast shape and float dtype") {
  for (bool bb : {false, true})
    for (bool bn : {false, true})
      for (DType bt : all_dtypes) {
        Spec s = spec_of(2, 9, 70, 3, 1, 8, 8);
        s.bias = true;
        s.bias_bcast_b = bb;
        s.bias_bcast_n = bn;
        s.bias_dtype = bt;
        INFO("bias [", bb ? "1" : "B", ", ", bn ? "1" : "N", ", T, S] ", to_string(bt));
        check_portable(s);
      }
}

TEST_CASE("semantics/bool_mask: portable boolean masks, broadcast, with fully masked rows") {
  for (bool bb : {false, true})
    for (DType t : {DType::f32, DType::f16}) {
      Spec s = spec_of(2, 9, 6, 2, 1, 8, 8, t);
      s.mask = true;
      s.mask_bcast_b = bb;
      s.mask_density = 0.35; // at S = 6, ~7% of rows have no visible key
      s.seed = 5;
      check_portable(s);
    }
}

TEST_CASE("semantics/alibi: portable ALiBi slopes [N] and [B, N] in both alignments") {
  for (int alibi : {1, 2})
    for (auto al : {Alignment::top_left, Alignment::bottom_right}) {
      Spec s = spec_of(2, 66, 71, 4, 2, 8, 8);
      s.alibi = alibi;
      s.opt.alignment = al;
      s.opt.causal = alibi == 2;
      INFO("slopes rank ", alibi, " ", to_string(al));
      check_portable(s);
    }
}

TEST_CASE("semantics/order_of_operations: portable softcap, bias, ALiBi and masks together") {
  for (DType t : all_dtypes) {
    Spec s = spec_of(2, 70, 80, 4, 2, 16, 16, t);
    s.opt.softcap = 2.0;
    s.opt.causal = true;
    s.opt.window_left = 40;
    s.opt.alignment = Alignment::bottom_right;
    s.bias = true;
    s.bias_bcast_b = true;
    s.mask = true;
    s.mask_bcast_n = true;
    s.alibi = 1;
    INFO(to_string(t));
    check_portable(s);
  }
}

TEST_CASE("semantics/padded: portable padded batches (seqlens_q, seqlens_k)") {
  for (DType t : {DType::f32, DType::f64}) {
    Spec s = spec_of(3, 140, 90, 2, 1, 8, 8, t);
    s.q_lens = {140, 65, 1};
    s.k_lens = {90, 7, 0};
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    INFO(to_string(t));
    check_portable(s);
  }
}

TEST_CASE("semantics/packed_varlen: portable packed sequences, every dtype") {
  // Naive cannot serve packed problems: absolute tolerance (forward_abs_tol).
  for (DType t : all_dtypes) {
    Spec s;
    s.dtype = t;
    s.packed = true;
    s.q_lens = {70, 1, 33, 0};
    s.k_lens = {65, 140, 33, 5};
    s.N = 4, s.K = 2, s.H = 16, s.Hv = 8;
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    s.alibi = 2;
    INFO(to_string(t));
    check_portable(s);
  }
}

TEST_CASE("semantics/lse: portable LSE is the natural-log row normaliser in fp32") {
  Spec s = spec_of(2, 73, 129, 2, 2, 32, 32);
  s.q_mult = 2.0;
  check_portable(s);
}

TEST_CASE("semantics/strides: portable on PyTorch's [B, N, T, H] storage (permuted views)") {
  for (DType t : {DType::f32, DType::f16, DType::f64}) {
    Spec s = spec_of(2, 67, 69, 4, 2, 16, 24, t);
    s.heads_major = true;
    s.opt.causal = true;
    INFO(to_string(t));
    check_portable(s);
  }
}

TEST_CASE("semantics/dropout: portable keeps exactly the reference's Philox mask") {
  // f64: the only difference from the reference is summation order (~1e-15), while one
  // different keep decision changes an output by >= p_keep_scale * min weight * |v| >> 1e-9.
  for (auto [T, S] : {std::pair{70, 75}, std::pair{5, 130}}) {
    Spec s = spec_of(2, T, S, 2, 1, 8, 8, DType::f64);
    s.opt.dropout_p = 0.3;
    s.opt.dropout_seed = 0x1234567890abcdefull;
    s.opt.dropout_offset = 7;
    s.opt.causal = true;
    Attn a(s);
    const Truth truth = fp64_truth(a);
    const ForwardErrors e = run_portable_forward(a, ExecContext{}, truth);
    CHECK(e.out <= 1e-12);
    CHECK(e.lse <= 1e-6); // LSE is stored in f32 and ignores dropout
  }
  Spec f = spec_of(1, 40, 90, 2, 2, 16, 16);
  f.opt.dropout_p = 0.1;
  f.opt.dropout_seed = 3;
  check_portable(f);
}

TEST_CASE("portable: scaled inputs (q x5, k x3)") {
  Spec s = spec_of(2, 66, 80, 2, 1, 64, 64);
  s.q_mult = 5.0;
  s.k_mult = 3.0;
  check_portable(s); // 2x naive's error: naive sees the same amplified fp32 score error
}

TEST_CASE("portable: logits below -5e4 stay finite and normalised") {
  Spec low = spec_of(2, 6, 70, 2, 1, 16, 16);
  low.bias = true;
  low.bias_dtype = DType::f32;
  low.bias_shift = -6e4;
  check_portable(low); // naive's error (fp32 spacing of -6e4 is 2^-8) sets the bar
}

TEST_CASE("portable: outlier inputs N(0,1) + N(0,100) * Bernoulli(0.001)") {
  for (DType t : {DType::f32, DType::bf16}) {
    Spec s = spec_of(2, 96, 120, 2, 1, 64, 64, t);
    s.outliers = true;
    s.seed = 11;
    check_portable(s);
  }
}
