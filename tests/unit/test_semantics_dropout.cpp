// Semantics rule dropout (docs/semantics.md) on the reference backend. With an identity V
// (Hv = S) the output rows are the dropped, rescaled weights P_ij·Z_ij, so the mask can be read
// off directly.
#include <doctest/doctest.h>

#include "common/oracle_attention.hpp"
#include "common/reference_helpers.hpp"
#include "kokkosattn/detail/philox.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
struct Drop {
  std::vector<double> weights, dropped; // per (b, i, n, j), logical out order
};

Drop run(std::uint64_t seed, std::uint64_t offset, double p, std::int64_t T = 32) {
  Spec s = spec_of(2, T, 32, 2, 1, 8, 32);
  Attn plain(s);
  set_identity_v(plain);
  plain.forward();
  s.opt.dropout_p = p;
  s.opt.dropout_seed = seed;
  s.opt.dropout_offset = offset;
  Attn d(s);
  set_identity_v(d);
  d.forward();
  return {plain.out_values(), d.out_values()};
}

std::vector<bool> kept(const Drop& d) {
  std::vector<bool> k;
  for (double x : d.dropped)
    k.push_back(x != 0.0);
  return k;
}
} // namespace

TEST_CASE("semantics/dropout: same seed same mask, kept fraction ~ 1-p, scale 1/(1-p)") {
  const double p = 0.3;
  const Drop a = run(2024, 5, p), b = run(2024, 5, p);
  CHECK(max_abs_diff(a.dropped, b.dropped) == 0.0);
  std::size_t n_kept = 0;
  for (std::size_t e = 0; e < a.dropped.size(); ++e) {
    if (a.dropped[e] == 0.0)
      continue;
    ++n_kept;
    // Kept weights are scaled by exactly 1/(1-p) (f64 rounding only).
    CHECK(a.dropped[e] == doctest::Approx(a.weights[e] / (1 - p)).epsilon(1e-14));
  }
  // 4096 Bernoulli(0.7) draws: std 0.0072; 0.03 is > 4 sigma (and the draws are fixed).
  const double frac = static_cast<double>(n_kept) / static_cast<double>(a.dropped.size());
  CHECK(frac == doctest::Approx(1 - p).epsilon(0.03 / 0.7));
}

TEST_CASE("semantics/dropout: a different seed or offset draws a different mask") {
  const auto base = kept(run(7, 0, 0.5));
  const auto other_seed = kept(run(8, 0, 0.5));
  const auto other_offset = kept(run(7, 1, 0.5));
  const auto high_seed = kept(run(7 + (std::uint64_t{1} << 32), 0, 0.5)); // both key words used
  CHECK(base != other_seed);
  CHECK(base != other_offset);
  CHECK(base != high_seed);
}

TEST_CASE("semantics/dropout: the mask is Philox keyed by (seed, offset, b·N + n, i, j)") {
  const std::uint64_t seed = 0x1234'5678'9abcULL, offset = 3;
  const double p = 0.4;
  const Drop d = run(seed, offset, p, 8);
  const std::uint32_t threshold = dropout_keep_threshold(p);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 8; ++i)
      for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t j = 0; j < 32; ++j) {
          const bool keep =
              dropout_keep(seed, offset, static_cast<std::uint64_t>(b * 2 + n),
                           static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(j), threshold);
          CHECK((d.dropped[static_cast<std::size_t>(((b * 8 + i) * 2 + n) * 32 + j)] != 0.0) ==
                keep);
        }
}

TEST_CASE("semantics/dropout: p = 0 is exactly no dropout") {
  const Drop d = run(99, 0, 0.0);
  CHECK(max_abs_diff(d.weights, d.dropped) == 0.0);
}

TEST_CASE("semantics/dropout: forward and backward use the same mask") {
  // T = 1: dv[j] = P_j·Z_j·dO, so dv row j is zero exactly where the forward dropped key j.
  Spec s = spec_of(1, 1, 32, 1, 1, 8, 32);
  s.opt.dropout_p = 0.5;
  s.opt.dropout_seed = 77;
  Attn a(s);
  set_identity_v(a);
  a.forward();
  a.backward();
  const std::vector<double> out = a.out_values(), dv = read_logical(a.dv.view);
  int dropped = 0;
  for (std::int64_t j = 0; j < 32; ++j) {
    const bool fwd_kept = out[static_cast<std::size_t>(j)] != 0.0;
    dropped += !fwd_kept;
    for (std::int64_t f = 0; f < 32; ++f)
      CHECK((dv[idx4(a.dv.view, 0, j, 0, f)] != 0.0) == fwd_kept);
  }
  CHECK(dropped > 0);
}

TEST_CASE("semantics/dropout: varlen positions count within the sequence (packed equals padded)") {
  Spec ps = spec_of(0, 0, 0, 2, 1, 4, 4);
  ps.packed = true;
  ps.q_lens = {3, 5};
  ps.k_lens = {4, 6};
  ps.opt.dropout_p = 0.5;
  ps.opt.dropout_seed = 5;
  Attn packed(ps);
  Spec ds = ps;
  ds.packed = false;
  ds.B = 2, ds.T = 5, ds.S = 6;
  Attn padded(ds);
  // Copy the packed tokens into the padded layout.
  auto copy = [](const Tensor& from, const Tensor& to, const std::vector<std::int64_t>& lens) {
    const std::vector<double> x = read_logical(from);
    std::vector<double> y = read_logical(to);
    const std::int64_t row = to.extent[2] * to.extent[3], L = to.extent[1];
    std::int64_t start = 0;
    for (std::size_t b = 0; b < lens.size(); ++b) {
      for (std::int64_t e = 0; e < lens[b] * row; ++e)
        y[static_cast<std::size_t>(static_cast<std::int64_t>(b) * L * row + e)] =
            x[static_cast<std::size_t>(start * row + e)];
      start += lens[b];
    }
    write_logical(to, y);
  };
  copy(packed.q.view, padded.q.view, ps.q_lens);
  copy(packed.k.view, padded.k.view, ps.k_lens);
  copy(packed.v.view, padded.v.view, ps.k_lens);
  packed.forward();
  padded.forward();
  const std::vector<double> po = packed.out_values(), pd = padded.out_values();
  // Sequence 1's rows start at token 3 in packed, at row 5 of the padded batch.
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t e = 0; e < 8; ++e)
      CHECK(po[static_cast<std::size_t>((3 + i) * 8 + e)] ==
            doctest::Approx(pd[static_cast<std::size_t>((5 + i) * 8 + e)]).epsilon(1e-14));
}
