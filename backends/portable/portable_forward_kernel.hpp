// The portable forward: FlashAttention-2's loop in Kokkos. One team per (batch, head, block of
// Br query rows) keeps its scaled q block, running max m, running sum l and output accumulator
// in scratch, streams K/V tiles of Bc keys through scratch, and writes each output row once.
// Tiles the window rule hides from the whole block are never loaded.
//
// Scores are computed transposed, S^T = K Q^T: q is transposed once per team (not once per K
// tile), K and V tiles are plain row copies, and the online softmax runs down the key axis
// with query rows in the vector lanes, so every per-tile loop is contiguous.
//
// The same kernel, in `prep` mode, is the first step of the backward: instead of writing out
// and the f32 LSE it writes the LSE and D = rowsum(dout * out) in accumulation precision.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_host_vectors.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_scores.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

template <class ExecSpace, class T>
struct ForwardKernel {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Tile = ForwardTiles<Acc, host_space<ExecSpace>>;
  static constexpr int MR = Tile::MR, NR = Tile::NR;
  static constexpr int Br = Tile::Br, Bc = Tile::Bc;
#ifdef KATTN_PORTABLE_HOST_VECTORS
  // fp32 on the host: tiles every query row sees whole take the vector-extension path of
  // portable_host_vectors.hpp (scores with their row max in one pass, unmasked softmax).
  static constexpr bool host_vec = std::is_same_v<Acc, float> && host_space<ExecSpace> &&
                                   Br % 48 == 0 && Br <= host_vectors::masked_max_rows &&
                                   Bc % host_vectors::scores_mr == 0;
#else
  static constexpr bool host_vec = false;
#endif

  Common c;
  Rows<const T> q, k, v;
  Rows<T> out;
  // prep mode (backward): dout in, lse_acc and delta out, both [B][N][T].
  bool prep = false;
  Rows<const T> dout;
  Acc* lse_acc = nullptr;
  Acc* delta = nullptr;

  int Hp = 0, Hvp = 0; // head dims padded to NR
  Index n_qblocks = 0;
  Index league0 = 0; // team number of league rank 0 (a launch may run a range of the teams)
  int level = 0;     // scratch level

  static constexpr int RC = 8; // query rows per vector chunk of the softmax pass
  // Rows of q (and of out) requested ahead of the row being read (written) on the host.
  static constexpr int rows_ahead = 8;
#ifdef KATTN_PORTABLE_HOST_VECTORS
  // A host team is one thread running its rows r in order: at r, request the lines of row
  // r + rows_ahead (at r = 0, of rows 0 .. rows_ahead). row(u): the row's first element.
  template <bool kWrite, class RowPtr>
  static void prefetch_rows_ahead(int r, int rows, int bytes, const RowPtr& row) {
    for (int u = r == 0 ? 0 : r + rows_ahead; u <= r + rows_ahead && u < rows; ++u) {
      if constexpr (kWrite)
        host_vectors::prefetch_write(row(u), bytes);
      else
        host_vectors::prefetch_read(row(u), bytes);
    }
  }
#endif
  // Largest token stride read in place (tile_gemm takes int leading dimensions).
  static constexpr Index direct_stride_max = 1 << 30;
  static_assert(Br % RC == 0, "Br must be a multiple of the softmax row chunk");

  struct Scratch {
    Acc *qt, *ks, *vs, *st, *o, *m, *l, *alpha, *cmax;
    Index *klo, *khi; // visible keys [klo, khi) of each row (empty for rows without a query)
  };

  static std::size_t scratch_size(int H, int Hp, int Hvp) {
    (void)Hp;
    return scratch_bytes<Acc>(H * Br) + scratch_bytes<Acc>(Bc * H) + scratch_bytes<Acc>(Bc * Hvp) +
           scratch_bytes<Acc>(Bc * Br) + scratch_bytes<Acc>(Br * Hvp) + 4 * scratch_bytes<Acc>(Br) +
           2 * scratch_bytes<Index>(Br);
  }

  KOKKOS_INLINE_FUNCTION Scratch carve(const Team& team) const {
    const Carver<Team> cv(team, level);
    Scratch s;
    s.qt = cv.template take<Acc>(c.H * Br);
    s.ks = cv.template take<Acc>(Bc * c.H);
    s.vs = cv.template take<Acc>(Bc * Hvp);
    s.st = cv.template take<Acc>(Bc * Br);
    s.o = cv.template take<Acc>(Br * Hvp);
    s.m = cv.template take<Acc>(Br);
    s.l = cv.template take<Acc>(Br);
    s.alpha = cv.template take<Acc>(Br);
    s.cmax = cv.template take<Acc>(Br);
    s.klo = cv.template take<Index>(Br);
    s.khi = cv.template take<Index>(Br);
    return s;
  }

  // The softmax pass over RC query rows r0.. of the transposed score tile st[Bc][Br]: live
  // keys of row u are [lo[u], hi[u]). Updates the running max m and sum l, overwrites the
  // scores with P = exp(S - m_new) (0 where not live) and returns in alpha the rescale factors
  // exp(m_old - m_new) of the rows' accumulators. Query rows sit in the inner loop, so each
  // step is one vector operation across RC rows (portable_host_vectors.hpp spells it out for
  // host compilers, which leave this form scalar).
  KOKKOS_INLINE_FUNCTION static void softmax_chunk(Acc* st, int r0, const int* lo, const int* hi,
                                                   Acc* m, Acc* l, Acc* alpha) {
    Acc mx[RC], base[RC], sum[RC];
    KATTN_UNROLL
    for (int u = 0; u < RC; ++u) {
      mx[u] = neg_inf<Acc>();
      sum[u] = 0;
    }
    for (int cc = 0; cc < Bc; ++cc) {
      const Acc* col = st + cc * Br + r0;
      KATTN_UNROLL
      for (int u = 0; u < RC; ++u) {
        const bool live = (cc >= lo[u]) & (cc < hi[u]); // no short-circuit: vectorises
        const Acc x = live ? col[u] : neg_inf<Acc>();
        mx[u] = x > mx[u] ? x : mx[u];
      }
    }
    KATTN_UNROLL
    for (int u = 0; u < RC; ++u) {
      const Acc m_old = m[r0 + u];
      const Acc m_new = mx[u] > m_old ? mx[u] : m_old;
      // A row that has seen nothing yet keeps -inf; exp(-inf - 0) = 0 keeps its P zero.
      base[u] = m_new == neg_inf<Acc>() ? Acc(0) : m_new;
      alpha[u] = exp_nonpositive(m_old - base[u]);
      m[r0 + u] = m_new;
    }
    for (int cc = 0; cc < Bc; ++cc) {
      Acc* col = st + cc * Br + r0;
      KATTN_UNROLL
      for (int u = 0; u < RC; ++u) {
        const bool live = (cc >= lo[u]) & (cc < hi[u]);
        const Acc p = exp_nonpositive((live ? col[u] : neg_inf<Acc>()) - base[u]); // dead: 0
        col[u] = p;
        sum[u] += p;
      }
    }
    KATTN_UNROLL
    for (int u = 0; u < RC; ++u)
      l[r0 + u] = l[r0 + u] * alpha[u] + sum[u];
  }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Index lr = league0 + team.league_rank();
    const QueryBlock blk = query_block(c, lr, n_qblocks, Br);
    const Index b = blk.b, n = blk.n, kh = blk.kh, i0 = blk.i0;
    const Seq& sq = blk.sq;
    const MaskRule& rule = blk.rule;
    const int rows = blk.rows, rows_out = blk.rows_out;
    if (rows_out == 0)
      return;

    const Scratch sc = carve(team);
    const Acc scale = static_cast<Acc>(c.scale);
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Br), [&](const int r) {
#ifdef KATTN_PORTABLE_HOST_VECTORS
      if constexpr (host_space<ExecSpace>) {
        if (q.sd == 1)
          prefetch_rows_ahead<false>(r, rows, H * static_cast<int>(sizeof(T)), [&](int u) {
            return q.data + q.at(b, sq.q_tok0 + i0 + u, n, 0);
          });
      }
#endif
      if (r < rows) {
        const Index tok = sq.q_tok0 + i0 + r;
        const T* qrow = q.data + q.at(b, tok, n, 0);
        for (int h = 0; h < H; ++h)
          sc.qt[h * Br + r] = Traits::load(qrow[h * q.sd]) * scale;
        const IndexRange<Index> row = rule.keys_of_rows(i0 + r, i0 + r);
        sc.klo[r] = row.lo;
        sc.khi[r] = row.hi;
      } else {
        for (int h = 0; h < H; ++h)
          sc.qt[h * Br + r] = 0;
        sc.klo[r] = sc.khi[r] = 0;
      }
      for (int h = 0; h < Hvp; ++h)
        sc.o[r * Hvp + h] = 0;
      sc.m[r] = neg_inf<Acc>();
      sc.l[r] = 0;
    });

    const IndexRange<Index> keys = rule.keys_of_rows(i0, i0 + rows - 1);
    const bool extras = c.has_score_extras();
    team.team_barrier();
#ifdef KATTN_PORTABLE_HOST_VECTORS
    // Keys [all_lo, all_hi) are visible to every row with a query (host path only: a team is
    // one thread there, so a plain loop reads what the rows wrote).
    Index all_lo = 0, all_hi = rows > 0 ? sq.k_len : 0;
    for (int r = 0; r < rows; ++r) {
      all_lo = Kokkos::max(all_lo, sc.klo[r]);
      all_hi = Kokkos::min(all_hi, sc.khi[r]);
    }
    // A block with fewer query rows than Br (the last one, e.g. 64 of 96 rows at T = 1024) runs
    // the whole-tile steps over its rows only, rounded up to the P V block height MR, then to the
    // softmax chunk RC, then to the 16-query strip of the scores (Br is a multiple of all three).
    // The rows beyond are padding that no output reads.
    const int pv_rows = round_up(rows, MR);
    const int sm_rows = round_up(pv_rows, RC);
    const int s_rows = round_up(sm_rows, 16);
#endif

    for (Index j0 = keys.first_tile(Bc); j0 < keys.hi; j0 += Bc) {
      const int cols = static_cast<int>(Kokkos::min(Index(Bc), sq.k_len - j0));
      // Full tiles of accumulation-type K/V rows with unit head-dim stride are read in place:
      // staging them in scratch cost ~11% of the forward (profiled, T = 1024, fp32) and
      // converts nothing. Partial tiles and other dtypes are staged (zero-padded, widened).
      const Acc* ka = sc.ks;
      const Acc* vb = sc.vs;
      int ka_m = H, vb_ld = Hvp;
      if constexpr (std::is_same_v<T, Acc>) {
        if (cols == Bc && k.sd == 1 && v.sd == 1 && Hv == Hvp && k.st <= direct_stride_max &&
            v.st <= direct_stride_max) {
          ka = k.data + k.at(b, sq.k_tok0 + j0, kh, 0);
          vb = v.data + v.at(b, sq.k_tok0 + j0, kh, 0);
          ka_m = static_cast<int>(k.st);
          vb_ld = static_cast<int>(v.st);
        }
      }
      if (ka == sc.ks)
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, Bc), [&](const int cc) {
          Acc* krow = sc.ks + cc * H;
          Acc* vrow = sc.vs + cc * Hvp;
          if (cc < cols) {
            const Index tok = sq.k_tok0 + j0 + cc;
            load_row<Traits>(krow, k.data + k.at(b, tok, kh, 0), k.sd, H, Acc(1));
            load_row<Traits>(vrow, v.data + v.at(b, tok, kh, 0), v.sd, Hv, Acc(1));
            for (int h = Hv; h < Hvp; ++h)
              vrow[h] = 0;
          } else {
            for (int h = 0; h < H; ++h)
              krow[h] = 0;
            for (int h = 0; h < Hvp; ++h)
              vrow[h] = 0;
          }
        });
      team.team_barrier();

#ifdef KATTN_PORTABLE_HOST_VECTORS
      // A tile some rows see only in part (the causal diagonal, a window's edge), without
      // extras or dropout: products and softmax over just the keys the rows see (about half
      // of the diagonal tile), on the host in one call.
      if constexpr (host_vec) {
        if (!extras && !c.dropout && !(j0 >= all_lo && j0 + cols <= all_hi)) {
          int lo[Br], hi[Br];
          for (int r = 0; r < Br; ++r) {
            lo[r] = static_cast<int>(Kokkos::clamp(sc.klo[r] - j0, Index(0), Index(cols)));
            hi[r] = static_cast<int>(Kokkos::clamp(sc.khi[r] - j0, Index(0), Index(cols)));
          }
          host_vectors::masked_tile(Br, lo, hi, H, ka, ka_m, sc.qt, sc.st, Hvp, vb, vb_ld, sc.o,
                                    sc.m, sc.l, sc.alpha);
          continue;
        }
      }
#endif

      // S^T[Bc][Br] = K Q^T (q pre-scaled). A tile every row sees whole, without extras, gets
      // its row max with it on the host.
      bool whole = false;
#ifdef KATTN_PORTABLE_HOST_VECTORS
      if constexpr (host_vec) {
        // A last, partial tile qualifies too: it is staged zero-padded to Bc keys, its product
        // runs over the keys rounded up to the block height and its max and softmax over cols.
        whole = !extras && j0 >= all_lo && j0 + cols <= all_hi;
        if (whole)
          host_vectors::scores_with_max(round_up(cols, host_vectors::scores_mr), cols, s_rows, H,
                                        ka, ka_m, sc.qt, sc.st, Br, sc.cmax);
      }
#endif
      if (!whole)
        tile_gemm<MR, NR>(team, Bc, Br, H, ka, ka_m, 1, sc.qt, Br, sc.st, Br, false);
      team.team_barrier();

      if (extras) {
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows), [&](const int r) {
          const int lo = static_cast<int>(Kokkos::clamp(sc.klo[r] - j0, Index(0), Index(cols)));
          const int hi = static_cast<int>(Kokkos::clamp(sc.khi[r] - j0, Index(0), Index(cols)));
          if (hi > lo)
            apply_score_extras<Acc>(c, rule, sc.st + r, nullptr, lo, hi, b, n, i0 + r, j0, Br);
        });
        team.team_barrier();
      }

      // Online softmax down the key axis, RC query rows per vector: P^T = exp(S^T - m) (0 where
      // a row does not see a key), and alpha = the factor each row's accumulator is rescaled by
      // to its new max (applied by the P V product as it loads O).
      int chunks = Br / RC, o_rows = Br;
#ifdef KATTN_PORTABLE_HOST_VECTORS
      if (whole) {
        chunks = sm_rows / RC;
        o_rows = pv_rows;
      }
#endif
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, chunks), [&](const int chunk) {
        const int r0 = chunk * RC;
        int lo[RC], hi[RC];
        Acc* alpha = sc.alpha + r0;
        KATTN_UNROLL
        for (int u = 0; u < RC; ++u) {
          lo[u] = static_cast<int>(Kokkos::clamp(sc.klo[r0 + u] - j0, Index(0), Index(cols)));
          hi[u] = static_cast<int>(Kokkos::clamp(sc.khi[r0 + u] - j0, Index(0), Index(cols)));
        }
#ifdef KATTN_PORTABLE_HOST_VECTORS
        if constexpr (std::is_same_v<Acc, float> && RC == 8) {
          if (whole)
            host_vectors::softmax_full_chunk8(sc.st, Br, r0, cols, sc.cmax, sc.m, sc.l, alpha);
          else
            host_vectors::softmax_chunk8(sc.st, Br, r0, 0, Bc, lo, hi, sc.m, sc.l, alpha);
        } else
#endif
          softmax_chunk(sc.st, r0, lo, hi, sc.m, sc.l, alpha);
        for (int u = 0; u < RC; ++u) {
          const int r = r0 + u;
          if (c.dropout && r < rows) {
            const Acc ks = static_cast<Acc>(c.keep_scale);
            Philox4x32 draws{};
            for (int cc = lo[u]; cc < hi[u]; ++cc) {
              const Index j = j0 + cc;
              if (cc == lo[u] || (j & 3) == 0)
                draws = c.keep_draws(b, n, i0 + r, j >> 2);
              Acc& pv = sc.st[cc * Br + r];
              pv = c.keep_bit(draws, j) ? pv * ks : Acc(0);
            }
          }
        }
      });
      team.team_barrier();

      // O = alpha O + P V, P read in place from P^T (a_m = 1, a_k = Br).
      tile_gemm<MR, NR>(team, o_rows, Hvp, cols, sc.st, 1, Br, vb, vb_ld, sc.o, Hvp, true,
                        sc.alpha);
      team.team_barrier();
    }

    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, rows_out), [&](const int r) {
      const Index i = i0 + r;
      const Index tok = sq.q_tok0 + i;
      // Else a fully masked or padded row (sum 0). A NaN sum (a NaN or +inf score) is live:
      // its out and LSE come out NaN (docs/semantics.md non_finite).
      bool live = false;
      Acc inv = 0, lse = 0;
      c.end_row(n, r < rows, r < rows ? sc.m[r] : Acc(0), r < rows ? sc.l[r] : Acc(0), live, inv,
                lse);
      const Acc* orow = sc.o + r * Hvp;
      if (prep) {
        Acc d = 0;
        if (live)
          for (int h = 0; h < Hv; ++h)
            d += Traits::load(dout.data[dout.at(b, tok, n, h)]) * (orow[h] * inv);
        const Index at = (b * c.N + n) * c.T + i;
        lse_acc[at] = lse;
        delta[at] = d;
        return;
      }
#ifdef KATTN_PORTABLE_HOST_VECTORS
      if constexpr (host_space<ExecSpace>) {
        if (out.sd == 1)
          prefetch_rows_ahead<true>(r, rows_out, Hv * static_cast<int>(sizeof(T)), [&](int u) {
            return out.data + out.at(b, sq.q_tok0 + i0 + u, n, 0);
          });
      }
#endif
      store_row<Traits>(out.data + out.at(b, tok, n, 0), out.sd, orow, Hv, inv);
      if (c.lse)
        c.lse[b * c.lse_sb + n * c.lse_sn + tok * c.lse_st] = static_cast<float>(lse);
    });
  }
};

} // namespace kattn::portable
