// Semantics rules scale, order_of_operations, softcap, bias_broadcast, bool_mask, alibi, lse
// (docs/semantics.md) on the reference backend. Worked examples are checked to the digits the
// docs print (5e-6); f64-vs-f64 rearrangements to 1e-13 (a few ulps, see
// test_semantics_layout.cpp); f32 LSE to 1e-6 relative (2^-24 rounding).
#include <doctest/doctest.h>

#include <cmath>

#include "common/oracle_attention.hpp"
#include "common/reference_helpers.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr double tight = 1e-13;

// docs/semantics.md's worked example: H = 2, q = [1, 0], k = [[1, 0], [0, 1]],
// v = [[1, 2], [3, 4]].
void load_worked_example(Attn& a) {
  write_logical(a.q.view, {1, 0});
  write_logical(a.k.view, {1, 0, 0, 1});
  write_logical(a.v.view, {1, 2, 3, 4});
}

// Copies q, k, v, dout (and slopes, bias when both have them) from a to b.
void copy_inputs(const Attn& a, Attn& b) {
  write_logical(b.q.view, read_logical(a.q.view));
  write_logical(b.k.view, read_logical(a.k.view));
  write_logical(b.v.view, read_logical(a.v.view));
  write_logical(b.dout.view, read_logical(a.dout.view));
}
} // namespace

// ----------------------------------------------------------------------------------- scale

TEST_CASE("semantics/scale: default is 1/sqrt(H) (validate resolves it; worked example)") {
  Attn a(spec_of(1, 1, 2, 1, 1, 2, 2));
  load_worked_example(a);
  const ForwardProblem p = a.forward_problem();
  const Dims d = validate(p);
  CHECK(d.scale == doctest::Approx(1 / std::sqrt(2.0)).epsilon(1e-15));
  poison(a.out.view);
  reference::forward(p, d);
  const std::vector<double> out = a.out_values();
  CHECK(out[0] == doctest::Approx(1.66048).epsilon(5e-6));
  CHECK(out[1] == doctest::Approx(2.66048).epsilon(5e-6));
}

TEST_CASE("semantics/scale: default 1/sqrt(H) holds for H = 64 through validate") {
  Spec s = spec_of(2, 3, 4, 2, 1, 64, 8);
  Attn a(s);
  const Dims d = validate(a.forward_problem());
  CHECK(d.scale == 0.125);
  a.forward(); // the fixture resolves 1/sqrt(64) the same way
  Spec explicit_scale = s;
  explicit_scale.opt.scale = 0.125;
  Attn b(explicit_scale);
  b.forward();
  CHECK(max_abs_diff(a.out_values(), b.out_values()) == 0.0);
}

TEST_CASE("semantics/scale: scale multiplies q·k: scale c equals scale 1 on c·q") {
  Spec s = spec_of(2, 4, 5, 2, 1, 8, 8);
  s.opt.scale = 0.37;
  Attn a(s);
  s.opt.scale = 1.0;
  Attn b(s);
  copy_inputs(a, b);
  std::vector<double> q = read_logical(a.q.view);
  for (double& x : q)
    x *= 0.37;
  write_logical(b.q.view, q);
  a.forward();
  b.forward();
  CHECK(rel_err(a.out_values(), b.out_values()) <= tight);
  // A different scale must change the result (the option is not ignored).
  Spec c = s;
  c.opt.scale = 0.2;
  Attn other(c);
  copy_inputs(a, other);
  other.forward();
  CHECK(max_abs_diff(other.out_values(), a.out_values()) > 1e-3);
}

// ----------------------------------------------------------------------- order_of_operations

TEST_CASE("semantics/order_of_operations: softcap before bias") {
  // Softcap c = 1 bounds q·k's contribution to [-1, 1]; a bias of +100 on key 0 is added after
  // it, so key 0 takes (all but e^-98 of) the weight. Were the bias capped too, key 0's score
  // would be at most 1 and other keys would keep visible weight.
  Spec s = spec_of(1, 3, 4, 1, 1, 4, 4);
  s.opt.softcap = 1.0;
  s.bias = true;
  Attn a(s);
  std::vector<double> bias(12, 0.0);
  for (int i = 0; i < 3; ++i)
    bias[static_cast<std::size_t>(i * 4)] = 100.0;
  write_logical(a.bias.view(), bias);
  a.forward();
  const std::vector<double> out = a.out_values(), v = read_logical(a.v.view);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t f = 0; f < 4; ++f)
      CHECK(out[static_cast<std::size_t>(i * 4 + f)] ==
            doctest::Approx(v[static_cast<std::size_t>(f)]).epsilon(1e-12));
  // lse = capped score of key 0 + 100 + log(1 + tiny): above 99, i.e. the bias was not capped.
  for (double l : a.lse_values())
    CHECK(l > 99.0);
}

TEST_CASE("semantics/order_of_operations: ALiBi is added after softcap too") {
  Spec s = spec_of(1, 4, 6, 2, 2, 4, 4);
  s.opt.softcap = 0.5;
  s.alibi = 1;
  Attn a(s);
  a.forward();
  // Equivalent: softcap then a bias holding ALiBi's terms.
  Spec t = s;
  t.alibi = 0;
  t.bias = true;
  Attn b(t);
  copy_inputs(a, b);
  const std::vector<double> slopes = a.slopes.to_doubles();
  std::vector<double> bias(static_cast<std::size_t>(b.bias.numel()));
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 6; ++j)
        bias[static_cast<std::size_t>((n * 4 + i) * 6 + j)] =
            -slopes[static_cast<std::size_t>(n)] * std::abs(static_cast<double>(i - j));
  write_logical(b.bias.view(), bias);
  b.forward();
  CHECK(rel_err(a.out_values(), b.out_values()) <= tight);
  CHECK(rel_err(a.lse_values(), b.lse_values()) <= 1e-6);
}

TEST_CASE("semantics/order_of_operations: dropout acts after softmax; LSE is undropped") {
  Spec s = spec_of(2, 4, 6, 2, 1, 8, 6);
  Attn plain(s);
  s.opt.dropout_p = 0.5;
  s.opt.dropout_seed = 42;
  Attn dropped(s);
  plain.forward();
  dropped.forward();
  CHECK(max_abs_diff(plain.lse_values(), dropped.lse_values()) == 0.0);
  CHECK(max_abs_diff(plain.out_values(), dropped.out_values()) > 1e-3);
}

// --------------------------------------------------------------------------------- softcap

TEST_CASE("semantics/softcap: worked example s = 0.70711, c = 0.5 gives 0.44419") {
  Spec s = spec_of(1, 1, 2, 1, 1, 2, 2);
  s.opt.softcap = 0.5;
  Attn a(s);
  load_worked_example(a);
  a.forward();
  // Scores [0.44419, 0]: lse = ln(e^0.44419 + 1), weights e^(s - lse).
  const double lse = std::log(std::exp(0.44419) + 1.0), w0 = std::exp(0.44419 - lse);
  CHECK(a.lse_values()[0] == doctest::Approx(lse).epsilon(5e-6));
  const std::vector<double> out = a.out_values();
  CHECK(out[0] == doctest::Approx(w0 * 1 + (1 - w0) * 3).epsilon(5e-6));
  CHECK(out[1] == doctest::Approx(w0 * 2 + (1 - w0) * 4).epsilon(5e-6));
}

TEST_CASE("semantics/softcap: 0 switches it off; a huge cap is nearly off; a small cap flattens") {
  Spec s = spec_of(2, 4, 6, 2, 1, 8, 8);
  s.q_mult = 3;
  Attn off(s);
  s.opt.softcap = 1e6;
  Attn huge(s);
  s.opt.softcap = 1e-3;
  Attn tiny(s);
  for (Attn* a : {&huge, &tiny})
    copy_inputs(off, *a);
  off.forward();
  huge.forward();
  tiny.forward();
  // c = 1e6: tanh(x/c)·c = x - x^3/(3c^2): relative change ~1e-12 for |x| ~ 10.
  CHECK(rel_err(huge.out_values(), off.out_values()) <= 1e-9);
  CHECK(max_abs_diff(tiny.out_values(), off.out_values()) > 1e-2);
  // c = 1e-3: every score within ±1e-3, so each output row is close to the mean of v.
  const std::vector<double> v = read_logical(off.v.view), out = tiny.out_values();
  for (std::int64_t f = 0; f < 8; ++f) {
    double mean = 0;
    for (std::int64_t j = 0; j < 6; ++j)
      mean += v[idx4(off.v.view, 0, j, 0, f)] / 6;
    CHECK(out[idx4(tiny.out.view, 0, 0, 0, f)] == doctest::Approx(mean).epsilon(1e-2));
  }
}

TEST_CASE("semantics/softcap: gradient factor is 1 - tanh^2(s/c)") {
  // One query, two keys, H = 1: dq = scale·Σ_j dS_j·(1 - t_j²)·k_j with dS from the softmax.
  Spec s = spec_of(1, 1, 2, 1, 1, 1, 1);
  s.opt.softcap = 0.7;
  s.opt.scale = 1.0;
  Attn a(s);
  write_logical(a.q.view, {0.9});
  write_logical(a.k.view, {0.5, -1.3});
  write_logical(a.v.view, {2.0, -1.0});
  write_logical(a.dout.view, {1.0});
  a.backward(false);
  const double t0 = std::tanh(0.45 / 0.7), t1 = std::tanh(-1.17 / 0.7);
  const double s0 = 0.7 * t0, s1 = 0.7 * t1;
  const double p0 = 1 / (1 + std::exp(s1 - s0)), p1 = 1 - p0;
  const double o = 2 * p0 - p1;
  const double ds0 = p0 * (2 - o), ds1 = p1 * (-1 - o);
  const double dq = ds0 * (1 - t0 * t0) * 0.5 + ds1 * (1 - t1 * t1) * -1.3;
  CHECK(read_logical(a.dq.view)[0] == doctest::Approx(dq).epsilon(1e-13));
}

// -------------------------------------------------------------------------- bias_broadcast

namespace {
// A broadcast bias gives the same result as the full [B, N, T, S] bias holding its repeats,
// and its dbias is the full dbias summed over the broadcast dims.
void broadcast_vs_full(bool over_b, bool over_n) {
  Spec s = spec_of(3, 4, 5, 2, 1, 4, 4);
  s.bias = true;
  s.bias_bcast_b = over_b;
  s.bias_bcast_n = over_n;
  Attn bc(s);
  s.bias_bcast_b = s.bias_bcast_n = false;
  Attn full(s);
  copy_inputs(bc, full);
  const std::vector<double> small = bc.bias.to_doubles();
  std::vector<double> big(static_cast<std::size_t>(full.bias.numel()));
  const auto at = [&](std::int64_t b, std::int64_t n, std::int64_t ij, std::int64_t Nx) {
    return static_cast<std::size_t>((b * Nx + n) * 20 + ij);
  };
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t ij = 0; ij < 20; ++ij)
        big[at(b, n, ij, 2)] = small[at(over_b ? 0 : b, over_n ? 0 : n, ij, over_n ? 1 : 2)];
  write_logical(full.bias.view(), big);
  bc.forward();
  full.forward();
  CHECK(rel_err(bc.out_values(), full.out_values()) <= tight);
  bc.backward();
  full.backward();
  const std::vector<double> dfull = full.dbias.to_doubles();
  std::vector<double> summed(small.size(), 0.0);
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t ij = 0; ij < 20; ++ij)
        summed[at(over_b ? 0 : b, over_n ? 0 : n, ij, over_n ? 1 : 2)] += dfull[at(b, n, ij, 2)];
  CHECK(rel_err(bc.dbias.to_doubles(), summed) <= tight);
  CHECK(max_abs_diff(summed, std::vector<double>(summed.size(), 0.0)) > 1e-3);
}
} // namespace

TEST_CASE("semantics/bias_broadcast: [1, N, T, S] equals the bias repeated over the batch") {
  broadcast_vs_full(true, false);
}
TEST_CASE("semantics/bias_broadcast: [B, 1, T, S] equals the bias repeated over heads") {
  broadcast_vs_full(false, true);
}
TEST_CASE("semantics/bias_broadcast: [1, 1, T, S] equals the bias repeated over both") {
  broadcast_vs_full(true, true);
}

TEST_CASE("semantics/bias_broadcast: dbias is zero where no gradient flows") {
  Spec s = spec_of(2, 4, 4, 2, 1, 4, 4);
  s.bias = true;
  s.opt.causal = true;
  Attn a(s);
  a.backward();
  const std::vector<double> db = a.dbias.to_doubles();
  CHECK(all_finite(db));
  for (std::int64_t bn = 0; bn < 4; ++bn)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 4; ++j) {
        const double g = db[static_cast<std::size_t>((bn * 4 + i) * 4 + j)];
        if (j > i)
          CHECK(g == 0.0);
        else if (i > 0)
          CHECK(g != 0.0); // row 0 has one key: its dS is exactly 0
      }
}

// ------------------------------------------------------------------------------- bool_mask

TEST_CASE("semantics/bool_mask: true means attend") {
  // Only key (i + 1) % S is true in row i: the row's output is that key's value row.
  Spec s = spec_of(1, 3, 4, 1, 1, 4, 4);
  s.mask = true;
  Attn a(s);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 4; ++j)
      a.mask.set_int(i * 4 + j, j == (i + 1) % 4);
  a.forward();
  const std::vector<double> out = a.out_values(), v = read_logical(a.v.view);
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t f = 0; f < 4; ++f)
      CHECK(out[static_cast<std::size_t>(i * 4 + f)] ==
            doctest::Approx(v[static_cast<std::size_t>(((i + 1) % 4) * 4 + f)]).epsilon(1e-14));
}

TEST_CASE("semantics/bool_mask: false masks like a -inf bias; any non-zero byte is true") {
  Spec s = spec_of(2, 5, 6, 2, 1, 4, 4);
  s.mask = true;
  s.mask_density = 0.6;
  Attn m(s);
  Spec t = s;
  t.mask = false;
  t.bias = true;
  Attn b(t);
  copy_inputs(m, b);
  std::vector<double> bias(static_cast<std::size_t>(b.bias.numel()));
  auto* bytes = static_cast<unsigned char*>(m.mask.view().data);
  for (std::size_t e = 0; e < bias.size(); ++e) {
    bias[e] = bytes[e] ? 0.0 : -INFINITY;
    if (bytes[e])
      bytes[e] = static_cast<unsigned char>(1 + e % 200); // 2..200 also mean true
  }
  write_logical(b.bias.view(), bias);
  m.forward();
  b.forward();
  CHECK(max_abs_diff(m.out_values(), b.out_values()) == 0.0);
  CHECK(max_abs_diff(m.lse_values(), b.lse_values()) == 0.0);
}

TEST_CASE("semantics/bool_mask: broadcast [1, 1, T, S] applies to every batch and head") {
  Spec s = spec_of(2, 4, 5, 2, 1, 4, 5);
  s.mask = s.mask_bcast_b = s.mask_bcast_n = true;
  s.mask_density = 0.5;
  Attn a(s);
  set_identity_v(a);
  a.forward();
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t i = 0; i < 4; ++i) {
        const std::vector<bool> vis = visible_keys(a, b, n, i);
        for (std::int64_t j = 0; j < 5; ++j)
          CHECK(vis[static_cast<std::size_t>(j)] == (a.mask.get_int(i * 5 + j) != 0));
      }
}

// ----------------------------------------------------------------------------------- alibi

namespace {
void alibi_vs_bias(Alignment al, int slopes_rank, std::int64_t T, std::int64_t S) {
  Spec s = spec_of(2, T, S, 2, 1, 4, 4);
  s.alibi = slopes_rank;
  s.opt.alignment = al;
  s.opt.window_left = 3; // ALiBi and windows share the diagonal
  Attn a(s);
  Spec t = s;
  t.alibi = 0;
  t.bias = true;
  Attn b(t);
  copy_inputs(a, b);
  const std::vector<double> sl = a.slopes.to_doubles();
  const std::int64_t d = al == Alignment::bottom_right ? S - T : 0;
  std::vector<double> bias(static_cast<std::size_t>(b.bias.numel()));
  for (std::int64_t bb = 0; bb < 2; ++bb)
    for (std::int64_t n = 0; n < 2; ++n) {
      const double slope = sl[static_cast<std::size_t>(slopes_rank == 1 ? n : bb * 2 + n)];
      for (std::int64_t i = 0; i < T; ++i)
        for (std::int64_t j = 0; j < S; ++j)
          bias[static_cast<std::size_t>(((bb * 2 + n) * T + i) * S + j)] =
              -slope * std::abs(static_cast<double>(i + d - j));
    }
  write_logical(b.bias.view(), bias);
  a.forward();
  b.forward();
  CHECK(rel_err(a.out_values(), b.out_values()) <= tight);
  CHECK(rel_err(a.lse_values(), b.lse_values()) <= 1e-6);
  Attn none(t);
  copy_inputs(a, none);
  write_logical(none.bias.view(), std::vector<double>(bias.size(), 0.0));
  none.forward();
  CHECK(max_abs_diff(none.out_values(), a.out_values()) > 1e-3); // ALiBi did something
}
} // namespace

TEST_CASE("semantics/alibi: slopes [N] add -slope·|i - j| (top_left)") {
  alibi_vs_bias(Alignment::top_left, 1, 5, 7);
}
TEST_CASE("semantics/alibi: slopes [B, N] add -slope·|i + S - T - j| (bottom_right)") {
  alibi_vs_bias(Alignment::bottom_right, 2, 5, 7);
}
TEST_CASE("semantics/alibi: bottom_right with T > S (negative diagonal offset)") {
  alibi_vs_bias(Alignment::bottom_right, 1, 7, 4);
}

TEST_CASE("semantics/alibi: slopes [N] equal slopes [B, N] with identical rows") {
  Spec s = spec_of(3, 4, 6, 2, 2, 4, 4);
  s.alibi = 1;
  Attn a(s);
  s.alibi = 2;
  Attn b(s);
  copy_inputs(a, b);
  const std::vector<double> sl = a.slopes.to_doubles();
  write_logical(b.slopes.view(), {sl[0], sl[1], sl[0], sl[1], sl[0], sl[1]});
  a.forward();
  b.forward();
  CHECK(max_abs_diff(a.out_values(), b.out_values()) == 0.0);
}

// ------------------------------------------------------------------------------------- lse

TEST_CASE("semantics/lse: natural log (worked example 1.10794)") {
  Attn a(spec_of(1, 1, 2, 1, 1, 2, 2));
  load_worked_example(a);
  a.forward();
  CHECK(a.lse_values()[0] == doctest::Approx(1.10794).epsilon(5e-6));
  CHECK(a.lse.view().dtype == DType::f32);
}

TEST_CASE("semantics/lse: exp(s_j - lse_i) are the attention weights") {
  // With an identity V, out rows are the weights; rebuild them from lse and the raw scores.
  Spec s = spec_of(1, 3, 5, 1, 1, 4, 5);
  s.opt.scale = 0.8;
  s.opt.softcap = 2.0;
  Attn a(s);
  set_identity_v(a);
  a.forward();
  const std::vector<double> q = read_logical(a.q.view), k = read_logical(a.k.view),
                            lse = a.lse_values();
  for (std::int64_t i = 0; i < 3; ++i) {
    const std::vector<double> w = out_row(a, 0, 0, i);
    double total = 0;
    for (std::int64_t j = 0; j < 5; ++j) {
      double dot = 0;
      for (std::int64_t h = 0; h < 4; ++h)
        dot += q[static_cast<std::size_t>(i * 4 + h)] * k[static_cast<std::size_t>(j * 4 + h)];
      const double sc = 2.0 * std::tanh(0.8 * dot / 2.0);
      // lse is f32 (2^-24 relative): the weight inherits ~1e-7 relative error.
      CHECK(w[static_cast<std::size_t>(j)] ==
            doctest::Approx(std::exp(sc - lse[static_cast<std::size_t>(i)])).epsilon(1e-6));
      total += w[static_cast<std::size_t>(j)];
    }
    CHECK(total == doctest::Approx(1.0).epsilon(1e-14));
  }
}
