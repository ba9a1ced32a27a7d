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

// ROWS rows of QPR quads staged by THREADS threads: TPR threads per row, QPT consecutive quads
// each (thread t: row t % ROWS, quads (t / ROWS) * QPT ..).
template <int ROWS, int QPR, int THREADS>
struct RowPart {
  static constexpr int TPR = THREADS / ROWS, QPT = QPR / TPR;
  static_assert(TPR * ROWS == THREADS && QPT * TPR == QPR, "rows split evenly over the team");
};

// The V chunk's split: TPR >= 8 threads per row on interleaved quads (8 lanes' 16-byte stores
// then cover the 32 banks, and their loads a 128-byte line), RPP rows per pass, NP passes.
template <int ROWS, int QPR, int THREADS>
struct VPart {
  static constexpr int TPR = THREADS / ROWS > 8 ? THREADS / ROWS : 8;
  static constexpr int RPP = THREADS / TPR, NP = ROWS / RPP, QPT = QPR / TPR;
  static_assert(TPR * RPP == THREADS && RPP * NP == ROWS && QPT * TPR == QPR,
                "rows split evenly over the team");
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

  // A thread's row of a staging step: p its element 0, lim the elements it has (H or Hv; a Q or
  // K row past the sequence has 0, stages as zeros, and p, then row 0's, is never read).
  struct RowRef {
    const T* p;
    int lim;
  };

  // Whether the rows from `first` on (element stride sd, token stride st) may be read as aligned
  // quads: every row start and every head-dim offset of 4 is then a multiple of Quad<T>'s size.
  KOKKOS_INLINE_FUNCTION static bool rows_vec(const T* first, Index sd, Index st) {
    return sd == 1 && st % 4 == 0 &&
           reinterpret_cast<std::uintptr_t>(first) % alignof(Quad<T>) == 0;
  }

  // The Q and K chunks split by rows (RowPart): thread t owns quads part * QPT .. of Q row
  // t % Br and of K row t % Bc, so that a warp's transposed stores go to consecutive words.
  using QPart = RowPart<Br, HC / 4, kThreads>;
  using KPart = RowPart<Bc, HC / 4, kThreads>;

  // The transposed Q and K chunks of a tile: qt[h][r] = scale * q[r][h0 + h] for r < rows,
  // kt[h][c] = k[c][h0 + h] for c < cols (0 past them and past H). With vec (team-uniform: both
  // rows_vec, and H % 4 == 0 or the chunk below H) all of a thread's quads are loaded before any
  // is stored, so that their latencies overlap; else element by element (strided or unaligned
  // rows are rare: a loop kept small).
  KOKKOS_INLINE_FUNCTION void stage_qk(const Scratch& sc, int t, int h0, const RowRef& qr,
                                       const RowRef& kr, Acc scale, bool vec) const {
    constexpr int nq = QPart::QPT, nk = KPart::QPT;
    const int hq = (t / Br) * 4 * nq, hk = (t / Bc) * 4 * nk; // the thread's first chunk column
    Acc* qd = sc.qt + hq * ldq + t % Br;
    Acc* kd = sc.kt + hk * ldk + t % Bc;
    const int q_left = qr.lim - h0 - hq, k_left = kr.lim - h0 - hk; // its row's elements left
    if (vec) {
      const T* qp = qr.p + h0 + hq;
      const T* kp = kr.p + h0 + hk;
      Quad<T> xq[nq], xk[nk];
      KATTN_UNROLL
      for (int i = 0; i < nq; ++i)
        xq[i] = 4 * i < q_left ? *reinterpret_cast<const Quad<T>*>(qp + 4 * i) : Quad<T>{};
      KATTN_UNROLL
      for (int i = 0; i < nk; ++i)
        xk[i] = 4 * i < k_left ? *reinterpret_cast<const Quad<T>*>(kp + 4 * i) : Quad<T>{};
      KATTN_UNROLL
      for (int i = 0; i < nq; ++i)
        KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        qd[(4 * i + e) * ldq] = Traits::load(xq[i].v[e]) * scale;
      KATTN_UNROLL
      for (int i = 0; i < nk; ++i)
        KATTN_UNROLL
      for (int e = 0; e < 4; ++e)
        kd[(4 * i + e) * ldk] = Traits::load(xk[i].v[e]);
      return;
    }
    KATTN_UNROLL_BY(1)
    for (int h = 0; h < 4 * nq; ++h)
      qd[h * ldq] = h < q_left ? Traits::load(qr.p[(h0 + hq + h) * q.sd]) * scale : Acc(0);
    KATTN_UNROLL_BY(1)
    for (int h = 0; h < 4 * nk; ++h)
      kd[h * ldk] = h < k_left ? Traits::load(kr.p[(h0 + hk + h) * k.sd]) : Acc(0);
  }

  using VP = VPart<VC, HV / 4, kThreads>;

  // V rows of a chunk (0 past the tile's keys and past Hv) into vs[kk][HV]: thread t owns row
  // t / TPR (and those RPP, 2 RPP, .. below it) and its quads t % TPR + TPR i. vr: its first row
  // (left: the rows from it on that hold keys); vec: rows_vec and Hv % 4 == 0.
  KOKKOS_INLINE_FUNCTION void stage_v(const Scratch& sc, int t, const RowRef& vr, int left,
                                      bool vec) const {
    constexpr int TPR = VP::TPR, RPP = VP::RPP, NP = VP::NP, nv = VP::QPT;
    const int h = (t % TPR) * 4;
    Acc* dst = sc.vs + (t / TPR) * HV + h;
    const int h_left = vr.lim - h;
    if (vec) {
      Quad<T> x[NP][nv];
      KATTN_UNROLL
      for (int p = 0; p < NP; ++p)
        KATTN_UNROLL
      for (int i = 0; i < nv; ++i)
        x[p][i] = p * RPP < left && 4 * TPR * i < h_left
                      ? *reinterpret_cast<const Quad<T>*>(vr.p + p * RPP * v.st + h + 4 * TPR * i)
                      : Quad<T>{};
      KATTN_UNROLL
      for (int p = 0; p < NP; ++p)
        KATTN_UNROLL
      for (int i = 0; i < nv; ++i)
        *reinterpret_cast<Quad<Acc>*>(dst + p * RPP * HV + 4 * TPR * i) =
            Quad<Acc>{{Traits::load(x[p][i].v[0]), Traits::load(x[p][i].v[1]),
                       Traits::load(x[p][i].v[2]), Traits::load(x[p][i].v[3])}};
      return;
    }
    KATTN_UNROLL_BY(1)
    for (int p = 0; p < NP; ++p)
      KATTN_UNROLL_BY(1)
    for (int u = 0; u < 4 * nv; ++u) {
      const int hh = 4 * TPR * (u / 4) + u % 4; // element u of the thread's quads
      dst[p * RPP * HV + hh] = p * RPP < left && hh < h_left
                                   ? Traits::load(vr.p[p * RPP * v.st + (h + hh) * v.sd])
                                   : Acc(0);
    }
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

    // The thread's staging rows (a row past the sequence points at row 0 and stages zeros), and
    // whether quads may be read (rows_vec on the sequence's first row: st % 4 == 0 keeps the
    // others aligned).
    const int qrow = tid % Br, krow = tid % Bc, vrow = tid / VP::TPR;
    const auto q_ref = [&] {
      return RowRef{q.data + q.at(b, sq.q_tok0 + i0 + (qrow < rows ? qrow : 0), n, 0),
                    qrow < rows ? H : 0};
    };
    // The plain kernel keeps its Q row across the key loop, kExtras takes it again per tile
    // (each the fewer registers under ptxas, f32 HV=128: 225 against 231, 237 against 255).
    [[maybe_unused]] const RowRef qr_block = q_ref();
    const bool qk_vec = rows_vec(q.data + q.at(b, sq.q_tok0, n, 0), q.sd, q.st) &&
                        rows_vec(k.data + k.at(b, sq.k_tok0, kh, 0), k.sd, k.st);
    const bool v_vec = Hv % 4 == 0 && rows_vec(v.data + v.at(b, sq.k_tok0, kh, 0), v.sd, v.st);
    const IndexRange<Index> keys =
        rows > 0 ? rule.keys_of_rows(i0, i0 + rows - 1) : IndexRange<Index>{0, 0};
    // Keys every query row of the block sees.
    IndexRange<Index> all{0, 0};
    if (rows > 0) {
      all.lo = rule.keys_of_rows(i0 + rows - 1, i0 + rows - 1).lo;
      all.hi = rule.keys_of_rows(i0, i0).hi;
    }
    // The key tiles as 32-bit counts: nt of them from jf, and [t_lo, t_hi) those inside `all`
    // (none of their keys hidden from any row); fewer 64-bit values live across the loop.
    const Index jf = keys.first_tile(Bc);
    const int nt = static_cast<int>((keys.hi - jf + Bc - 1) / Bc);
    const int t_lo = static_cast<int>(Kokkos::min(Index(nt), (all.lo - jf + Bc - 1) / Bc));
    const int t_hi = all.hi > jf ? static_cast<int>(Kokkos::min(Index(nt), (all.hi - jf) / Bc)) : 0;
    for (int it = 0; it < nt; ++it) {
      const Index j0 = jf + Index(it) * Bc;
      const int cols = static_cast<int>(Kokkos::min(Index(Bc), sq.k_len - j0));
      const RowRef qr = kExtras ? q_ref() : qr_block;
      const RowRef kr{k.data + k.at(b, sq.k_tok0 + j0 + (krow < cols ? krow : 0), kh, 0),
                      krow < cols ? H : 0};

      // 1. S = (scale Q) K^T.
      Acc s[RM][KM];
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r)
        KATTN_UNROLL
      for (int e = 0; e < KM; ++e)
        s[r][e] = 0;
      for (int h0 = 0; h0 < H; h0 += HC) {
        team.team_barrier(); // the previous chunk (or the last tile's V) is read
        stage_qk(sc, tid, h0, qr, kr, scale, qk_vec && (H % 4 == 0 || h0 + HC <= H));
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
      //    nothing: their output is never read (written 0 below), so they are not tested.
      //    Row i sees key j when j < k_len, j >= i + d - left and j <= i + d + right (d: the
      //    diagonal offset; a negative window side is unbounded): for the thread's element (r,
      //    e), key j0 + tx KM + e of row i0 + r0 + r, that is e < cl and lo <= e - r < hi, with
      //    lo, hi clamped to [-RM, KM] (e - r lies in (-RM, KM), so that changes no test).
      if (kExtras || it < t_lo || it >= t_hi) {
        const Index base = i0 + r0 + rule.diag_offset - j0 - tx * KM;
        const int lo =
            rule.window_left < 0
                ? -RM
                : static_cast<int>(Kokkos::clamp(base - rule.window_left, Index(-RM), Index(KM)));
        const int hi = rule.window_right < 0
                           ? KM
                           : static_cast<int>(Kokkos::clamp(base + rule.window_right + 1,
                                                            Index(-RM), Index(KM)));
        const int cl = cols - tx * KM;
        KATTN_UNROLL
        for (int r = 0; r < RM; ++r)
          KATTN_UNROLL
        for (int e = 0; e < KM; ++e) {
          if (e - r < lo || e - r >= hi || e >= cl)
            s[r][e] = neg_inf<Acc>();
          else if constexpr (kExtras)
            if (extras && r0 + r < rows)
              s[r][e] = score_extra(c, rule, s[r][e], slope, b, n, i0 + r0 + r, j0 + tx * KM + e);
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
        team.team_barrier();               // P^T written; the Q^T/K^T (or previous V) space is read
        const int left = cols - v0 - vrow; // keys of the chunk from the thread's row on
        const RowRef vr{v.data + v.at(b, sq.k_tok0 + j0 + v0 + (left > 0 ? vrow : 0), kh, 0), Hv};
        stage_v(sc, tid, vr, left, v_vec);
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
