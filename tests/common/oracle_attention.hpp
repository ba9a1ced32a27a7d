// Test oracle: attention and its gradients computed directly from docs/semantics.md in fp64,
// with dense per-(sequence, head) matrices and its own masking code. It shares nothing with
// the reference backend but the Philox bit stream (which the semantics define by name) and
// the logical-order readers of reference_problem.hpp.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "common/reference_problem.hpp"
#include "kokkosattn/detail/philox.hpp"

namespace kattn::test {

struct OracleResult {
  // Logical order, shaped like the problem's out / lse / dq / dk / dv / dbias.
  std::vector<double> out, lse, dq, dk, dv, dbias;
};

// Can query i (of q_len) see key j (of k_len)? Written from the semantics, not MaskRule:
// the key aligned with query i is i (top_left) or i + k_len - q_len (bottom_right); causal is
// "nothing to the right of it"; windows are inclusive, -1 = unbounded.
inline bool oracle_sees(const Options& o, std::int64_t q_len, std::int64_t k_len, std::int64_t i,
                        std::int64_t j) {
  if (i >= q_len || j >= k_len)
    return false;
  const std::int64_t aligned = o.alignment == Alignment::bottom_right ? i + k_len - q_len : i;
  const std::int64_t right = o.causal ? 0 : o.window_right;
  const bool right_ok = right < 0 || j - aligned <= right;
  const bool left_ok = o.window_left < 0 || aligned - j <= o.window_left;
  return right_ok && left_ok;
}

inline OracleResult oracle(const Attn& a) {
  const Spec& s = a.spec;
  const Options& o = s.opt;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> Q = read_logical(a.q.view), Kt = read_logical(a.k.view),
                            V = read_logical(a.v.view), dO = read_logical(a.dout.view);
  const std::vector<double> bias = s.bias ? a.bias.to_doubles() : std::vector<double>{};
  const std::vector<double> mask = s.mask ? a.mask.to_doubles() : std::vector<double>{};
  const std::vector<double> slopes = s.alibi ? a.slopes.to_doubles() : std::vector<double>{};
  const double scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(s.H));

  OracleResult r;
  r.out.assign(static_cast<std::size_t>(a.out.view.numel()), 0.0);
  r.dq.assign(static_cast<std::size_t>(a.q.view.numel()), 0.0);
  r.dk.assign(static_cast<std::size_t>(a.k.view.numel()), 0.0);
  r.dv.assign(static_cast<std::size_t>(a.v.view.numel()), 0.0);
  if (s.lse)
    r.lse.assign(static_cast<std::size_t>(a.lse.numel()), -inf);
  if (s.bias)
    r.dbias.assign(static_cast<std::size_t>(a.bias.numel()), 0.0);

  std::int64_t q_base = 0, k_base = 0; // packed: first token of sequence b
  for (std::int64_t b = 0; b < s.B; ++b) {
    std::int64_t ql = s.T, kl = s.S;
    if (!s.q_lens.empty())
      ql = s.q_lens[static_cast<std::size_t>(b)];
    if (!s.k_lens.empty())
      kl = s.k_lens[static_cast<std::size_t>(b)];
    // Logical row (token) indices of query i / key j of this sequence.
    const auto qtok = [&](std::int64_t i) { return s.packed ? q_base + i : b * s.T + i; };
    const auto ktok = [&](std::int64_t j) { return s.packed ? k_base + j : b * s.S + j; };
    const auto at = [](std::int64_t tok, std::int64_t heads, std::int64_t h, std::int64_t dim,
                       std::int64_t f) {
      return static_cast<std::size_t>((tok * heads + h) * dim + f);
    };
    const auto bmi = [&](bool bcast_b, bool bcast_n, std::int64_t n, std::int64_t i,
                         std::int64_t j) {
      const std::int64_t bb = bcast_b ? 0 : b, nn = bcast_n ? 0 : n, NN = bcast_n ? 1 : s.N;
      return static_cast<std::size_t>(((bb * NN + nn) * s.T + i) * s.S + j);
    };

    for (std::int64_t n = 0; n < s.N; ++n) {
      const std::int64_t g = n / (s.N / s.K); // KV head of query head n
      const auto uq = static_cast<std::size_t>(ql), uk = static_cast<std::size_t>(kl);
      std::vector<std::vector<double>> sc(uq, std::vector<double>(uk, -inf)), th = sc, P = sc,
                                                                              Z = sc;
      for (std::int64_t i = 0; i < ql; ++i)
        for (std::int64_t j = 0; j < kl; ++j) {
          const auto ui = static_cast<std::size_t>(i), uj = static_cast<std::size_t>(j);
          double dot = 0;
          for (std::int64_t h = 0; h < s.H; ++h)
            dot += Q[at(qtok(i), s.N, n, s.H, h)] * Kt[at(ktok(j), s.K, g, s.H, h)];
          double x = dot * scale;
          th[ui][uj] = 0;
          if (o.softcap > 0) {
            th[ui][uj] = std::tanh(x / o.softcap);
            x = o.softcap * th[ui][uj];
          }
          if (s.bias)
            x += bias[bmi(s.bias_bcast_b, s.bias_bcast_n, n, i, j)];
          if (s.alibi) {
            const double slope = slopes[static_cast<std::size_t>(s.alibi == 1 ? n : b * s.N + n)];
            const std::int64_t aligned = o.alignment == Alignment::bottom_right ? i + kl - ql : i;
            x -= slope * std::abs(static_cast<double>(aligned - j));
          }
          const bool attend = !s.mask || mask[bmi(s.mask_bcast_b, s.mask_bcast_n, n, i, j)] != 0;
          sc[ui][uj] = oracle_sees(o, ql, kl, i, j) && attend ? x : -inf;
          Z[ui][uj] = 1;
          if (o.dropout_p > 0)
            Z[ui][uj] =
                dropout_keep(o.dropout_seed, o.dropout_offset,
                             static_cast<std::uint64_t>(b * s.N + n), static_cast<std::uint64_t>(i),
                             static_cast<std::uint64_t>(j), dropout_keep_threshold(o.dropout_p))
                    ? 1 / (1 - o.dropout_p)
                    : 0;
        }
      for (std::size_t i = 0; i < uq; ++i) {
        double m = -inf;
        for (double x : sc[i])
          m = std::max(m, x);
        const auto lse_at = static_cast<std::size_t>(
            s.packed ? n * a.lse.view().extent[1] + qtok(static_cast<std::int64_t>(i))
                     : (b * s.N + n) * s.T + static_cast<std::int64_t>(i));
        if (m == -inf)
          continue; // fully masked: out 0, lse -inf, no gradient
        double sum = 0;
        for (std::size_t j = 0; j < uk; ++j)
          sum += std::exp(sc[i][j] - m);
        for (std::size_t j = 0; j < uk; ++j)
          P[i][j] = std::exp(sc[i][j] - m) / sum;
        if (s.lse)
          r.lse[lse_at] = m + std::log(sum);
        const auto ti = qtok(static_cast<std::int64_t>(i));
        for (std::int64_t f = 0; f < s.Hv; ++f) {
          double acc = 0;
          for (std::size_t j = 0; j < uk; ++j)
            acc += P[i][j] * Z[i][j] * V[at(ktok(static_cast<std::int64_t>(j)), s.K, g, s.Hv, f)];
          r.out[at(ti, s.N, n, s.Hv, f)] = acc;
        }
        // Backward, textbook form: D_i = dO_i · O_i.
        double D = 0;
        for (std::int64_t f = 0; f < s.Hv; ++f)
          D += dO[at(ti, s.N, n, s.Hv, f)] * r.out[at(ti, s.N, n, s.Hv, f)];
        for (std::size_t j = 0; j < uk; ++j) {
          if (P[i][j] == 0)
            continue;
          const auto tj = ktok(static_cast<std::int64_t>(j));
          double dpd = 0;
          for (std::int64_t f = 0; f < s.Hv; ++f) {
            dpd += dO[at(ti, s.N, n, s.Hv, f)] * V[at(tj, s.K, g, s.Hv, f)];
            r.dv[at(tj, s.K, g, s.Hv, f)] += P[i][j] * Z[i][j] * dO[at(ti, s.N, n, s.Hv, f)];
          }
          const double dS = P[i][j] * (dpd * Z[i][j] - D);
          if (s.bias)
            r.dbias[bmi(s.bias_bcast_b, s.bias_bcast_n, n, static_cast<std::int64_t>(i),
                        static_cast<std::int64_t>(j))] += dS;
          const double draw = o.softcap > 0 ? dS * (1 - th[i][j] * th[i][j]) : dS;
          for (std::int64_t h = 0; h < s.H; ++h) {
            r.dq[at(ti, s.N, n, s.H, h)] += scale * draw * Kt[at(tj, s.K, g, s.H, h)];
            r.dk[at(tj, s.K, g, s.H, h)] += scale * draw * Q[at(ti, s.N, n, s.H, h)];
          }
        }
      }
    }
    q_base += ql;
    k_base += kl;
  }
  return r;
}

// max |a - b| / max(1, max|b|): a relative error that stays meaningful for tiny values.
inline double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double scale = 1.0;
  for (double x : b)
    if (std::isfinite(x))
      scale = std::max(scale, std::abs(x));
  return max_abs_diff(a, b) / scale;
}

} // namespace kattn::test
