// Semantics rules layout, strides, packed_varlen, padded, gqa, hv_ne_h (docs/semantics.md),
// checked on the reference backend. Unless stated otherwise, comparisons are between two f64
// reference runs that perform the same arithmetic in a different arrangement, so they agree
// to a few ulps: 1e-13 (relative to max(1, |x|)) leaves headroom and catches any indexing error,
// which changes values at O(1e-1).
#include <doctest/doctest.h>

#include <cmath>

#include "common/oracle_attention.hpp"
#include "common/reference_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr double tight = 1e-13;

// Packed [total, heads, dim] <-> padded [B, L, heads, dim]; padded slots past a length get
// `fill` (a value that must not matter).
std::vector<double> packed_to_padded(const std::vector<double>& p,
                                     const std::vector<std::int64_t>& lens, std::int64_t L,
                                     std::int64_t heads, std::int64_t dim, double fill) {
  const auto B = static_cast<std::int64_t>(lens.size());
  std::vector<double> r(static_cast<std::size_t>(B * L * heads * dim), fill);
  std::int64_t start = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t t = 0; t < lens[static_cast<std::size_t>(b)]; ++t)
      for (std::int64_t e = 0; e < heads * dim; ++e)
        r[static_cast<std::size_t>((b * L + t) * heads * dim + e)] =
            p[static_cast<std::size_t>((start + t) * heads * dim + e)];
    start += lens[static_cast<std::size_t>(b)];
  }
  return r;
}

// The valid tokens of sequence b of a packed buffer.
std::vector<double> slice_tokens(const std::vector<double>& p, std::int64_t start, std::int64_t len,
                                 std::int64_t row) {
  return {p.begin() + start * row, p.begin() + (start + len) * row};
}
} // namespace

// ---------------------------------------------------------------------------------- layout

TEST_CASE(
    "semantics/layout: q is [B, T, N, H]: changing q[b, i, n, :] changes only out[b, i, n, :]") {
  Attn a(spec_of(2, 4, 5, 3, 3, 8, 6));
  a.forward();
  const std::vector<double> before = a.out_values();
  std::vector<double> q = read_logical(a.q.view);
  for (std::int64_t h = 0; h < 8; ++h)
    q[idx4(a.q.view, 1, 2, 1, h)] += 0.5;
  write_logical(a.q.view, q);
  a.forward();
  const std::vector<double> after = a.out_values();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t n = 0; n < 3; ++n) {
        double d = 0;
        for (std::int64_t f = 0; f < 6; ++f)
          d = std::max(d, std::abs(after[idx4(a.out.view, b, i, n, f)] -
                                   before[idx4(a.out.view, b, i, n, f)]));
        CAPTURE(b);
        CAPTURE(i);
        CAPTURE(n);
        if (b == 1 && i == 2 && n == 1)
          CHECK(d > 1e-3);
        else
          CHECK(d == 0.0);
      }
}

TEST_CASE("semantics/layout: k, v are [B, S, K, H]: permuting the keys with their values leaves "
          "out unchanged") {
  Attn a(spec_of(2, 4, 6, 2, 2, 8, 8));
  a.forward();
  const std::vector<double> before = a.out_values();
  // Reverse the key order of batch 1 in both k and v.
  for (Tensor t : {a.k.view, a.v.view}) {
    std::vector<double> x = read_logical(t), y = x;
    for (std::int64_t j = 0; j < 6; ++j)
      for (std::int64_t g = 0; g < 2; ++g)
        for (std::int64_t f = 0; f < 8; ++f)
          y[idx4(t, 1, j, g, f)] = x[idx4(t, 1, 5 - j, g, f)];
    write_logical(t, y);
  }
  a.forward();
  CHECK(rel_err(a.out_values(), before) <= tight);
}

TEST_CASE("semantics/layout: lse is [B, N, T] and is the log-sum-exp of row (b, i) of head n") {
  Spec s = spec_of(2, 3, 5, 3, 1, 4, 4);
  s.opt.scale = 0.5;
  Attn a(s);
  a.forward();
  const std::vector<double> q = read_logical(a.q.view), k = read_logical(a.k.view);
  const std::vector<double> lse = a.lse_values();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t n = 0; n < 3; ++n)
      for (std::int64_t i = 0; i < 3; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < 5; ++j) {
          double dot = 0;
          for (std::int64_t h = 0; h < 4; ++h)
            dot += q[idx4(a.q.view, b, i, n, h)] * k[idx4(a.k.view, b, j, 0, h)];
          sum += std::exp(0.5 * dot);
        }
        // lse is f32: 2^-24 relative rounding.
        CHECK(std::abs(lse[static_cast<std::size_t>((b * 3 + n) * 3 + i)] - std::log(sum)) <=
              1e-6 * std::max(1.0, std::abs(std::log(sum))));
      }
}

// --------------------------------------------------------------------------------- strides

TEST_CASE("semantics/strides: a [B,N,T,H] strided view gives the same result") {
  // Same data, different storage: the reference does identical arithmetic, so exact equality.
  Spec s = spec_of(2, 5, 7, 4, 2, 8, 6);
  s.opt.causal = true;
  s.bias = true;
  Attn contiguous(s);
  s.heads_major = true;
  Attn strided(s);
  CHECK(strided.q.view.stride[1] != contiguous.q.view.stride[1]);
  for (auto [x, y] :
       {std::pair{&contiguous.q, &strided.q}, std::pair{&contiguous.k, &strided.k},
        std::pair{&contiguous.v, &strided.v}, std::pair{&contiguous.dout, &strided.dout}})
    CHECK(max_abs_diff(read_logical(x->view), read_logical(y->view)) == 0.0);
  for (Attn* a : {&contiguous, &strided}) {
    a->forward();
    a->backward();
  }
  CHECK(max_abs_diff(strided.out_values(), contiguous.out_values()) == 0.0);
  CHECK(max_abs_diff(strided.lse_values(), contiguous.lse_values()) == 0.0);
  CHECK(max_abs_diff(read_logical(strided.dq.view), read_logical(contiguous.dq.view)) == 0.0);
  CHECK(max_abs_diff(read_logical(strided.dk.view), read_logical(contiguous.dk.view)) == 0.0);
  CHECK(max_abs_diff(read_logical(strided.dv.view), read_logical(contiguous.dv.view)) == 0.0);
  CHECK(all_finite(strided.out_values()));
}

TEST_CASE("semantics/strides: padded row strides: results agree and the gaps are never written") {
  Spec s = spec_of(2, 4, 5, 2, 1, 6, 6);
  Attn dense(s);
  dense.forward();
  dense.backward(false);
  // Copies of every tensor in storage with 3 unused elements after each head-dim row.
  auto gapped = [](const Tensor& src, std::vector<double>& store) {
    Tensor t = src;
    const std::int64_t row = t.extent[3] + 3;
    t.stride = {t.extent[1] * t.extent[2] * row, t.extent[2] * row, row, 1};
    store.assign(static_cast<std::size_t>(t.extent[0] * t.stride[0]), 12345.0);
    t.data = store.data();
    t.dtype = DType::f64;
    return t;
  };
  std::vector<double> sq, sk, sv, so, sd, sdq, sdk, sdv;
  ForwardProblem f = dense.forward_problem();
  f.q = gapped(f.q, sq);
  f.k = gapped(f.k, sk);
  f.v = gapped(f.v, sv);
  f.out = gapped(f.out, so);
  write_logical(f.q, read_logical(dense.q.view));
  write_logical(f.k, read_logical(dense.k.view));
  write_logical(f.v, read_logical(dense.v.view));
  poison(f.out);
  HostTensor lse(DType::f32, {2, 2, 4});
  f.extras.lse = lse.view();
  reference::forward(f, dense.dims);
  CHECK(max_abs_diff(read_logical(f.out), dense.out_values()) == 0.0);
  BackwardProblem bp;
  bp.forward = f;
  bp.dout = gapped(dense.dout.view, sd);
  write_logical(bp.dout, read_logical(dense.dout.view));
  bp.dq = gapped(dense.dq.view, sdq);
  bp.dk = gapped(dense.dk.view, sdk);
  bp.dv = gapped(dense.dv.view, sdv);
  reference::backward(bp, dense.dims);
  CHECK(max_abs_diff(read_logical(bp.dq), read_logical(dense.dq.view)) == 0.0);
  CHECK(max_abs_diff(read_logical(bp.dk), read_logical(dense.dk.view)) == 0.0);
  CHECK(max_abs_diff(read_logical(bp.dv), read_logical(dense.dv.view)) == 0.0);
  // The 3 gap elements after every row still hold the sentinel.
  for (const std::vector<double>* st : {&so, &sdq, &sdk, &sdv})
    for (std::size_t e = 0; e < st->size(); ++e)
      if (static_cast<std::int64_t>(e % 9) >= 6)
        CHECK((*st)[e] == 12345.0);
}

TEST_CASE("semantics/strides: packed varlen in heads-major strides equals contiguous") {
  Spec s = spec_of(0, 0, 0, 4, 2, 8, 8);
  s.packed = true;
  s.q_lens = {3, 6, 2};
  s.k_lens = {5, 4, 7};
  s.opt.causal = true;
  Attn contiguous(s);
  s.heads_major = true;
  Attn strided(s);
  contiguous.forward();
  strided.forward();
  CHECK(max_abs_diff(strided.out_values(), contiguous.out_values()) == 0.0);
  CHECK(max_abs_diff(strided.lse_values(), contiguous.lse_values()) == 0.0);
  CHECK(all_finite(strided.out_values()));
}

// --------------------------------------------------------------------------- packed_varlen

TEST_CASE("semantics/packed_varlen: equals padded and a loop over sequences") {
  Spec ps = spec_of(0, 0, 0, 4, 2, 8, 6);
  ps.packed = true;
  ps.q_lens = {5, 1, 7};
  ps.k_lens = {6, 8, 3};
  ps.opt.causal = true;
  ps.opt.alignment = Alignment::bottom_right;
  ps.alibi = 2;
  Attn packed(ps);
  packed.forward();
  packed.backward();
  const std::int64_t T = 7, S = 8, N = 4, K = 2, H = 8, Hv = 6;

  // Padded: the same tokens in a [B, T|S, heads, dim] batch with seqlens; padding is junk.
  Spec ds = ps;
  ds.packed = false;
  ds.B = 3, ds.T = T, ds.S = S;
  Attn padded(ds);
  write_logical(padded.q.view,
                packed_to_padded(read_logical(packed.q.view), ps.q_lens, T, N, H, 7.0));
  write_logical(padded.k.view,
                packed_to_padded(read_logical(packed.k.view), ps.k_lens, S, K, H, 7.0));
  write_logical(padded.v.view,
                packed_to_padded(read_logical(packed.v.view), ps.k_lens, S, K, Hv, 7.0));
  write_logical(padded.dout.view,
                packed_to_padded(read_logical(packed.dout.view), ps.q_lens, T, N, Hv, 7.0));
  write_logical(padded.slopes.view(), packed.slopes.to_doubles());
  padded.forward();
  padded.backward();
  CHECK(rel_err(padded.out_values(),
                packed_to_padded(packed.out_values(), ps.q_lens, T, N, Hv, 0.0)) <= tight);
  CHECK(rel_err(read_logical(padded.dq.view),
                packed_to_padded(read_logical(packed.dq.view), ps.q_lens, T, N, H, 0.0)) <= tight);
  CHECK(rel_err(read_logical(padded.dk.view),
                packed_to_padded(read_logical(packed.dk.view), ps.k_lens, S, K, H, 0.0)) <= tight);
  CHECK(rel_err(read_logical(padded.dv.view),
                packed_to_padded(read_logical(packed.dv.view), ps.k_lens, S, K, Hv, 0.0)) <= tight);

  // One sequence at a time (slopes [B, N] -> that sequence's row).
  std::int64_t qs = 0, ks = 0;
  const std::vector<double> lse = packed.lse_values(), slopes = packed.slopes.to_doubles();
  for (std::size_t b = 0; b < 3; ++b) {
    const std::int64_t ql = ps.q_lens[b], kl = ps.k_lens[b];
    Spec one = ps;
    one.packed = false;
    one.q_lens.clear();
    one.k_lens.clear();
    one.B = 1, one.T = ql, one.S = kl;
    Attn single(one);
    write_logical(single.q.view, slice_tokens(read_logical(packed.q.view), qs, ql, N * H));
    write_logical(single.k.view, slice_tokens(read_logical(packed.k.view), ks, kl, K * H));
    write_logical(single.v.view, slice_tokens(read_logical(packed.v.view), ks, kl, K * Hv));
    write_logical(single.dout.view, slice_tokens(read_logical(packed.dout.view), qs, ql, N * Hv));
    write_logical(single.slopes.view(), slice_tokens(slopes, static_cast<std::int64_t>(b), 1, N));
    single.forward();
    single.backward();
    CAPTURE(b);
    CHECK(rel_err(single.out_values(), slice_tokens(packed.out_values(), qs, ql, N * Hv)) <= tight);
    CHECK(rel_err(read_logical(single.dk.view),
                  slice_tokens(read_logical(packed.dk.view), ks, kl, K * H)) <= tight);
    const std::vector<double> single_lse = single.lse_values();
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < ql; ++i)
        CHECK(single_lse[static_cast<std::size_t>(n * ql + i)] ==
              lse[static_cast<std::size_t>(n * packed.lse.view().extent[1] + qs + i)]);
    qs += ql;
    ks += kl;
  }
}

TEST_CASE("semantics/packed_varlen: positions count from each sequence's start") {
  // Top-left causal: the first token of every sequence sees exactly one key, its sequence's
  // first, so its output is that key's value row.
  Spec s = spec_of(0, 0, 0, 2, 1, 4, 4);
  s.packed = true;
  s.q_lens = {3, 4, 2};
  s.k_lens = {5, 2, 3};
  s.opt.causal = true;
  Attn a(s);
  a.forward();
  const std::vector<double> out = a.out_values(), v = read_logical(a.v.view);
  const std::int64_t q_first[] = {0, 3, 7}, k_first[] = {0, 5, 7};
  for (int b = 0; b < 3; ++b)
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t f = 0; f < 4; ++f)
        CHECK(out[static_cast<std::size_t>((q_first[b] * 2 + n) * 4 + f)] ==
              doctest::Approx(v[static_cast<std::size_t>(k_first[b] * 4 + f)]).epsilon(1e-14));
}

TEST_CASE("semantics/packed_varlen: lse is [N, total_q]") {
  Spec s = spec_of(0, 0, 0, 3, 1, 4, 4);
  s.packed = true;
  s.q_lens = {2, 3};
  s.k_lens = {1, 4};
  Attn a(s);
  a.forward();
  CHECK(a.lse.view().rank == 2);
  CHECK(a.lse.view().extent[0] == 3);
  CHECK(a.lse.view().extent[1] == 5);
  const OracleResult o = oracle(a);
  CHECK(rel_err(a.lse_values(), o.lse) <= 1e-6); // f32 storage
  // Sequence 0 has a single key: lse = its (scaled) score, so rows 0-1 of head n are finite.
  CHECK(all_finite(a.lse_values()));
}

// ---------------------------------------------------------------------------------- padded

TEST_CASE("semantics/padded: rows past seqlens_q give out 0, lse -inf and zero dq") {
  Spec s = spec_of(2, 6, 5, 2, 1, 4, 4);
  s.q_lens = {2, 6};
  Attn a(s);
  a.forward();
  a.backward();
  const std::vector<double> out = a.out_values(), lse = a.lse_values(),
                            dq = read_logical(a.dq.view);
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t n = 0; n < 2; ++n) {
      const bool padded_row = i >= 2;
      CAPTURE(i);
      CHECK((lse[static_cast<std::size_t>(n * 6 + i)] == -INFINITY) == padded_row);
      for (std::int64_t f = 0; f < 4; ++f) {
        CHECK((out[idx4(a.out.view, 0, i, n, f)] == 0.0) == padded_row);
        CHECK((dq[idx4(a.dq.view, 0, i, n, f)] == 0.0) == padded_row);
      }
    }
  CHECK(all_finite(out));
}

TEST_CASE("semantics/padded: keys past seqlens_k are ignored and get zero dk, dv") {
  Spec s = spec_of(2, 4, 7, 2, 1, 4, 4);
  s.k_lens = {3, 7};
  Attn a(s);
  a.forward();
  a.backward();
  const std::vector<double> out = a.out_values(), dk = read_logical(a.dk.view),
                            dv = read_logical(a.dv.view);
  for (std::int64_t j = 0; j < 7; ++j)
    for (std::int64_t f = 0; f < 4; ++f) {
      CAPTURE(j);
      CHECK((dk[idx4(a.dk.view, 0, j, 0, f)] == 0.0) == (j >= 3));
      CHECK((dv[idx4(a.dv.view, 0, j, 0, f)] == 0.0) == (j >= 3));
    }
  // Scribbling over batch 0's padding keys changes nothing.
  for (Tensor t : {a.k.view, a.v.view}) {
    std::vector<double> x = read_logical(t);
    for (std::int64_t j = 3; j < 7; ++j)
      for (std::int64_t f = 0; f < 4; ++f)
        x[idx4(t, 0, j, 0, f)] = 1e3;
    write_logical(t, x);
  }
  a.forward();
  CHECK(max_abs_diff(a.out_values(), out) == 0.0);
}

TEST_CASE("semantics/padded: each batch entry equals the unpadded problem of its lengths") {
  Spec s = spec_of(2, 6, 7, 2, 2, 4, 4);
  s.q_lens = {4, 6};
  s.k_lens = {7, 2};
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  Attn a(s);
  a.forward();
  const std::vector<double> out = a.out_values();
  for (std::int64_t b = 0; b < 2; ++b) {
    const std::int64_t ql = s.q_lens[static_cast<std::size_t>(b)],
                       kl = s.k_lens[static_cast<std::size_t>(b)];
    Spec one = spec_of(1, ql, kl, 2, 2, 4, 4);
    one.opt = s.opt;
    Attn single(one);
    auto copy = [&](const Tensor& from, const Tensor& to, std::int64_t len) {
      std::vector<double> x = read_logical(from), y(static_cast<std::size_t>(to.numel()));
      for (std::int64_t t = 0; t < len; ++t)
        for (std::int64_t h = 0; h < to.extent[2]; ++h)
          for (std::int64_t f = 0; f < to.extent[3]; ++f)
            y[idx4(to, 0, t, h, f)] = x[idx4(from, b, t, h, f)];
      write_logical(to, y);
    };
    copy(a.q.view, single.q.view, ql);
    copy(a.k.view, single.k.view, kl);
    copy(a.v.view, single.v.view, kl);
    single.forward();
    const std::vector<double> o1 = single.out_values();
    for (std::int64_t i = 0; i < ql; ++i)
      for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t f = 0; f < 4; ++f)
          CHECK(std::abs(o1[idx4(single.out.view, 0, i, n, f)] -
                         out[idx4(a.out.view, b, i, n, f)]) <= tight);
  }
}

// ------------------------------------------------------------------------------------- gqa

namespace {
// Runs spec (K < N) and the same problem with each KV head repeated N/K times (K = N).
void gqa_vs_repeated(Spec s) {
  Attn g(s);
  g.forward();
  g.backward();
  Spec ms = s;
  ms.K = s.N;
  Attn m(ms);
  const std::int64_t rep = s.N / s.K;
  auto repeat = [&](const Tensor& from, const Tensor& to) {
    std::vector<double> x = read_logical(from), y(static_cast<std::size_t>(to.numel()));
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t j = 0; j < s.S; ++j)
        for (std::int64_t n = 0; n < s.N; ++n)
          for (std::int64_t f = 0; f < to.extent[3]; ++f)
            y[idx4(to, b, j, n, f)] = x[idx4(from, b, j, n / rep, f)];
    write_logical(to, y);
  };
  repeat(g.k.view, m.k.view);
  repeat(g.v.view, m.v.view);
  write_logical(m.q.view, read_logical(g.q.view));
  write_logical(m.dout.view, read_logical(g.dout.view));
  m.forward();
  m.backward();
  CHECK(rel_err(g.out_values(), m.out_values()) <= tight);
  CHECK(rel_err(g.lse_values(), m.lse_values()) <= tight);
  CHECK(rel_err(read_logical(g.dq.view), read_logical(m.dq.view)) <= tight);
  // dk, dv of a shared head = sum of the repeated heads' gradients.
  for (auto [gt, mt] : {std::pair{g.dk.view, m.dk.view}, std::pair{g.dv.view, m.dv.view}}) {
    const std::vector<double> x = read_logical(gt), y = read_logical(mt);
    std::vector<double> summed(x.size(), 0.0);
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t j = 0; j < s.S; ++j)
        for (std::int64_t n = 0; n < s.N; ++n)
          for (std::int64_t f = 0; f < gt.extent[3]; ++f)
            summed[idx4(gt, b, j, n / rep, f)] += y[idx4(mt, b, j, n, f)];
    CHECK(rel_err(x, summed) <= tight);
    CHECK(all_finite(x));
  }
}
} // namespace

TEST_CASE("semantics/gqa: equals repeating KV heads (N=6, K=2), gradients summed") {
  gqa_vs_repeated(spec_of(2, 5, 6, 6, 2, 8, 4));
}

TEST_CASE("semantics/gqa: MQA (K=1) equals repeating the single KV head") {
  Spec s = spec_of(2, 5, 6, 4, 1, 8, 8);
  s.opt.causal = true;
  gqa_vs_repeated(s);
}

TEST_CASE("semantics/gqa: query head n reads KV head n / (N/K)") {
  // Zeroing KV head 1 (values) must change exactly query heads 2 and 3 of N=4, K=2.
  Attn a(spec_of(1, 3, 4, 4, 2, 4, 4));
  a.forward();
  const std::vector<double> before = a.out_values();
  std::vector<double> v = read_logical(a.v.view);
  for (std::int64_t j = 0; j < 4; ++j)
    for (std::int64_t f = 0; f < 4; ++f)
      v[idx4(a.v.view, 0, j, 1, f)] += 1.0;
  write_logical(a.v.view, v);
  a.forward();
  const std::vector<double> after = a.out_values();
  for (std::int64_t n = 0; n < 4; ++n) {
    double d = 0;
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t f = 0; f < 4; ++f)
        d = std::max(d, std::abs(after[idx4(a.out.view, 0, i, n, f)] -
                                 before[idx4(a.out.view, 0, i, n, f)]));
    CAPTURE(n);
    // Adding 1 to every value row shifts the output by exactly 1 (weights sum to 1).
    CHECK(d == doctest::Approx(n >= 2 ? 1.0 : 0.0).epsilon(1e-12));
  }
}

// --------------------------------------------------------------------------------- hv_ne_h

TEST_CASE("semantics/hv_ne_h: out has Hv columns, each the weights applied to that v column") {
  for (std::int64_t Hv : {3, 20}) {
    Spec s = spec_of(2, 4, 5, 2, 1, 8, Hv);
    s.opt.causal = true;
    Attn a(s);
    a.forward();
    const std::vector<double> out = a.out_values();
    CHECK(a.out.view.extent[3] == Hv);
    // Column c alone (Hv = 1) must give column c of the full output.
    for (std::int64_t c = 0; c < Hv; c += 2) {
      Spec one = s;
      one.Hv = 1;
      Attn col(one);
      write_logical(col.q.view, read_logical(a.q.view));
      write_logical(col.k.view, read_logical(a.k.view));
      std::vector<double> v = read_logical(a.v.view),
                          vc(static_cast<std::size_t>(col.v.view.numel()));
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t j = 0; j < 5; ++j)
          vc[idx4(col.v.view, b, j, 0, 0)] = v[idx4(a.v.view, b, j, 0, c)];
      write_logical(col.v.view, vc);
      col.forward();
      const std::vector<double> oc = col.out_values();
      for (std::int64_t b = 0; b < 2; ++b)
        for (std::int64_t i = 0; i < 4; ++i)
          for (std::int64_t n = 0; n < 2; ++n)
            CHECK(std::abs(oc[idx4(col.out.view, b, i, n, 0)] -
                           out[idx4(a.out.view, b, i, n, c)]) <= tight);
    }
  }
}

TEST_CASE("semantics/hv_ne_h: dq and lse do not depend on Hv beyond v's values") {
  // lse uses q and k only: two problems with the same q, k and different Hv agree exactly.
  Spec s = spec_of(2, 4, 5, 2, 1, 8, 3);
  Attn a(s);
  s.Hv = 11;
  Attn b(s);
  write_logical(b.q.view, read_logical(a.q.view));
  write_logical(b.k.view, read_logical(a.k.view));
  a.forward();
  b.forward();
  CHECK(max_abs_diff(a.lse_values(), b.lse_values()) == 0.0);
  CHECK(b.out.view.extent[3] == 11);
  CHECK(all_finite(b.out_values()));
}
