// Staging global rows into team scratch for the portable GPU kernels (the forward and both
// backward kernels): the split of a chunk over a team's threads, and the copies themselves, as
// aligned quads where the layout allows and element by element where it does not.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstdint>

#include "kokkos_common/unroll.hpp"
#include "portable/portable_params.hpp"

namespace kattn::portable {

// A block of 4 elements read or written as one vector where the target has vector loads.
template <class T>
struct alignas(4 * sizeof(T)) Quad {
  T v[4];
};

// ROWS rows of QPR quads staged by THREADS threads: TPR threads per row, QPT consecutive quads
// each (thread t: row t % ROWS, quads (t / ROWS) * QPT ..).
template <int ROWS, int QPR, int THREADS>
struct RowPart {
  static constexpr int TPR = THREADS / ROWS, QPT = QPR / TPR;
  static_assert(TPR * ROWS == THREADS && QPT * TPR == QPR, "rows split evenly over the team");
};

// A chunk of rows kept row-major: TPR >= 8 threads per row on interleaved quads (8 lanes'
// 16-byte stores then cover the 32 banks, and their loads a 128-byte line), RPP rows per pass,
// NP passes.
template <int ROWS, int QPR, int THREADS>
struct VPart {
  static constexpr int TPR = THREADS / ROWS > 8 ? THREADS / ROWS : 8;
  static constexpr int RPP = THREADS / TPR, NP = ROWS / RPP, QPT = QPR / TPR;
  static_assert(TPR * RPP == THREADS && RPP * NP == ROWS && QPT * TPR == QPR,
                "rows split evenly over the team");
};

// A thread's row of a staging step: p its element 0, lim the elements it has (a row past the
// sequence has 0, stages as zeros, and p, then the first row's, is never read).
template <class T>
struct RowRef {
  const T* p;
  int lim;
};

// Whether the rows from `first` on (element stride sd, token stride st) may be read as aligned
// quads: every row start and every head-dim offset of 4 is then a multiple of Quad<T>'s size.
template <class T>
KOKKOS_INLINE_FUNCTION bool rows_vec(const T* first, Index sd, Index st) {
  return sd == 1 && st % 4 == 0 && reinterpret_cast<std::uintptr_t>(first) % alignof(Quad<T>) == 0;
}

// Columns [h0, h0 + HC) of two sets of rows, A (RA rows, scaled by a_scale) and B (RB rows),
// stored transposed: at[h * lda + r] = a_scale * a_r[h0 + h], bt[h * ldb + c] = b_c[h0 + h]
// (0 past a row's lim). Split by rows (RowPart): thread t owns quads of row t % RA of A and of
// row t % RB of B, so that a warp's transposed stores go to consecutive words. With vec
// (team-uniform: both sets rows_vec, and every row's lim % 4 == 0 or the chunk below it) all
// of a thread's quads are loaded before any is stored, so that their latencies overlap; else
// element by element (strided or unaligned rows are rare: a loop kept small).
template <class Traits, int RA, int RB, int HC, int THREADS>
struct TransposedPair {
  using AP = RowPart<RA, HC / 4, THREADS>;
  using BP = RowPart<RB, HC / 4, THREADS>;

  template <class T, class Acc>
  KOKKOS_INLINE_FUNCTION static void stage(Acc* at, int lda, Acc* bt, int ldb, int t, int h0,
                                           const RowRef<T>& ar, Index a_sd, const RowRef<T>& br,
                                           Index b_sd, Acc a_scale, bool vec) {
    constexpr int na = AP::QPT, nb = BP::QPT;
    const int ha = (t / RA) * 4 * na, hb = (t / RB) * 4 * nb; // the thread's first chunk column
    Acc* ad = at + ha * lda + t % RA;
    Acc* bd = bt + hb * ldb + t % RB;
    const int a_left = ar.lim - h0 - ha, b_left = br.lim - h0 - hb; // its row's elements left
    if (vec) {
      const T* ap = ar.p + h0 + ha;
      const T* bp = br.p + h0 + hb;
      Quad<T> xa[na], xb[nb];
      KATTN_UNROLL
      for (int i = 0; i < na; ++i)
        xa[i] = 4 * i < a_left ? *reinterpret_cast<const Quad<T>*>(ap + 4 * i) : Quad<T>{};
      KATTN_UNROLL
      for (int i = 0; i < nb; ++i)
        xb[i] = 4 * i < b_left ? *reinterpret_cast<const Quad<T>*>(bp + 4 * i) : Quad<T>{};
      KATTN_UNROLL
      for (int i = 0; i < na; ++i)
        KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        ad[(4 * i + e) * lda] = Traits::load(xa[i].v[e]) * a_scale;
      KATTN_UNROLL
      for (int i = 0; i < nb; ++i)
        KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        bd[(4 * i + e) * ldb] = Traits::load(xb[i].v[e]);
      return;
    }
    KATTN_UNROLL_BY(1)
    for (int h = 0; h < 4 * na; ++h)
      ad[h * lda] = h < a_left ? Traits::load(ar.p[(h0 + ha + h) * a_sd]) * a_scale : Acc(0);
    KATTN_UNROLL_BY(1)
    for (int h = 0; h < 4 * nb; ++h)
      bd[h * ldb] = h < b_left ? Traits::load(br.p[(h0 + hb + h) * b_sd]) : Acc(0);
  }
};

// ROWS rows of W columns kept row-major: dst[kk * W + h] = row_kk[h] (0 past the rows that
// hold data and past a row's lim). Thread t owns row t / TPR (and those RPP, 2 RPP, .. below
// it) and its quads t % TPR + TPR i (VPart). r: its first row, st the token stride between
// rows; left: the rows from it on that hold data; vec: rows_vec and lim % 4 == 0.
template <class Traits, int ROWS, int W, int THREADS>
struct RowChunk {
  using Part = VPart<ROWS, W / 4, THREADS>;

  template <class T, class Acc>
  KOKKOS_INLINE_FUNCTION static void stage(Acc* dst_base, int t, const RowRef<T>& r, Index st,
                                           Index sd, int left, bool vec) {
    constexpr int TPR = Part::TPR, RPP = Part::RPP, NP = Part::NP, nv = Part::QPT;
    const int h = (t % TPR) * 4;
    Acc* dst = dst_base + (t / TPR) * W + h;
    const int h_left = r.lim - h;
    if (vec) {
      Quad<T> x[NP][nv];
      KATTN_UNROLL
      for (int p = 0; p < NP; ++p)
        KATTN_UNROLL
      for (int i = 0; i < nv; ++i)
        x[p][i] = p * RPP < left && 4 * TPR * i < h_left
                      ? *reinterpret_cast<const Quad<T>*>(r.p + p * RPP * st + h + 4 * TPR * i)
                      : Quad<T>{};
      KATTN_UNROLL
      for (int p = 0; p < NP; ++p)
        KATTN_UNROLL
      for (int i = 0; i < nv; ++i)
        *reinterpret_cast<Quad<Acc>*>(dst + p * RPP * W + 4 * TPR * i) =
            Quad<Acc>{{Traits::load(x[p][i].v[0]), Traits::load(x[p][i].v[1]),
                       Traits::load(x[p][i].v[2]), Traits::load(x[p][i].v[3])}};
      return;
    }
    KATTN_UNROLL_BY(1)
    for (int p = 0; p < NP; ++p)
      KATTN_UNROLL_BY(1)
    for (int u = 0; u < 4 * nv; ++u) {
      const int hh = 4 * TPR * (u / 4) + u % 4; // element u of the thread's quads
      dst[p * RPP * W + hh] =
          p * RPP < left && hh < h_left ? Traits::load(r.p[p * RPP * st + (h + hh) * sd]) : Acc(0);
    }
  }
};

} // namespace kattn::portable
