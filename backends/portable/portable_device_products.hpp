// The two tile products of the portable GPU kernels, each thread's part held in registers:
//   ScoreProduct: s[RM][KM] += A B^T over a reduction dim in chunks of HC (A and B rows staged
//                 transposed, TransposedPair): S = (scale Q) K^T, and dP = dO V^T;
//   RowsProduct:  acc[RM][NC] += W^T R over chunks of VC rows (R staged row-major, RowChunk; W
//                 already in scratch, one row of it per reduction step): O += P V, dQ += dS K,
//                 dV += P^T dO, dK += dS^T Q.
// Thread (ty, tx) of a TY x TX team owns rows r0 = ty * RM .. of the result and either KM
// columns tx * KM .. (ScoreProduct) or NC columns in quads 4 TX apart from tx * 4 (RowsProduct:
// a warp's 16-byte loads of one R row then fall in distinct banks).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#include "kokkos_common/unroll.hpp"
#include "portable/portable_device_staging.hpp"

namespace kattn::portable {

// exp of a non-positive x (or -inf, or NaN): exp2 on the device's special-function unit after
// one multiply. The host's polynomial exp_nonpositive (written to vectorise) costs ~17
// instructions a score here; MUFU's: 1.05-1.07x the whole forward with its P.V loop (H100,
// benchmarks/results/h100-2026-12-06-portable-exp2.md). f64 keeps Kokkos::exp (the rounded
// multiply would cost it ~1e-13 relative at x = -700).
template <class Acc>
KOKKOS_FORCEINLINE_FUNCTION Acc device_exp(Acc x) {
  if constexpr (std::is_same_v<Acc, float>)
    return Kokkos::exp2(x * 1.44269504f);
  else
    return Kokkos::exp(x);
}

template <class Traits, int BA, int BB, int RM, int KM, int HC, int THREADS>
struct ScoreProduct {
  using Stage = TransposedPair<Traits, BA, BB, HC, THREADS>;
  static constexpr int lda = BA + 4, ldb = BB + 4; // padded rows keep the quads aligned
  // Scratch the chunks take (A^T then B^T), in elements.
  static constexpr int scratch_elems = HC * (lda + ldb);

  // s += the product over [0, lim) of the reduction dim (0 past each row's lim). at: scratch of
  // scratch_elems; r0, c0: the thread's first row and column; vec: both row sets rows_vec.
  // Starts and ends with a barrier-free scratch: the caller's previous reads of `at` must be
  // separated by the barrier this opens with.
  template <class Team, class T, class Acc>
  KOKKOS_INLINE_FUNCTION static void run(const Team& team, Acc (&s)[RM][KM], Acc* at, int t, int r0,
                                         int c0, int lim, const RowRef<T>& ar, Index a_sd,
                                         const RowRef<T>& br, Index b_sd, Acc a_scale, bool vec) {
    Acc* bt = at + HC * lda;
    for (int h0 = 0; h0 < lim; h0 += HC) {
      team.team_barrier(); // the previous chunk (or the caller's last use of the space) is read
      Stage::stage(at, lda, bt, ldb, t, h0, ar, a_sd, br, b_sd, a_scale,
                   vec && (lim % 4 == 0 || h0 + HC <= lim));
      team.team_barrier();
      KATTN_UNROLL_BY(8)
      for (int h = 0; h < HC; ++h) {
        Acc a[RM], b[KM];
        KATTN_UNROLL
        for (int r = 0; r < RM; r += 4) {
          const Quad<Acc> x = *reinterpret_cast<const Quad<Acc>*>(at + h * lda + r0 + r);
          KATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            a[r + e] = x.v[e];
        }
        KATTN_UNROLL
        for (int e0 = 0; e0 < KM; e0 += 4) {
          const Quad<Acc> y = *reinterpret_cast<const Quad<Acc>*>(bt + h * ldb + c0 + e0);
          KATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            b[e0 + e] = y.v[e];
        }
        KATTN_UNROLL
        for (int r = 0; r < RM; ++r)
          KATTN_UNROLL
        for (int e = 0; e < KM; ++e)
          s[r][e] += a[r] * b[e];
      }
    }
  }
};

template <class Traits, int RM, int NC, int TX, int VC, int W, int THREADS>
struct RowsProduct {
  using Stage = RowChunk<Traits, VC, W, THREADS>;
  using Part = typename Stage::Part;
  static constexpr int scratch_elems = VC * W;

  // acc[r][4 TX g + 4 tx + e] += sum over rows kk < count of w[kk * ldw + r0 + r] *
  // R[kk][4 TX g + 4 tx + e]. R row kk is first + kk * st (elements sd apart, lim of them).
  // rs: scratch of scratch_elems. Opens with a barrier (w written, rs's previous use read).
  template <class Team, class T, class Acc>
  KOKKOS_INLINE_FUNCTION static void run(const Team& team, Acc (&acc)[RM][NC], const Acc* w,
                                         int ldw, Acc* rs, int t, int r0, int tx, int count,
                                         const T* first, Index st, Index sd, int lim, bool vec) {
    const int row = t / Part::TPR; // the thread's staging row of a chunk
    for (int v0 = 0; v0 < count; v0 += VC) {
      team.team_barrier();
      const int left = count - v0 - row; // rows of the chunk from the thread's row on
      const RowRef<T> rr{first + (v0 + (left > 0 ? row : 0)) * st, lim};
      Stage::stage(rs, t, rr, st, sd, left, vec);
      team.team_barrier();
      // All VC rows of the chunk, a count the compiler knows: rows past `count` have w = 0 (the
      // caller's zeros) and R rows of 0 (RowChunk), and the loop's loads are issued ahead of
      // their FMAs (a runtime count left each LDS used ~6 instructions on).
      KATTN_UNROLL_BY(4)
      for (int kk = 0; kk < VC; ++kk) {
        Acc p[RM], vv[NC];
        KATTN_UNROLL
        for (int r = 0; r < RM; r += 4) {
          const Quad<Acc> x = *reinterpret_cast<const Quad<Acc>*>(w + (v0 + kk) * ldw + r0 + r);
          KATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            p[r + e] = x.v[e];
        }
        KATTN_UNROLL
        for (int g = 0; g < NC / 4; ++g) {
          const Quad<Acc> y =
              *reinterpret_cast<const Quad<Acc>*>(rs + kk * W + g * 4 * TX + tx * 4);
          KATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            vv[g * 4 + e] = y.v[e];
        }
        KATTN_UNROLL
        for (int r = 0; r < RM; ++r)
          KATTN_UNROLL
        for (int j = 0; j < NC; ++j)
          acc[r][j] += p[r] * vv[j];
      }
    }
  }
};

// A thread's part of one accumulator row (RowsProduct's columns: quads 4 TX apart from 4 tx)
// times f into row[h * sd] for the columns h < lim.
template <class Traits, int TX, int NC, class T, class Acc>
KOKKOS_INLINE_FUNCTION void store_row_part(T* row, Index sd, const Acc (&acc)[NC], int tx, int lim,
                                           Acc f) {
  KATTN_UNROLL
  for (int g = 0; g < NC / 4; ++g)
    KATTN_UNROLL
  for (int e = 0; e < 4; ++e) {
    const int h = g * 4 * TX + tx * 4 + e;
    if (h < lim)
      row[h * sd] = Traits::store(acc[g * 4 + e] * f);
  }
}

} // namespace kattn::portable
