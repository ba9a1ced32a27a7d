// The portable forward for GPU execution spaces: FlashAttention-2's online softmax with the
// work laid out for SIMT devices instead of one host thread per team.
//
// One team of kThreads threads per (batch, head, block of Br query rows). Thread (ty, tx) owns
// RM query rows (ty) x KM keys (tx) of each score tile and the same RM rows x NC output columns
// of the accumulator, all in registers: a score element costs one FMA per head-dim element and
// its operands come from team scratch as short vectors shared by the warp. Per key tile:
//   1. S = (scale Q) K^T over head-dim chunks of HC: Q^T and K^T chunks staged in scratch
//      (Q is re-read per tile from L2: that keeps scratch inside the 48 KB a Kokkos CUDA team
//      may have, and lets Br be 64 rows in fp32);
//   2. the score rule per element (window, lengths, softcap, bias, ALiBi, mask);
//   3. the row max through scratch (each thread's partial, then all TX partials of its rows),
//      P = exp(S - m) written transposed to scratch, the accumulator rescaled in registers;
//      row sums stay per thread until the end (the rescale is per row, so they commute);
//   4. O += P V with V staged in chunks of VC keys in the scratch Q^T/K^T used.
// Only portable Kokkos: TeamPolicy, team scratch, team barriers; no vendor intrinsics, so one
// source serves Kokkos::Cuda and Kokkos::HIP. Host spaces keep portable_forward_kernel.hpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kokkos_common/kokkos_scalar.hpp"
#include "portable/portable_kernel_choice.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_scores.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {

// Register blocks and tiles per accumulation type. The team is TY x TX = 128 threads; Br = TY *
// RM query rows, Bc = TX * KM keys; scratch stays under 46 KB (Kokkos CUDA's level 0 is the
// 48 KB of a block without opt-in, less its reduction space).
template <class Acc>
struct DeviceTiles;

template <>
struct DeviceTiles<float> {
  static constexpr int RM = 8, KM = 4; // rows, keys per thread
  static constexpr int HC = 32;        // head-dim chunk of the Q^T / K^T staging
  static constexpr int VC = 32;        // keys per V chunk
};

template <>
struct DeviceTiles<double> {
  static constexpr int RM = 4, KM = 4;
  static constexpr int HC = 16;
  static constexpr int VC = 8;
};

// A block of 4 elements read or written as one vector where the target has vector loads.
template <class T>
struct alignas(4 * sizeof(T)) Quad {
  T v[4];
};

// kExtras: the instantiation that applies softcap, bias, ALiBi, boolean masks and dropout
// (inlined per score element they cost registers the plain kernel must not pay for).
template <class ExecSpace, class T, int HV, bool kExtras>
struct DeviceForwardKernel {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  using Cfg = DeviceTiles<Acc>;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<128, 2>>;
  using Team = typename Policy::member_type;

  static constexpr int TX = 16, TY = 8, kThreads = TX * TY;
  static constexpr int RM = Cfg::RM, KM = Cfg::KM, HC = Cfg::HC, VC = Cfg::VC;
  static constexpr int Br = TY * RM, Bc = TX * KM;
  static constexpr int NC = HV / TX; // output columns per thread, in quads 64 columns apart
  static constexpr int pad = 4;      // scratch row padding (keeps quads aligned)
  static constexpr int ldq = Br + pad, ldk = Bc + pad;
  static_assert((HV == 64 || HV == 128) && HV <= device_forward_max_hv, "value head dims 64, 128");
  static_assert(RM % 4 == 0 && KM == 4 && NC % 4 == 0, "quads of rows, keys and columns");
  static_assert(VC * HV <= HC * (ldq + ldk), "a V chunk reuses the Q^T and K^T scratch");
  static_assert(Bc % VC == 0, "V chunks tile a key tile");

  Common c;
  Rows<const T> q, k, v;
  Rows<T> out;
  Index n_qblocks = 0;

  static constexpr std::size_t scratch_size() {
    return scratch_bytes<Acc>(HC * (ldq + ldk)) + scratch_bytes<Acc>(Bc * ldq) +
           scratch_bytes<Acc>(TX * Br);
  }
  static_assert(scratch_size() <= 46 * 1024, "team scratch within a CUDA block's 48 KB");

  struct Scratch {
    Acc *qt, *kt, *vs, *pt, *red;
  };

  KOKKOS_INLINE_FUNCTION Scratch carve(const Team& team) const {
    const Carver<Team> cv(team, 0);
    Scratch s;
    s.qt = cv.template take<Acc>(HC * (ldq + ldk));
    s.kt = s.qt + HC * ldq;
    s.vs = s.qt; // V chunks reuse the Q^T / K^T chunk space (separated by barriers)
    s.pt = cv.template take<Acc>(Bc * ldq);
    s.red = cv.template take<Acc>(TX * Br);
    return s;
  }

  // The transposed Q and K chunks of a tile: qt[h][r] = scale * q[r][h0 + h] for r < rows,
  // kt[h][c] = k[c][h0 + h] for c < cols (0 past them and past H). A thread's quads (4
  // head-dim elements of a row; a row's chunk by consecutive threads) are loaded kDepth of Q and
  // kDepth of K at a time before they are stored, so that their memory latencies overlap (one
  // quad at a time left each load's latency exposed: a quarter of the stall samples under ncu);
  // more in flight cost registers the accumulators need (spills at head dim 128).
  static constexpr int kDepth = 2;
  template <class QRow, class KRow>
  KOKKOS_INLINE_FUNCTION void stage_qk(const Team& team, const Scratch& sc, int h0, int H, int rows,
                                       int cols, const QRow& q_row, const KRow& k_row,
                                       Acc scale) const {
    constexpr int per_row = HC / 4;
    constexpr int nq = Br * per_row / kThreads, nk = Bc * per_row / kThreads;
    static_assert(nq * kThreads == Br * per_row && nk * kThreads == Bc * per_row, "whole quads");
    constexpr int n = nq > nk ? nq : nk; // quads of the larger of the two
    static_assert(n % kDepth == 0 || n < kDepth, "rounds of kDepth quads");
    const int t = team.team_rank();
    KATTN_UNROLL
    for (int u0 = 0; u0 < n; u0 += kDepth) {
      Acc xq[kDepth][4], xk[kDepth][4];
      KATTN_UNROLL
      for (int d = 0; d < kDepth; ++d) {
        const int idx = t + (u0 + d) * kThreads, r = idx / per_row, h = (idx % per_row) * 4;
        if (u0 + d < nq)
          load_quad(r < rows ? q_row(r) : nullptr, h0 + h, H, q.sd, scale, xq[d]);
        if (u0 + d < nk)
          load_quad(r < cols ? k_row(r) : nullptr, h0 + h, H, k.sd, Acc(1), xk[d]);
      }
      KATTN_UNROLL
      for (int d = 0; d < kDepth; ++d) {
        const int idx = t + (u0 + d) * kThreads, r = idx / per_row, h = (idx % per_row) * 4;
        KATTN_UNROLL
        for (int e = 0; e < 4; ++e) {
          if (u0 + d < nq)
            sc.qt[(h + e) * ldq + r] = xq[d][e];
          if (u0 + d < nk)
            sc.kt[(h + e) * ldk + r] = xk[d][e];
        }
      }
    }
  }

  // V rows j0 + v0 .. + VC of the tile (0 past cols and past Hv) into vs[kk][HV], in rounds of
  // 2 * kDepth quads (as stage_qk).
  KOKKOS_INLINE_FUNCTION void stage_v(const Team& team, const Scratch& sc, Index b, Index kh,
                                      Index tok0, int cols_left, int Hv) const {
    constexpr int per_row = HV / 4, nv = VC * per_row / kThreads;
    constexpr int depth = nv < 2 * kDepth ? nv : 2 * kDepth;
    static_assert(nv * kThreads == VC * per_row && nv % depth == 0, "whole rounds of quads");
    const int t = team.team_rank();
    KATTN_UNROLL
    for (int u0 = 0; u0 < nv; u0 += depth) {
      Acc x[depth][4];
      KATTN_UNROLL
      for (int d = 0; d < depth; ++d) {
        const int idx = t + (u0 + d) * kThreads, kk = idx / per_row, h = (idx % per_row) * 4;
        load_quad(kk < cols_left ? v.data + v.at(b, tok0 + kk, kh, 0) : nullptr, h, Hv, v.sd,
                  Acc(1), x[d]);
      }
      KATTN_UNROLL
      for (int d = 0; d < depth; ++d) {
        const int idx = t + (u0 + d) * kThreads, kk = idx / per_row, h = (idx % per_row) * 4;
        *reinterpret_cast<Quad<Acc>*>(sc.vs + kk * HV + h) =
            Quad<Acc>{{x[d][0], x[d][1], x[d][2], x[d][3]}};
      }
    }
  }

  // x[e] = mul * src[(h + e) * sd] for h + e < H, else 0: one vector load where the four
  // elements are contiguous and aligned (the usual row), else element by element.
  KOKKOS_INLINE_FUNCTION static void load_quad(const T* src, int h, int H, Index sd, Acc mul,
                                               Acc* x) {
    if (src == nullptr) { // a row past the sequence
      KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        x[e] = 0;
      return;
    }
    const T* at = src + h;
    if (sd == 1 && h + 4 <= H && reinterpret_cast<std::uintptr_t>(at) % alignof(Quad<T>) == 0) {
      const Quad<T> v = *reinterpret_cast<const Quad<T>*>(at);
      KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        x[e] = Traits::load(v.v[e]) * mul;
      return;
    }
    KATTN_UNROLL
    for (int e = 0; e < 4; ++e)
      x[e] = h + e < H ? Traits::load(src[(h + e) * sd]) * mul : Acc(0);
  }

  // exp of a non-positive x (or -inf, or NaN): exp2 on the device's special-function unit after
  // one multiply. The host's polynomial exp_nonpositive (written to vectorise) costs ~17
  // instructions a score here; MUFU's: 1.05-1.07x the whole forward with the P.V loop below
  // (H100, benchmarks/results/h100-2026-12-06-portable-exp2.md).
  // f64 keeps Kokkos::exp (the rounded multiply would cost it ~1e-13 relative at x = -700).
  KOKKOS_FORCEINLINE_FUNCTION static Acc device_exp(Acc x) {
    if constexpr (std::is_same_v<Acc, float>)
      return Kokkos::exp2(x * 1.44269504f);
    else
      return Kokkos::exp(x);
  }

  KOKKOS_FUNCTION void operator()(const Team& team) const {
    const Index lr = team.league_rank();
    const QueryBlock blk = query_block(c, lr, n_qblocks, Br);
    const Index b = blk.b, n = blk.n, kh = blk.kh, i0 = blk.i0;
    const Seq& sq = blk.sq;
    const MaskRule& rule = blk.rule;
    const int rows = blk.rows, rows_out = blk.rows_out;
    if (rows_out == 0)
      return;

    const Scratch sc = carve(team);
    const int tid = team.team_rank();
    const int ty = tid / TX, tx = tid % TX;
    const int r0 = ty * RM; // first row of this thread in the block
    const int H = static_cast<int>(c.H), Hv = static_cast<int>(c.Hv);
    const Acc scale = static_cast<Acc>(c.scale);
    [[maybe_unused]] const bool extras = c.has_score_extras();
    [[maybe_unused]] const Acc slope = c.slopes ? static_cast<Acc>(c.slope(b, n)) : Acc(0);

    Acc o[RM][NC];
    Acc m[RM], l[RM];
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r) {
      m[r] = neg_inf<Acc>();
      l[r] = 0;
      KATTN_UNROLL
      for (int j = 0; j < NC; ++j)
        o[r][j] = 0;
    }

    const auto q_row = [&](int r) { return q.data + q.at(b, sq.q_tok0 + i0 + r, n, 0); };
    const IndexRange<Index> keys =
        rows > 0 ? rule.keys_of_rows(i0, i0 + rows - 1) : IndexRange<Index>{0, 0};
    // Keys every query row of the block sees.
    IndexRange<Index> all{0, 0};
    if (rows > 0) {
      all.lo = rule.keys_of_rows(i0 + rows - 1, i0 + rows - 1).lo;
      all.hi = rule.keys_of_rows(i0, i0).hi;
    }
    for (Index j0 = keys.first_tile(Bc); j0 < keys.hi; j0 += Bc) {
      const int cols = static_cast<int>(Kokkos::min(Index(Bc), sq.k_len - j0));
      const auto k_row = [&](int r) { return k.data + k.at(b, sq.k_tok0 + j0 + r, kh, 0); };

      // 1. S = (scale Q) K^T.
      Acc s[RM][KM];
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r)
        KATTN_UNROLL
      for (int e = 0; e < KM; ++e)
        s[r][e] = 0;
      for (int h0 = 0; h0 < H; h0 += HC) {
        team.team_barrier(); // the previous chunk (or the last tile's V) is read
        stage_qk(team, sc, h0, H, rows, cols, q_row, k_row, scale);
        team.team_barrier();
        KATTN_UNROLL_BY(8)
        for (int h = 0; h < HC; ++h) {
          Acc a[RM], kb[KM];
          KATTN_UNROLL
          for (int r = 0; r < RM; r += 4) {
            const Quad<Acc> x = *reinterpret_cast<const Quad<Acc>*>(sc.qt + h * ldq + r0 + r);
            KATTN_UNROLL
            for (int e = 0; e < 4; ++e)
              a[r + e] = x.v[e];
          }
          const Quad<Acc> y = *reinterpret_cast<const Quad<Acc>*>(sc.kt + h * ldk + tx * KM);
          KATTN_UNROLL
          for (int e = 0; e < KM; ++e)
            kb[e] = y.v[e];
          KATTN_UNROLL
          for (int r = 0; r < RM; ++r)
            KATTN_UNROLL
          for (int e = 0; e < KM; ++e)
            s[r][e] += a[r] * kb[e];
        }
      }

      // 2. The score rule. Keys a row does not see become -inf: only on tiles some query row
      //    of the block sees in part (the intersection of the rows' key ranges is [lo of the
      //    last row, hi of the first), both monotone in the row). Rows past the queries need
      //    nothing: their output is never read (written 0 below).
      if (kExtras || j0 < all.lo || j0 + Bc > all.hi) {
        KATTN_UNROLL
        for (int r = 0; r < RM; ++r) {
          int lo = 0, hi = 0;
          visible_cols(rule, i0 + r0 + r, j0, cols, lo, hi);
          KATTN_UNROLL
          for (int e = 0; e < KM; ++e) {
            const int cc = tx * KM + e;
            if (cc < lo || cc >= hi)
              s[r][e] = neg_inf<Acc>();
            else if constexpr (kExtras)
              if (extras && r0 + r < rows)
                s[r][e] = score_extra(c, rule, s[r][e], slope, b, n, i0 + r0 + r, j0 + cc);
          }
        }
      }
      Acc mx[RM];
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r) {
        mx[r] = neg_inf<Acc>();
        KATTN_UNROLL
        for (int e = 0; e < KM; ++e)
          mx[r] = s[r][e] > mx[r] ? s[r][e] : mx[r];
        sc.red[(r0 + r) * TX + tx] = mx[r];
      }
      team.team_barrier();

      // 3. Row max over the TX threads of a row, P = exp(S - m) into P^T, rescale.
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r) {
        Acc t = neg_inf<Acc>();
        KATTN_UNROLL
        for (int u = 0; u < TX; u += 4) {
          const Quad<Acc> x = *reinterpret_cast<const Quad<Acc>*>(sc.red + (r0 + r) * TX + u);
          KATTN_UNROLL
          for (int e = 0; e < 4; ++e)
            t = x.v[e] > t ? x.v[e] : t;
        }
        const Acc m_new = t > m[r] ? t : m[r];
        // A row that has seen nothing yet keeps -inf; exp(-inf - 0) = 0 keeps its P zero.
        const Acc base = m_new == neg_inf<Acc>() ? Acc(0) : m_new;
        const Acc alpha = device_exp(m[r] - base);
        m[r] = m_new;
        Acc sum = 0;
        KATTN_UNROLL
        for (int e = 0; e < KM; ++e) {
          Acc p = device_exp(s[r][e] - base);
          sum += p;
          if constexpr (kExtras)
            if (c.dropout && r0 + r < rows)
              p = c.keep(b, n, i0 + r0 + r, j0 + tx * KM + e) ? p * static_cast<Acc>(c.keep_scale)
                                                              : Acc(0);
          s[r][e] = p; // P, stored below as quads of rows
        }
        l[r] = l[r] * alpha + sum;
        KATTN_UNROLL
        for (int j = 0; j < NC; ++j)
          o[r][j] *= alpha;
      }
      KATTN_UNROLL
      for (int e = 0; e < KM; ++e)
        KATTN_UNROLL
      for (int r = 0; r < RM; r += 4)
        *reinterpret_cast<Quad<Acc>*>(sc.pt + (tx * KM + e) * ldq + r0 + r) =
            Quad<Acc>{{s[r][e], s[r + 1][e], s[r + 2][e], s[r + 3][e]}};

      // 4. O += P V, V in chunks of VC keys.
      for (int v0 = 0; v0 < cols; v0 += VC) {
        team.team_barrier(); // P^T written; the Q^T/K^T (or previous V) space is read
        stage_v(team, sc, b, kh, sq.k_tok0 + j0 + v0, cols - v0, Hv);
        team.team_barrier();
        // All VC keys of the chunk, a count the compiler knows: keys past the tile's end have
        // P = 0 (masked to -inf above) and V rows of 0 (stage_v), and the loop's loads are
        // issued ahead of their FMAs (the runtime count left each LDS used ~6 instructions on).
        KATTN_UNROLL_BY(4)
        for (int kk = 0; kk < VC; ++kk) {
          Acc p[RM], vv[NC];
          KATTN_UNROLL
          for (int r = 0; r < RM; r += 4) {
            const Quad<Acc> x =
                *reinterpret_cast<const Quad<Acc>*>(sc.pt + (v0 + kk) * ldq + r0 + r);
            KATTN_UNROLL
            for (int e = 0; e < 4; ++e)
              p[r + e] = x.v[e];
          }
          KATTN_UNROLL
          for (int g = 0; g < NC / 4; ++g) {
            const Quad<Acc> y =
                *reinterpret_cast<const Quad<Acc>*>(sc.vs + kk * HV + g * 4 * TX + tx * 4);
            KATTN_UNROLL
            for (int e = 0; e < 4; ++e)
              vv[g * 4 + e] = y.v[e];
          }
          KATTN_UNROLL
          for (int r = 0; r < RM; ++r)
            KATTN_UNROLL
          for (int j = 0; j < NC; ++j)
            o[r][j] += p[r] * vv[j];
        }
      }
    }

    // Row sums over the TX threads of a row, then out = O / l and the LSE.
    team.team_barrier(); // the last tile's reads of red are done
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r)
      sc.red[(r0 + r) * TX + tx] = l[r];
    team.team_barrier();
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r) {
      const int rr = r0 + r;
      if (rr >= rows_out)
        continue;
      Acc sum = 0;
      for (int u = 0; u < TX; ++u)
        sum += sc.red[rr * TX + u];
      // Else a fully masked or padded row (sum 0). A NaN sum (a NaN or +inf score) is live:
      // its out and LSE come out NaN (docs/semantics.md non_finite).
      const bool live = rr < rows && !(sum <= 0);
      const Acc inv = live ? Acc(1) / sum : Acc(0);
      const Index tok = sq.q_tok0 + i0 + rr;
      T* orow = out.data + out.at(b, tok, n, 0);
      KATTN_UNROLL
      for (int g = 0; g < NC / 4; ++g)
        KATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int h = g * 4 * TX + tx * 4 + e;
        if (h < Hv)
          orow[h * out.sd] = Traits::store(o[r][g * 4 + e] * inv);
      }
      if (c.lse && tx == 0)
        c.lse[b * c.lse_sb + n * c.lse_sn + tok * c.lse_st] =
            static_cast<float>(live ? m[r] + Kokkos::log(sum) : neg_inf<Acc>());
    }
  }
};

} // namespace kattn::portable
