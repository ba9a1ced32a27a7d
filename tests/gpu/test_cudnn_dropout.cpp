// Dropout in the cudnn backend. cuDNN draws its keep mask from its own Philox stream, not the
// counter layout of docs/semantics.md, so no test can compare masks with the reference; these
// tests check the distribution instead: the kept fraction and its per-row spread, E[out] = the
// undropped output, repeatability per (seed, offset), and that the backward regenerates the
// forward's mask (an identity that holds for any mask, but only for the same one).
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "gpu/cudnn_device_run.hpp"

namespace {

using kattn::DType;
using kattn::Options;
using kattn::test::Attn;
using kattn::test::read_logical;
using kattn::test::run_on_device;
using kattn::test::Spec;
using kattn::test::write_logical;

Spec spec(DType t, std::int64_t B, std::int64_t T, std::int64_t N, std::int64_t H,
          std::uint64_t seed) {
  Spec s;
  s.dtype = t;
  s.B = B, s.T = T, s.S = T, s.N = N, s.K = N, s.H = H, s.Hv = H;
  s.seed = seed;
  return s;
}

Options dropout(double p, std::uint64_t seed, std::uint64_t offset) {
  Options o;
  o.dropout_p = p;
  o.dropout_seed = seed;
  o.dropout_offset = offset;
  return o;
}

} // namespace

TEST_CASE("cudnn/dropout: kept fraction and per-row spread match Bernoulli(1 - p)") {
  // Uniform attention (every key row equal, so P = 1/S exactly) and a value column of ones:
  // out[i, 0] = kept_i / (S (1 - p)). With p = 0.2 and S = 256 every quantity is exact in f16
  // (1/(1-p) = 1.25, kept * 5/1024 has <= 11 significant bits), so kept_i is recovered exactly.
  const double p = 0.2;
  Spec s = spec(DType::f16, 2, 256, 4, 64, 3);
  Attn a(s);
  std::vector<double> k = read_logical(a.k.view), v = read_logical(a.v.view);
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = k[i % static_cast<std::size_t>(s.H)]; // every (batch, key, head) row = row 0
  for (std::size_t i = 0; i < v.size(); i += static_cast<std::size_t>(s.H))
    v[i] = 1.0;
  write_logical(a.k.view, k);
  write_logical(a.v.view, v);

  const auto r = run_on_device(a, dropout(p, 1234, 0));
  const std::int64_t rows = s.B * s.T * s.N;
  std::vector<double> kept(static_cast<std::size_t>(rows));
  bool integral = true;
  for (std::int64_t row = 0; row < rows; ++row) {
    const double x =
        r.out[static_cast<std::size_t>(row * s.H)] * static_cast<double>(s.S) * (1 - p);
    kept[static_cast<std::size_t>(row)] = std::round(x);
    integral = integral && std::abs(x - std::round(x)) < 1e-3;
  }
  CHECK(integral); // each kept weight is exactly P / (1 - p)
  const double n = static_cast<double>(rows * s.S);
  const double fraction = std::accumulate(kept.begin(), kept.end(), 0.0) / n;
  // Binomial(n, 1-p): sigma = sqrt(p(1-p)/n) = 5.5e-4 for n = 524288; 6 sigma.
  const double sigma = std::sqrt(p * (1 - p) / n);
  MESSAGE("kept fraction " << fraction << " (expected " << 1 - p << " +- " << 6 * sigma << ")");
  CHECK(std::abs(fraction - (1 - p)) <= 6 * sigma);
  // Per-row counts ~ Binomial(S, 1-p): variance S p (1-p) = 40.96. The sample variance of 2048
  // rows has a relative standard deviation sqrt(2/2047) = 3.1%; +-20% is > 6 sigma. A mask
  // shared by all rows (variance 0) or correlated within rows fails here.
  double mean = 0, var = 0;
  for (double c : kept)
    mean += c / static_cast<double>(rows);
  for (double c : kept)
    var += (c - mean) * (c - mean) / static_cast<double>(rows - 1);
  const double want = static_cast<double>(s.S) * p * (1 - p);
  MESSAGE("per-row kept variance " << var << " (Binomial: " << want << ")");
  CHECK(var >= 0.8 * want);
  CHECK(var <= 1.2 * want);
}

TEST_CASE(
    "cudnn/dropout: same (seed, offset) repeats bit for bit; another seed or offset differs") {
  Spec s = spec(DType::bf16, 1, 128, 2, 64, 5);
  Attn a(s);
  const auto r1 = run_on_device(a, dropout(0.1, 7, 0));
  const auto r2 = run_on_device(a, dropout(0.1, 7, 0));
  const auto r3 = run_on_device(a, dropout(0.1, 8, 0));
  const auto r4 = run_on_device(a, dropout(0.1, 7, 1024));
  CHECK(r1.out == r2.out);
  CHECK(r1.out != r3.out);
  CHECK(r1.out != r4.out);
  CHECK(r1.lse == r3.lse); // LSE is taken before dropout
  CHECK(kattn::test::all_finite(r1.out));
}

TEST_CASE("cudnn/dropout: E[out] over seeds is the undropped output") {
  // out = sum_j P_j keep_j v_j / (1 - p): unbiased, Var = p/(1-p) sum_j P_j^2 v_j^2 per element.
  // The mean of M runs (seeds 1..M) is within 6 sigma_M = 6 sqrt(Var / M) of the exact output,
  // plus the deterministic part of the error (the f16 bound of cudnn_case.hpp, with P scaled by
  // 1/(1-p)). Aggregate check: mean((mean - ref)^2 / sigma_M^2) is ~1 for independent
  // Bernoulli(1 - p) keeps; [0.6, 1.5] allows its sampling error (rows share a mask, so ~256
  // independent groups: sd ~0.09). A wrong p, a missing 1/(1-p) or a mask that does not vary
  // with the seed lands far outside.
  const double p = 0.25;
  const int M = 64;
  Spec s = spec(DType::f16, 1, 128, 2, 64, 9);
  Attn a(s);
  Spec s64 = s;
  s64.dtype = DType::f64;
  Attn ref(s64);
  write_logical(ref.q.view, read_logical(a.q.view));
  write_logical(ref.k.view, read_logical(a.k.view));
  write_logical(ref.v.view, read_logical(a.v.view));
  ref.forward();
  const std::vector<double> want = ref.out_values();
  const std::vector<double> P = kattn::test::probabilities(a);
  const std::vector<double> v = read_logical(a.v.view);

  std::vector<double> mean(want.size(), 0.0);
  for (int m = 1; m <= M; ++m) {
    const auto r = run_on_device(a, dropout(p, static_cast<std::uint64_t>(m), 0));
    for (std::size_t i = 0; i < mean.size(); ++i)
      mean[i] += r.out[i] / M;
  }
  const double u = 0x1p-11;
  const double max_v = kattn::test::max_abs(v);
  double worst = 0, z2 = 0;
  for (std::int64_t i = 0; i < s.T; ++i)
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t h = 0; h < s.H; ++h) {
        double var = 0;
        for (std::int64_t j = 0; j < s.S; ++j) {
          const double pj = P[static_cast<std::size_t>((n * s.T + i) * s.S + j)];
          const double vj = v[static_cast<std::size_t>((j * s.K + n) * s.H + h)];
          var += pj * pj * vj * vj;
        }
        const double sigma = std::sqrt(p / (1 - p) * var / M);
        const std::size_t e = static_cast<std::size_t>((i * s.N + n) * s.H + h);
        const double err = std::abs(mean[e] - want[e]);
        const double det = 2 * u * std::abs(want[e]) + 2 * u / (1 - p) * max_v;
        worst = std::max(worst, (err - det) / sigma);
        z2 += (mean[e] - want[e]) * (mean[e] - want[e]) / (sigma * sigma) /
              static_cast<double>(mean.size());
      }
  MESSAGE("E[out]: worst (|err| - deterministic bound) / sigma_M = " << worst
                                                                     << ", mean z^2 = " << z2);
  CHECK(worst <= 6.0);
  CHECK(z2 >= 0.6);
  CHECK(z2 <= 1.5);
}

TEST_CASE("cudnn/dropout: the backward regenerates the forward's mask") {
  // With the dropped, scaled weights D (any mask): out = D V and dV = D^T dO, so per (batch,
  // head) <out, dO> = <V, dV> exactly. The same (seed, offset) must satisfy it up to rounding;
  // a different offset in the backward (another mask) must not. Rounding: out, dV and the P
  // operand of each matmul are rounded once (relative u each, unbiased, independent across
  // terms), so the difference is a random walk of size ~u sqrt(sum of squared terms); the bound
  // takes 6 such standard deviations for 3 roundings.
  const double p = 0.15;
  Spec s = spec(DType::bf16, 2, 256, 4, 64, 13);
  Attn a(s);
  const std::vector<double> P = kattn::test::probabilities(a);
  const std::vector<double> v = read_logical(a.v.view), dout = read_logical(a.dout.view);
  const Options same = dropout(p, 99, 0), other = dropout(p, 99, 4096);
  const auto good = run_on_device(a, same, &same);
  const auto bad = run_on_device(a, same, &other);
  const double u = 0x1p-8;
  double worst_good = 0, max_bad = 0;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t n = 0; n < s.N; ++n) {
      double lhs = 0, rhs_good = 0, rhs_bad = 0, sq = 0, sq_out = 0, sq_dv = 0;
      for (std::int64_t i = 0; i < s.T; ++i)
        for (std::int64_t h = 0; h < s.H; ++h) {
          const std::size_t e = static_cast<std::size_t>(((b * s.T + i) * s.N + n) * s.H + h);
          lhs += good.out[e] * dout[e];
          sq_out += good.out[e] * good.out[e] * dout[e] * dout[e];
        }
      for (std::int64_t j = 0; j < s.S; ++j)
        for (std::int64_t h = 0; h < s.H; ++h) {
          const std::size_t e = static_cast<std::size_t>(((b * s.S + j) * s.K + n) * s.H + h);
          rhs_good += v[e] * good.dv[e];
          rhs_bad += v[e] * bad.dv[e];
          sq_dv += v[e] * v[e] * good.dv[e] * good.dv[e];
        }
      for (std::int64_t i = 0; i < s.T; ++i)
        for (std::int64_t j = 0; j < s.S; ++j) {
          const double w =
              P[static_cast<std::size_t>(((b * s.N + n) * s.T + i) * s.S + j)] / (1 - p);
          for (std::int64_t h = 0; h < s.H; ++h) {
            const double t = w * v[static_cast<std::size_t>(((b * s.S + j) * s.K + n) * s.H + h)] *
                             dout[static_cast<std::size_t>(((b * s.T + i) * s.N + n) * s.H + h)];
            sq += t * t;
          }
        }
      const double tol = 6 * u * (2 * std::sqrt(sq) + std::sqrt(sq_out) + std::sqrt(sq_dv));
      MESSAGE("b=" << b << " n=" << n << ": <out,dO> = " << lhs << ", <V,dV> same mask " << rhs_good
                   << ", other mask " << rhs_bad << " (tol " << tol << ")");
      worst_good = std::max(worst_good, std::abs(lhs - rhs_good) / tol);
      max_bad = std::max(max_bad, std::abs(lhs - rhs_bad) / tol);
      CHECK(std::abs(lhs - rhs_good) <= tol);
    }
  // Another mask: <out, dO> - <V, dV'> is a sum over (i, j) of +-D_ij (v_j . dO_i) terms with
  // sd ~ sqrt(2p(1-p)) sqrt(sq) ~ 0.5 sqrt(sq), about 10x the tolerance; the largest of 8 heads
  // stays above 3x the tolerance except with probability ~1e-5.
  MESSAGE("same mask: worst |diff|/tol " << worst_good << "; other mask: largest " << max_bad);
  CHECK(max_bad > 3.0);
}
