// The naive backend against the fp64 reference on every host execution space, across the
// options of docs/semantics.md. Tolerances: tolerance_for() in test_naive_helpers.hpp.
#include <doctest/doctest.h>

#include <limits>

#include "common/masked_rows_check.hpp"
#include "test_naive_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/layout: naive matches reference, batched fp32") {
  check_naive(spec_of(2, 16, 16, 4, 4, 32, 32));
}

TEST_CASE("semantics/dtypes: naive f64 accumulates in double") {
  check_naive(spec_of(2, 9, 13, 2, 2, 16, 16, DType::f64));
}

TEST_CASE("semantics/dtypes: naive f16 in and out, fp32 accumulation") {
  check_naive(spec_of(2, 12, 17, 4, 2, 64, 64, DType::f16));
}

TEST_CASE("semantics/dtypes: naive bf16 in and out, fp32 accumulation") {
  check_naive(spec_of(2, 12, 17, 4, 2, 64, 64, DType::bf16));
}

TEST_CASE("semantics/causal: naive top_left, T = S, T < S and T > S") {
  for (auto [T, S] : {std::pair{8, 8}, std::pair{6, 13}, std::pair{13, 6}}) {
    Spec s = spec_of(2, T, S, 2, 1, 16, 16);
    s.opt.causal = true;
    s.opt.alignment = Alignment::top_left;
    INFO("T=", T, " S=", S);
    check_naive(s);
  }
}

TEST_CASE("semantics/alignment: naive bottom_right causal, T < S (decode/chunked prefill)") {
  for (auto [T, S] : {std::pair{1, 37}, std::pair{5, 19}}) {
    Spec s = spec_of(2, T, S, 2, 2, 16, 16);
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    INFO("T=", T, " S=", S);
    check_naive(s);
  }
}

TEST_CASE("semantics/fully_masked_rows: naive bottom_right causal T > S gives 0 and -inf") {
  // Rows i < T - S see no key: out must be exactly 0 and lse -inf, never NaN.
  Spec s = spec_of(1, 11, 4, 2, 1, 8, 8);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_naive(s);
  for (naive::Products products : naive_products())
    check_fully_masked_rows_exact(*naive::make_naive_backend(products), s);
}

TEST_CASE("semantics/window: naive sliding windows in both alignments") {
  const std::pair<std::int64_t, std::int64_t> windows[] = {
      {2, 0}, {0, 3}, {4, 2}, {-1, 1}, {3, -1}};
  for (auto al : {Alignment::top_left, Alignment::bottom_right})
    for (auto [T, S] : {std::pair{9, 14}, std::pair{14, 9}})
      for (auto [l, r] : windows) {
        Spec s = spec_of(1, T, S, 2, 1, 8, 8);
        s.opt.window_left = l;
        s.opt.window_right = r;
        s.opt.alignment = al;
        INFO("alignment ", to_string(al), " T=", T, " S=", S, " window (", l, ", ", r, ")");
        check_naive(s);
      }
}

TEST_CASE("semantics/gqa: naive grouped-query and multi-query attention") {
  check_naive(spec_of(2, 7, 11, 8, 2, 16, 16)); // GQA: 4 query heads per KV head
  check_naive(spec_of(2, 7, 11, 8, 1, 16, 16)); // MQA
}

TEST_CASE("semantics/hv_ne_h: naive with value head dim != query head dim") {
  check_naive(spec_of(2, 7, 9, 2, 1, 32, 48));
  check_naive(spec_of(1, 5, 6, 4, 2, 24, 8));
}

TEST_CASE("semantics/scale: naive honours an explicit scale") {
  Spec s = spec_of(2, 6, 10, 2, 2, 16, 16);
  s.opt.scale = 0.37;
  check_naive(s);
}

TEST_CASE("semantics/softcap: naive applies c * tanh(s / c)") {
  Spec s = spec_of(2, 6, 10, 2, 2, 16, 16);
  s.opt.softcap = 1.5;
  s.q_mult = 3.0; // logits well beyond the cap so that tanh saturates
  check_naive(s);
}

TEST_CASE("semantics/bias_broadcast: naive bias of every broadcast shape and float dtype") {
  for (bool bb : {false, true})
    for (bool bn : {false, true})
      for (DType bt : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
        Spec s = spec_of(2, 5, 8, 3, 1, 8, 8);
        s.bias = true;
        s.bias_bcast_b = bb;
        s.bias_bcast_n = bn;
        s.bias_dtype = bt;
        INFO("bias [", bb ? "1" : "B", ", ", bn ? "1" : "N", ", T, S] ", to_string(bt));
        check_naive(s);
      }
}

TEST_CASE("semantics/bool_mask: naive boolean masks, broadcast, with fully masked rows") {
  for (bool bb : {false, true}) {
    Spec s = spec_of(2, 9, 6, 2, 1, 8, 8);
    s.mask = true;
    s.mask_bcast_b = bb;
    s.mask_density = 0.35; // at S = 6, ~7% of rows have no visible key
    s.seed = 5;
    check_naive(s);
  }
}

TEST_CASE("semantics/alibi: naive ALiBi slopes [N] and [B, N] in both alignments") {
  for (int alibi : {1, 2})
    for (auto al : {Alignment::top_left, Alignment::bottom_right}) {
      Spec s = spec_of(2, 6, 11, 4, 2, 8, 8);
      s.alibi = alibi;
      s.opt.alignment = al;
      s.opt.causal = alibi == 2;
      INFO("slopes rank ", alibi, " ", to_string(al));
      check_naive(s);
    }
}

TEST_CASE("semantics/order_of_operations: naive softcap, bias, ALiBi and masks together") {
  Spec s = spec_of(2, 10, 12, 4, 2, 16, 16);
  s.opt.softcap = 2.0;
  s.opt.causal = true;
  s.opt.window_left = 5;
  s.opt.alignment = Alignment::bottom_right;
  s.bias = true;
  s.bias_bcast_b = true;
  s.mask = true;
  s.mask_bcast_n = true;
  s.alibi = 1;
  check_naive(s);
}

TEST_CASE("semantics/padded: naive padded batches (seqlens_q, seqlens_k)") {
  Spec s = spec_of(3, 9, 12, 2, 1, 8, 8);
  s.q_lens = {9, 4, 1};
  s.k_lens = {12, 7, 3};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_naive(s);
}

TEST_CASE("semantics/lse: naive LSE is the natural-log row normaliser in fp32") {
  Spec s = spec_of(2, 13, 29, 2, 2, 32, 32);
  s.q_mult = 2.0;
  check_naive(s); // compares LSE with the fp64 reference at 1e-5
}

TEST_CASE("semantics/strides: naive on PyTorch's [B, N, T, H] storage (permuted strided views)") {
  for (DType t : {DType::f32, DType::f16}) {
    Spec s = spec_of(2, 7, 9, 4, 2, 16, 24, t);
    s.heads_major = true;
    s.opt.causal = true;
    check_naive(s);
  }
}

TEST_CASE("naive: BRIEF.md's non-tile shapes and decode") {
  for (auto [T, S] : {std::pair{1, 1}, std::pair{239, 1}, std::pair{113, 203}}) {
    Spec s = spec_of(1, T, S, 2, 1, 16, 16);
    INFO("T=", T, " S=", S);
    check_naive(s);
  }
  Spec decode = spec_of(3, 1, 300, 4, 2, 64, 64);
  decode.opt.causal = true;
  decode.opt.alignment = Alignment::bottom_right;
  check_naive(decode);
}

TEST_CASE("naive: head dims 64, 96, 128, 192, 256") {
  for (std::int64_t h : {64, 96, 128, 192, 256}) {
    INFO("H=", h);
    check_naive(spec_of(1, 9, 11, 2, 1, h, h));
  }
}

TEST_CASE("naive: scaled inputs (q x5, k x3)") {
  Spec s = spec_of(2, 16, 24, 2, 1, 64, 64);
  s.q_mult = 5.0;
  s.k_mult = 3.0;
  // Logits ~15x larger than unit inputs: the fp32 score error grows with |logit| and exp turns
  // it into relative output error of ~15 * 1e-6: allow 1e-4 more.
  check_naive(s, 1e-4);
}

TEST_CASE("naive: logits below -5e4 stay finite and normalised") {
  Spec low = spec_of(2, 6, 9, 2, 1, 16, 16);
  low.bias = true;
  low.bias_dtype = DType::f32;
  low.bias_shift = -6e4; // every logit below -5e4: the max subtraction must keep them usable
  // fp32 scores near -6e4 are spaced 2^-8 = 0.0039 apart, so the O(1) q.k part of each logit
  // is rounded by up to 0.002: softmax weights err by ~0.2% and outputs (|v| <~ 3) by up to
  // ~6e-3. Any backend accumulating in fp32 shares this; a wrong max shift gives NaN/0 instead.
  check_naive(low, 1e-2);
}

TEST_CASE("naive: outlier inputs N(0,1) + N(0,100) * Bernoulli(0.001)") {
  Spec s = spec_of(2, 32, 48, 2, 1, 64, 64);
  s.outliers = true;
  s.seed = 11;
  // An outlier in q or k gives logits of ~100: fp32 score error ~100 * 1e-6 per affected row,
  // turned into relative output error by exp: allow 1e-3 more.
  check_naive(s, 1e-3);
}

TEST_CASE("semantics/dtypes: naive f16 and bf16 with masks, GQA and strided views") {
  for (DType t : {DType::f16, DType::bf16}) {
    Spec s = spec_of(2, 9, 15, 4, 2, 32, 16, t);
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    s.heads_major = true;
    s.bias = true;
    s.bias_dtype = t;
    check_naive(s);
  }
}

TEST_CASE("semantics/strides: naive reads inputs broadcast with zero strides") {
  // k and v shared by both batches (stride 0 on B), as an expanded PyTorch tensor would be.
  Spec s = spec_of(2, 5, 7, 2, 1, 8, 8);
  Attn a(s);
  ForwardProblem p = a.forward_problem();
  p.k.stride[0] = 0;
  p.v.stride[0] = 0;
  const Dims d = validate(p);
  // Truth: the reference on the same strided problem, output in a separate f32 buffer
  // (reference accumulates in double: 2^-24 relative rounding, far below 1e-5).
  HostTensor ref_out(DType::f32, {s.B, s.T, s.N, s.Hv});
  ForwardProblem rp = p;
  rp.out = ref_out.view();
  rp.extras.lse = {};
  reference::forward(rp, d);
  HostSpaces spaces;
  for (naive::Products products : naive_products())
    for (const auto& [name, ctx] : spaces.contexts()) {
      INFO(name);
      poison(a.out.view);
      naive::make_naive_backend(products)->forward(p, d, ctx);
      CHECK(max_abs_diff(a.out_values(), ref_out.to_doubles()) <= 1e-5); // f32: tolerance_for
    }
}
