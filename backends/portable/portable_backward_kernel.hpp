// The portable backward: FlashAttention-2's recomputation from the LSE, without atomics.
//
// After the prep pass (ForwardKernel in prep mode: LSE and D = rowsum(dout * out) in
// accumulation precision), two kernels recompute P = exp(s - lse) tile by tile:
//   DkdvKernel: one team per (batch, KV head, block of keys) owns dk/dv of its keys and loops
//               over the query heads of its GQA group and the query blocks that see its keys;
//   DqKernel:   one team per (bias group, block of query rows) owns dq of its rows and loops
//               over the key tiles they see; with dbias it also owns those rows of dbias and
//               walks every (batch, head) that the bias broadcasts over, in a fixed order.
// Every output element has exactly one writer and a fixed summation order, so the results are
// bitwise repeatable (options.deterministic holds by construction).
//
// With dropout, dP is taken w.r.t. the dropped-and-rescaled weights, so dp = keep/(1-p) * dP and
// dS = P (dp - D); D = rowsum(dout * out) of the dropped output already is rowsum(P * dp).
#pragma once

#include <Kokkos_Core.hpp>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_scores.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

// Shared by both kernels: the scratch tiles of one (query block x key block) step and the row
// pass that turns scores and dP into P (dropped, scaled) and dS.
template <class T>
struct BackwardTile {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  static constexpr int MR = Tiles<Acc>::MR, NR = Tiles<Acc>::NR;
  static constexpr int Bq = Tiles<Acc>::Br, Bk = Tiles<Acc>::Bc;

  // Stages q (scaled) and dout rows [i0, i0 + rows) of (b, n), their LSE and D.
  template <class Team>
  KOKKOS_INLINE_FUNCTION static void
  stage_rows(const Team& team, const Common& c, const Rows<const T>& q, const Rows<const T>& dout,
             const Acc* lse_acc, const Acc* delta, Index b, Index n, const Seq& sq, Index i0,
             int rows, int Hp, int Hvp, Acc* qs, Acc* dos, Acc* lse_r, Acc* d_r) {
    const Acc scale = static_cast<Acc>(c.scale);
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bq), [&](const int r) {
      Acc* qrow = qs + r * Hp;
      Acc* drow = dos + r * Hvp;
      if (r < rows) {
        const Index tok = sq.q_tok0 + i0 + r;
        load_row<Traits>(qrow, q.data + q.at(b, tok, n, 0), q.sd, H, scale);
        for (int h = H; h < Hp; ++h)
          qrow[h] = 0;
        load_row<Traits>(drow, dout.data + dout.at(b, tok, n, 0), dout.sd, Hv, Acc(1));
        for (int h = Hv; h < Hvp; ++h)
          drow[h] = 0;
        const Index at = (b * c.N + n) * c.T + i0 + r;
        lse_r[r] = lse_acc[at];
        d_r[r] = delta[at];
      } else {
        for (int h = 0; h < Hp; ++h)
          qrow[h] = 0;
        for (int h = 0; h < Hvp; ++h)
          drow[h] = 0;
        lse_r[r] = neg_inf<Acc>();
        d_r[r] = 0;
      }
    });
  }

  // s[Bq][Bk] holds scale*q.k, dp[Bq][Bk] holds dout.v for keys j0 .. j0 + cols - 1. On return
  // s holds the weights as applied to v (dropped, rescaled) and dp holds dS w.r.t. the raw
  // score (softcap's derivative applied); dsb[Bq][Bk], when given, receives dS w.r.t. the bias
  // term (before softcap's derivative). Entries a row does not see are 0.
  template <class Team>
  KOKKOS_INLINE_FUNCTION static void
  row_pass(const Team& team, const Common& c, const MaskRule& rule, Index b, Index n, Index i0,
           int rows, Index j0, int cols, const Acc* lse_r, const Acc* d_r, Acc* s, Acc* dp,
           Acc* dcap, Acc* dsb) {
    const bool extras = c.has_score_extras();
    const bool cap = c.softcap > 0;
    const Acc ks = static_cast<Acc>(c.keep_scale);
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bq), [&](const int r) {
      Acc* srow = s + r * Bk;
      Acc* dprow = dp + r * Bk;
      Acc* caprow = cap ? dcap + r * Bk : nullptr;
      Acc* dbrow = dsb ? dsb + r * Bk : nullptr;
      int lo = 0, hi = 0;
      const Index i = i0 + r;
      if (r < rows && lse_r[r] != neg_inf<Acc>())
        visible_cols(rule, i, j0, cols, lo, hi);
      if (extras && hi > lo)
        apply_score_extras<Acc>(c, rule, srow, caprow, lo, hi, b, n, i, j0);
      const Acc lse = lse_r[r], d = d_r[r];
      if (!c.dropout) {
        // Fixed trip counts and no branches, so these loops vectorise; p = 0 off [lo, hi).
        for (int cc = 0; cc < Bk; ++cc)
          srow[cc] = (cc >= lo && cc < hi) ? exp_nonpositive(srow[cc] - lse) : Acc(0);
        for (int cc = 0; cc < Bk; ++cc)
          dprow[cc] = srow[cc] * (dprow[cc] - d);
        if (dbrow)
          for (int cc = 0; cc < Bk; ++cc)
            dbrow[cc] = dprow[cc];
      } else {
        Philox4x32 draws{};
        for (int cc = 0; cc < Bk; ++cc) {
          Acc p = 0, pv = 0, ds = 0;
          if (cc >= lo && cc < hi) {
            const Index j = j0 + cc;
            if (cc == lo || (j & 3) == 0)
              draws = c.keep_draws(b, n, i, j >> 2);
            p = exp_nonpositive(srow[cc] - lse); // <= 0 up to rounding; -inf -> 0
            const bool keep = c.keep_bit(draws, j);
            pv = keep ? p * ks : Acc(0);
            ds = p * ((keep ? dprow[cc] * ks : Acc(0)) - d);
          }
          srow[cc] = pv;
          dprow[cc] = ds;
          if (dbrow)
            dbrow[cc] = ds;
        }
      }
      if (cap) // dcap is only written on [lo, hi)
        for (int cc = lo; cc < hi; ++cc)
          dprow[cc] *= caprow[cc];
    });
  }
};

template <class ExecSpace, class T>
struct DkdvKernel {
  using Tile = BackwardTile<T>;
  using Traits = typename Tile::Traits;
  using Acc = typename Tile::Acc;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int MR = Tile::MR, NR = Tile::NR, Bq = Tile::Bq, Bk = Tile::Bk;

  Common c;
  Rows<const T> q, k, v, dout;
  Rows<T> dk, dv;
  const Acc *lse_acc = nullptr, *delta = nullptr;
  int Hp = 0, Hvp = 0;
  Index n_kblocks = 0;
  int level = 0;

  static std::size_t scratch_size(int H, int Hv, int Hp, int Hvp, bool softcap) {
    return scratch_bytes<Acc>(H * Bk) + scratch_bytes<Acc>(Hv * Bk) + scratch_bytes<Acc>(Bq * Hp) +
           scratch_bytes<Acc>(Bq * Hvp) + 2 * scratch_bytes<Acc>(Bq * Bk) +
           scratch_bytes<Acc>(softcap ? Bq * Bk : 0) + scratch_bytes<Acc>(Bk * Hp) +
           scratch_bytes<Acc>(Bk * Hvp) + 2 * scratch_bytes<Acc>(Bq);
  }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const KeyBlock blk = key_block(c, team.league_rank(), n_kblocks, Bk);
    const Index b = blk.b, kh = blk.kh, j0 = blk.j0;
    const Seq& sq = blk.sq;
    const MaskRule& rule = blk.rule;
    const int keys = blk.keys, keys_out = blk.keys_out;
    if (keys_out == 0)
      return;
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);

    const Carver<Team> cv(team, level);
    Acc* kt = cv.template take<Acc>(H * Bk);
    Acc* vt = cv.template take<Acc>(Hv * Bk);
    Acc* qs = cv.template take<Acc>(Bq * Hp);
    Acc* dos = cv.template take<Acc>(Bq * Hvp);
    Acc* s = cv.template take<Acc>(Bq * Bk);
    Acc* dp = cv.template take<Acc>(Bq * Bk);
    Acc* dcap = cv.template take<Acc>(c.softcap > 0 ? Bq * Bk : 0);
    Acc* dka = cv.template take<Acc>(Bk * Hp);
    Acc* dva = cv.template take<Acc>(Bk * Hvp);
    Acc* lse_r = cv.template take<Acc>(Bq);
    Acc* d_r = cv.template take<Acc>(Bq);

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bk), [&](const int cc) {
      const Index tok = sq.k_tok0 + j0 + cc;
      for (int h = 0; h < H; ++h)
        kt[h * Bk + cc] = cc < keys ? Traits::load(k.data[k.at(b, tok, kh, h)]) : Acc(0);
      for (int h = 0; h < Hv; ++h)
        vt[h * Bk + cc] = cc < keys ? Traits::load(v.data[v.at(b, tok, kh, h)]) : Acc(0);
      for (int h = 0; h < Hp; ++h)
        dka[cc * Hp + h] = 0;
      for (int h = 0; h < Hvp; ++h)
        dva[cc * Hvp + h] = 0;
    });

    const IndexRange<Index> qrows = rule.rows_of_keys(j0, j0 + keys - 1);
    team.team_barrier();

    for (Index g = 0; g < c.group; ++g) {
      const Index n = kh * c.group + g;
      for (Index i0 = qrows.first_tile(Bq); i0 < qrows.hi; i0 += Bq) {
        const int rows = static_cast<int>(Kokkos::min(Index(Bq), sq.q_len - i0));
        Tile::stage_rows(team, c, q, dout, lse_acc, delta, b, n, sq, i0, rows, Hp, Hvp, qs, dos,
                         lse_r, d_r);
        team.team_barrier();
        tile_gemm<MR, NR>(team, Bq, Bk, H, qs, Hp, 1, kt, Bk, s, Bk, false);
        tile_gemm<MR, NR>(team, Bq, Bk, Hv, dos, Hvp, 1, vt, Bk, dp, Bk, false);
        team.team_barrier();
        Tile::row_pass(team, c, rule, b, n, i0, rows, j0, keys, lse_r, d_r, s, dp, dcap, nullptr);
        team.team_barrier();
        // dV += P^T dO and dK += dS^T (scale q): the transposes are read in place (a_m = 1).
        tile_gemm<MR, NR>(team, Bk, Hvp, rows, s, 1, Bk, dos, Hvp, dva, Hvp, true);
        tile_gemm<MR, NR>(team, Bk, Hp, rows, dp, 1, Bk, qs, Hp, dka, Hp, true);
        team.team_barrier();
      }
    }

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, keys_out), [&](const int cc) {
      const Index tok = sq.k_tok0 + j0 + cc;
      const bool live = cc < keys; // keys past the valid length get zero gradients
      for (int h = 0; h < H; ++h)
        dk.data[dk.at(b, tok, kh, h)] = Traits::store(live ? dka[cc * Hp + h] : Acc(0));
      for (int h = 0; h < Hv; ++h)
        dv.data[dv.at(b, tok, kh, h)] = Traits::store(live ? dva[cc * Hvp + h] : Acc(0));
    });
  }
};

template <class ExecSpace, class T>
struct DqKernel {
  using Tile = BackwardTile<T>;
  using Traits = typename Tile::Traits;
  using Acc = typename Tile::Acc;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int MR = Tile::MR, NR = Tile::NR, Bq = Tile::Bq, Bk = Tile::Bk;

  Common c;
  Rows<const T> q, k, v, dout;
  Rows<T> dq;
  const Acc *lse_acc = nullptr, *delta = nullptr;
  // dbias accumulator [gb][gn][T][S] (contiguous, zero-initialised), or null.
  Acc* dbias = nullptr;
  Index gb_count = 1, gn_count = 1; // groups: bias extents with dbias, else B and N
  int Hp = 0, Hvp = 0;
  Index n_qblocks = 0;
  int level = 0;

  static std::size_t scratch_size(int H, int Hv, int Hp, int Hvp, bool softcap, bool dbias) {
    return scratch_bytes<Acc>(Bq * Hp) + scratch_bytes<Acc>(Bq * Hvp) +
           scratch_bytes<Acc>(Bk * Hp) + scratch_bytes<Acc>(H * Bk) + scratch_bytes<Acc>(Hv * Bk) +
           2 * scratch_bytes<Acc>(Bq * Bk) + scratch_bytes<Acc>(softcap ? Bq * Bk : 0) +
           scratch_bytes<Acc>(dbias ? Bq * Bk : 0) + scratch_bytes<Acc>(Bq * Hp) +
           2 * scratch_bytes<Acc>(Bq);
  }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Index lr = team.league_rank();
    const Index qb = lr % n_qblocks;
    const Index gn = (lr / n_qblocks) % gn_count;
    const Index gb = lr / (n_qblocks * gn_count);
    const Index b_first = gb_count == c.B ? gb : 0, b_end = gb_count == c.B ? gb + 1 : c.B;
    const Index n_first = gn_count == c.N ? gn : 0, n_end = gn_count == c.N ? gn + 1 : c.N;
    const Index i0 = qb * Bq;
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);

    const Carver<Team> cv(team, level);
    Acc* qs = cv.template take<Acc>(Bq * Hp);
    Acc* dos = cv.template take<Acc>(Bq * Hvp);
    Acc* ks = cv.template take<Acc>(Bk * Hp);
    Acc* kt = cv.template take<Acc>(H * Bk);
    Acc* vt = cv.template take<Acc>(Hv * Bk);
    Acc* s = cv.template take<Acc>(Bq * Bk);
    Acc* dp = cv.template take<Acc>(Bq * Bk);
    Acc* dcap = cv.template take<Acc>(c.softcap > 0 ? Bq * Bk : 0);
    Acc* dsb = cv.template take<Acc>(dbias ? Bq * Bk : 0);
    Acc* dqa = cv.template take<Acc>(Bq * Hp);
    Acc* lse_r = cv.template take<Acc>(Bq);
    Acc* d_r = cv.template take<Acc>(Bq);

    for (Index b = b_first; b < b_end; ++b) {
      const Seq sq = c.seq(b);
      const MaskRule rule = c.rule(sq);
      const int rows = static_cast<int>(Kokkos::clamp(sq.q_len - i0, Index(0), Index(Bq)));
      const int rows_out =
          c.packed ? rows : static_cast<int>(Kokkos::clamp(c.T - i0, Index(0), Index(Bq)));
      if (rows_out == 0)
        continue;
      const IndexRange<Index> keys = rule.keys_of_rows(i0, i0 + rows - 1);

      for (Index n = n_first; n < n_end; ++n) {
        const Index kh = n / c.group;
        Tile::stage_rows(team, c, q, dout, lse_acc, delta, b, n, sq, i0, rows, Hp, Hvp, qs, dos,
                         lse_r, d_r);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bq * Hp),
                             [&](const int e) { dqa[e] = 0; });
        team.team_barrier();

        for (Index j0 = keys.first_tile(Bk); j0 < keys.hi; j0 += Bk) {
          const int cols = static_cast<int>(Kokkos::min(Index(Bk), sq.k_len - j0));
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bk), [&](const int cc) {
            const bool live = cc < cols;
            const Index tok = sq.k_tok0 + j0 + cc;
            Acc* krow = ks + cc * Hp;
            if (live)
              load_row<Traits>(krow, k.data + k.at(b, tok, kh, 0), k.sd, H, Acc(1));
            else
              for (int h = 0; h < H; ++h)
                krow[h] = 0;
            for (int h = 0; h < H; ++h)
              kt[h * Bk + cc] = krow[h];
            for (int h = H; h < Hp; ++h)
              krow[h] = 0;
            for (int h = 0; h < Hv; ++h)
              vt[h * Bk + cc] = live ? Traits::load(v.data[v.at(b, tok, kh, h)]) : Acc(0);
          });
          team.team_barrier();
          tile_gemm<MR, NR>(team, Bq, Bk, H, qs, Hp, 1, kt, Bk, s, Bk, false);
          tile_gemm<MR, NR>(team, Bq, Bk, Hv, dos, Hvp, 1, vt, Bk, dp, Bk, false);
          team.team_barrier();
          Tile::row_pass(team, c, rule, b, n, i0, rows, j0, cols, lse_r, d_r, s, dp, dcap,
                         dbias ? dsb : nullptr);
          team.team_barrier();
          tile_gemm<MR, NR>(team, Bq, Hp, cols, dp, Bk, 1, ks, Hp, dqa, Hp, true);
          if (dbias) {
            // This team alone owns rows [i0, i0 + Bq) of its dbias slice.
            Acc* slice = dbias + (gb * gn_count + gn) * c.T * c.S;
            Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int r) {
              Acc* drow = slice + (i0 + r) * c.S + j0;
              for (int cc = 0; cc < cols; ++cc)
                drow[cc] += dsb[r * Bk + cc];
            });
          }
          team.team_barrier();
        }

        const Acc scale = static_cast<Acc>(c.scale);
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows_out), [&](const int r) {
          const Index tok = sq.q_tok0 + i0 + r;
          const bool live = r < rows;
          for (int h = 0; h < H; ++h)
            dq.data[dq.at(b, tok, n, h)] = Traits::store(live ? dqa[r * Hp + h] * scale : Acc(0));
        });
        team.team_barrier();
      }
    }
  }
};

} // namespace kattn::portable
