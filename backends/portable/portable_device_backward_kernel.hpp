// The portable backward for GPU execution spaces: FlashAttention-2's recomputation from the LSE
// (the tiles backward's structure, portable_backward_kernel.hpp) with the work laid out like the
// device forward (portable_device_forward_kernel.hpp): per-thread register tiles, operands from
// team scratch as quads shared by the warp (portable_device_products.hpp).
//
// After the prep pass (the device forward in prep mode: LSE and D = rowsum(dout * O) in Acc):
//   DeviceDqKernel:   one team per (batch, head, block of Br query rows), dq of its rows in
//                     registers; per key tile S = (scale Q) K^T and dP = dO V^T in registers,
//                     dS = P (dP - D) with P = exp(S - LSE) written transposed to scratch, then
//                     dQ += dS K over row-major K chunks;
//   DeviceDkdvKernel: one team per (batch, KV head, block of Bk keys), dk and dv of its keys in
//                     registers; per query head of the GQA group and per query tile of Bq rows
//                     that sees the keys, S and dP as above, P and dS written row-major to
//                     scratch, then dV += P^T dO and dK += dS^T Q over row-major dO and Q chunks.
// Every output element has one writer and a fixed summation order: bitwise repeatable, like the
// tiles backward. Serves problems without score extras or dropout (softcap, bias, masks, ALiBi,
// dropout and dbias keep the tiles backward: portable_kernel_choice.hpp) in fp32 accumulation.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_device_products.hpp"
#include "portable/portable_kernel_choice.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

// What both kernels share: the team (TY x TX = 128 threads), the score tiles' products, and the
// per-row statistics of the prep pass.
template <class ExecSpace, class T, int HD>
struct DeviceBackwardBase {
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<128, 2>>;
  using Team = typename Policy::member_type;
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  static_assert(std::is_same_v<Acc, float>, "the device backward accumulates in fp32");
  static_assert((HD == 64 || HD == 128) && HD <= device_backward_max_hd, "head dims 64, 128");
  static constexpr int TX = 16, TY = 8, kThreads = TX * TY;
  static constexpr int KM = 4;       // keys per thread of a score tile
  static constexpr int HC = 32;      // head-dim chunk of the transposed staging
  static constexpr int NC = HD / TX; // accumulator columns per thread, in quads 4 TX apart

  Common c;
  Rows<const T> q, k, v, dout;
  const Acc *lse_acc = nullptr, *delta = nullptr;

  // Row i of head n's (batch b) statistics: the LSE, +inf for a row with no weights (fully
  // masked or past the queries: exp(s - inf) = 0 makes its P and dS 0), and D.
  KOKKOS_INLINE_FUNCTION void row_stats(Index b, Index n, Index i, bool valid, Acc& lse,
                                        Acc& d) const {
    lse = Kokkos::Experimental::infinity_v<Acc>;
    d = 0;
    if (!valid)
      return;
    const Index at = (b * c.N + n) * c.T + i;
    const Acc l = lse_acc[at];
    if (l != neg_inf<Acc>())
      lse = l, d = delta[at];
  }

  // P = exp(s - lse) and dS = P (dP - D) in place of s and dp, for keys e < cl of the tile
  // with lo <= e - r < hi (MaskRule::window_band); 0 elsewhere.
  template <int RM>
  KOKKOS_INLINE_FUNCTION static void weights(Acc (&s)[RM][KM], Acc (&dp)[RM][KM],
                                             const Acc (&lse)[RM], const Acc (&d)[RM], int lo,
                                             int hi, int cl) {
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r)
      KATTN_UNROLL
    for (int e = 0; e < KM; ++e) {
      const bool seen = e - r >= lo && e - r < hi && e < cl;
      const Acc p = seen ? device_exp(s[r][e] - lse[r]) : Acc(0);
      s[r][e] = p;
      dp[r][e] = p * (dp[r][e] - d[r]);
    }
  }

  template <int RM>
  KOKKOS_INLINE_FUNCTION static void zero(Acc (&s)[RM][KM]) {
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r)
      KATTN_UNROLL
    for (int e = 0; e < KM; ++e)
      s[r][e] = 0;
  }

  template <int R>
  KOKKOS_INLINE_FUNCTION static void zero(Acc (&a)[R][NC], int) {
    KATTN_UNROLL
    for (int r = 0; r < R; ++r)
      KATTN_UNROLL
    for (int j = 0; j < NC; ++j)
      a[r][j] = 0;
  }

  // A row of `rows` valid ones (0: past them, staged as zeros from `first`).
  KOKKOS_INLINE_FUNCTION static RowRef<T> row_ref(const T* first, Index st, int row, int rows,
                                                  int lim) {
    return RowRef<T>{first + (row < rows ? row : 0) * st, row < rows ? lim : 0};
  }

  // Writes acc * scale into the R rows row0 + r (those < out_rows; 0 for rows >= live_rows),
  // columns below lim. row_ptr(i) gives row i's element 0.
  template <int R, class RowPtr>
  KOKKOS_INLINE_FUNCTION static void store(const Acc (&acc)[R][NC], int row0, int tx, int out_rows,
                                           int live_rows, Acc scale, int lim, Index sd,
                                           const RowPtr& row_ptr) {
    KATTN_UNROLL
    for (int r = 0; r < R; ++r)
      if (row0 + r < out_rows)
        store_row_part<Traits, TX>(row_ptr(row0 + r), sd, acc[r], tx, lim,
                                   row0 + r < live_rows ? scale : Acc(0));
  }
};

template <class ExecSpace, class T, int HD>
struct DeviceDqKernel : DeviceBackwardBase<ExecSpace, T, HD> {
  using Base = DeviceBackwardBase<ExecSpace, T, HD>;
  using Base::HC, Base::KM, Base::kThreads, Base::NC, Base::TX, Base::TY;
  using typename Base::Acc;
  using typename Base::Policy;
  using typename Base::Team;
  using typename Base::Traits;

  static constexpr int RM = 8, VC = 32; // rows per thread; K rows per chunk of dQ += dS K
  static constexpr int Br = TY * RM, Bc = TX * KM;
  using Scores = ScoreProduct<Traits, Br, Bc, RM, KM, HC, kThreads>; // S, and dP
  using DsK = RowsProduct<Traits, RM, NC, TX, VC, HD, kThreads>;
  static constexpr int ldt = Scores::lda; // dS^T rows
  static_assert(DsK::scratch_elems <= Scores::scratch_elems, "K chunks reuse the staging space");
  static_assert(Bc % VC == 0, "K chunks tile a key tile");

  Rows<T> dq;
  Index n_qblocks = 0;

  static constexpr std::size_t scratch_size() {
    return scratch_bytes<Acc>(Scores::scratch_elems) + scratch_bytes<Acc>(Bc * ldt);
  }
  static_assert(scratch_size() <= 46 * 1024, "team scratch within a CUDA block's 48 KB");

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Common& c = this->c;
    const auto &q = this->q, &k = this->k, &v = this->v, &dout = this->dout;
    const QueryBlock blk = query_block(c, team.league_rank(), n_qblocks, Br);
    const Index b = blk.b, n = blk.n, kh = blk.kh, i0 = blk.i0;
    const Seq& sq = blk.sq;
    const MaskRule& rule = blk.rule;
    const int rows = blk.rows, rows_out = blk.rows_out;
    if (rows_out == 0)
      return;

    const Carver<Team> cv(team, 0);
    Acc* stage = cv.template take<Acc>(Scores::scratch_elems);
    Acc* dst = cv.template take<Acc>(Bc * ldt);
    const int tid = team.team_rank();
    const int ty = tid / TX, tx = tid % TX;
    const int r0 = ty * RM;
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);
    const Acc scale = static_cast<Acc>(c.scale);

    Acc lse[RM], d[RM];
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r)
      this->row_stats(b, n, i0 + r0 + r, r0 + r < rows, lse[r], d[r]);
    Acc acc[RM][NC];
    Base::zero(acc, 0);

    const T* q0 = q.data + q.at(b, sq.q_tok0 + i0, n, 0);
    const T* do0 = dout.data + dout.at(b, sq.q_tok0 + i0, n, 0);
    const RowRef<T> qr = Base::row_ref(q0, q.st, tid % Br, rows, H);
    const RowRef<T> dor = Base::row_ref(do0, dout.st, tid % Br, rows, Hv);
    const T* k_seq = k.data + k.at(b, sq.k_tok0, kh, 0);
    const T* v_seq = v.data + v.at(b, sq.k_tok0, kh, 0);
    const bool qk_vec = rows_vec(q0, q.sd, q.st) && rows_vec(k_seq, k.sd, k.st);
    const bool dv_vec = rows_vec(do0, dout.sd, dout.st) && rows_vec(v_seq, v.sd, v.st);
    const bool k_rows_vec = H % 4 == 0 && rows_vec(k_seq, k.sd, k.st);

    const IndexRange<Index> keys =
        rows > 0 ? rule.keys_of_rows(i0, i0 + rows - 1) : IndexRange<Index>{0, 0};
    for (Index j0 = keys.first_tile(Bc); j0 < keys.hi; j0 += Bc) {
      const int cols = static_cast<int>(Kokkos::min(Index(Bc), sq.k_len - j0));
      const T* k0 = k_seq + j0 * k.st;
      const T* v0 = v_seq + j0 * v.st;
      Acc s[RM][KM], dp[RM][KM];
      Base::zero(s);
      Scores::run(team, s, stage, tid, r0, tx * KM, H, qr, q.sd,
                  Base::row_ref(k0, k.st, tid % Bc, cols, H), k.sd, scale, qk_vec);
      Base::zero(dp);
      Scores::run(team, dp, stage, tid, r0, tx * KM, Hv, dor, dout.sd,
                  Base::row_ref(v0, v.st, tid % Bc, cols, Hv), v.sd, Acc(1), dv_vec);
      const IndexRange<Index> band = rule.window_band(i0 + r0, j0 + tx * KM, -RM, KM);
      Base::weights(s, dp, lse, d, static_cast<int>(band.lo), static_cast<int>(band.hi),
                    cols - tx * KM);
      KATTN_UNROLL
      for (int e = 0; e < KM; ++e)
        KATTN_UNROLL
      for (int r = 0; r < RM; r += 4)
        *reinterpret_cast<Quad<Acc>*>(dst + (tx * KM + e) * ldt + r0 + r) =
            Quad<Acc>{{dp[r][e], dp[r + 1][e], dp[r + 2][e], dp[r + 3][e]}};
      // dQ += dS K over every key of the tile (dS^T is 0 past cols, K chunks 0 past them).
      DsK::run(team, acc, dst, ldt, stage, tid, r0, tx, cols, k0, k.st, k.sd, H, k_rows_vec);
    }

    Base::store(acc, r0, tx, rows_out, rows, scale, H, dq.sd,
                [&](int rr) { return dq.data + dq.at(b, sq.q_tok0 + i0 + rr, n, 0); });
  }
};

template <class ExecSpace, class T, int HD>
struct DeviceDkdvKernel : DeviceBackwardBase<ExecSpace, T, HD> {
  using Base = DeviceBackwardBase<ExecSpace, T, HD>;
  using Base::HC, Base::KM, Base::kThreads, Base::NC, Base::TX, Base::TY;
  using typename Base::Acc;
  using typename Base::Policy;
  using typename Base::Team;
  using typename Base::Traits;

  // A score tile is Bq query rows (QM per thread) x Bk keys; the thread's dK / dV rows are KR
  // keys ty * KR .. (dk and dv, 2 KR NC accumulators: 128 at head dim 128).
  static constexpr int QM = 4, VC = 16; // query rows per thread; dO / Q rows per chunk
  static constexpr int Bq = TY * QM, Bk = TX * KM, KR = Bk / TY;
  using Scores = ScoreProduct<Traits, Bq, Bk, QM, KM, HC, kThreads>;
  using PdO = RowsProduct<Traits, KR, NC, TX, VC, HD, kThreads>; // also dS^T Q
  static constexpr int ldw = Scores::ldb;                        // P and dS rows (keys)
  static_assert(PdO::scratch_elems <= Scores::scratch_elems, "row chunks reuse the staging space");
  static_assert(Bq % VC == 0 && KR % 4 == 0, "chunks tile a query tile; quads of keys");

  Rows<T> dk, dv;
  Index n_kblocks = 0;

  static constexpr std::size_t scratch_size() {
    return scratch_bytes<Acc>(Scores::scratch_elems) + 2 * scratch_bytes<Acc>(Bq * ldw);
  }
  static_assert(scratch_size() <= 46 * 1024, "team scratch within a CUDA block's 48 KB");

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Common& c = this->c;
    const auto &q = this->q, &k = this->k, &v = this->v, &dout = this->dout;
    const KeyBlock blk = key_block(c, team.league_rank(), n_kblocks, Bk);
    const Index b = blk.b, kh = blk.kh, j0 = blk.j0;
    const Seq& sq = blk.sq;
    const MaskRule& rule = blk.rule;
    const int keys = blk.keys, keys_out = blk.keys_out;
    if (keys_out == 0)
      return;

    const Carver<Team> cv(team, 0);
    Acc* stage = cv.template take<Acc>(Scores::scratch_elems);
    Acc* pw = cv.template take<Acc>(Bq * ldw);
    Acc* dsw = cv.template take<Acc>(Bq * ldw);
    const int tid = team.team_rank();
    const int ty = tid / TX, tx = tid % TX;
    const int q0r = ty * QM, k0r = ty * KR; // the thread's first score row; first dK/dV key
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);
    const Acc scale = static_cast<Acc>(c.scale);

    Acc dka[KR][NC], dva[KR][NC];
    Base::zero(dka, 0);
    Base::zero(dva, 0);

    const T* k0 = k.data + k.at(b, sq.k_tok0 + j0, kh, 0);
    const T* v0 = v.data + v.at(b, sq.k_tok0 + j0, kh, 0);
    const RowRef<T> kr = Base::row_ref(k0, k.st, tid % Bk, keys, H);
    const RowRef<T> vr = Base::row_ref(v0, v.st, tid % Bk, keys, Hv);
    const bool k_vec = rows_vec(k0, k.sd, k.st), v_vec = rows_vec(v0, v.sd, v.st);

    const IndexRange<Index> qrows =
        keys > 0 ? rule.rows_of_keys(j0, j0 + keys - 1) : IndexRange<Index>{0, 0};
    for (Index g = 0; g < c.group; ++g) {
      const Index n = kh * c.group + g;
      const T* q_seq = q.data + q.at(b, sq.q_tok0, n, 0);
      const T* do_seq = dout.data + dout.at(b, sq.q_tok0, n, 0);
      const bool qk_vec = k_vec && rows_vec(q_seq, q.sd, q.st);
      const bool dv_vec = v_vec && rows_vec(do_seq, dout.sd, dout.st);
      const bool q_rows_vec = qk_vec && H % 4 == 0;
      const bool do_rows_vec = dv_vec && Hv % 4 == 0;
      for (Index i0 = qrows.first_tile(Bq); i0 < qrows.hi; i0 += Bq) {
        const int rows = static_cast<int>(Kokkos::min(Index(Bq), sq.q_len - i0));
        const T* qi = q_seq + i0 * q.st;
        const T* doi = do_seq + i0 * dout.st;
        Acc lse[QM], d[QM];
        KATTN_UNROLL
        for (int r = 0; r < QM; ++r)
          this->row_stats(b, n, i0 + q0r + r, q0r + r < rows, lse[r], d[r]);
        Acc s[QM][KM], dp[QM][KM];
        Base::zero(s);
        Scores::run(team, s, stage, tid, q0r, tx * KM, H,
                    Base::row_ref(qi, q.st, tid % Bq, rows, H), q.sd, kr, k.sd, scale, qk_vec);
        Base::zero(dp);
        Scores::run(team, dp, stage, tid, q0r, tx * KM, Hv,
                    Base::row_ref(doi, dout.st, tid % Bq, rows, Hv), dout.sd, vr, v.sd, Acc(1),
                    dv_vec);
        const IndexRange<Index> band = rule.window_band(i0 + q0r, j0 + tx * KM, -QM, KM);
        Base::weights(s, dp, lse, d, static_cast<int>(band.lo), static_cast<int>(band.hi),
                      keys - tx * KM);
        KATTN_UNROLL
        for (int r = 0; r < QM; ++r) {
          *reinterpret_cast<Quad<Acc>*>(pw + (q0r + r) * ldw + tx * KM) =
              Quad<Acc>{{s[r][0], s[r][1], s[r][2], s[r][3]}};
          *reinterpret_cast<Quad<Acc>*>(dsw + (q0r + r) * ldw + tx * KM) =
              Quad<Acc>{{dp[r][0], dp[r][1], dp[r][2], dp[r][3]}};
        }
        // dV += P^T dO, dK += dS^T (scale Q) (scale applied at the store), over every row of the
        // tile: P and dS are 0 past `rows`, the chunks' rows 0 past them.
        PdO::run(team, dva, pw, ldw, stage, tid, k0r, tx, rows, doi, dout.st, dout.sd, Hv,
                 do_rows_vec);
        PdO::run(team, dka, dsw, ldw, stage, tid, k0r, tx, rows, qi, q.st, q.sd, H, q_rows_vec);
      }
    }

    Base::store(dka, k0r, tx, keys_out, keys, scale, H, dk.sd,
                [&](int kk) { return dk.data + dk.at(b, sq.k_tok0 + j0 + kk, kh, 0); });
    Base::store(dva, k0r, tx, keys_out, keys, Acc(1), Hv, dv.sd,
                [&](int kk) { return dv.data + dv.at(b, sq.k_tok0 + j0 + kk, kh, 0); });
  }
};

} // namespace kattn::portable
