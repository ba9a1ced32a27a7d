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
#include "portable/portable_device_products.hpp"
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

// kExtras: the instantiation that applies softcap, bias, ALiBi, boolean masks and dropout
// (inlined per score element they cost registers the plain kernel must not pay for).
template <class ExecSpace, class T, int HV, bool kExtras>
struct DeviceForwardKernel {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  using Cfg = DeviceTiles<Acc>;
  // Three teams per SM where the kernel fits 168 registers without spilling (fp32
  // accumulation, value head dim 64, no extras: 1.10-1.13x on the H100, run s33; the others
  // spill at 168 and keep two).
  static constexpr int kTeamsPerSM = HV == 64 && !kExtras && std::is_same_v<Acc, float> ? 3 : 2;
  using Policy = Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<128, kTeamsPerSM>>;
  using Team = typename Policy::member_type;

  static constexpr int TX = 16, TY = 8, kThreads = TX * TY;
  static constexpr int RM = Cfg::RM, KM = Cfg::KM, HC = Cfg::HC, VC = Cfg::VC;
  static constexpr int Br = TY * RM, Bc = TX * KM;
  static constexpr int NC = HV / TX; // output columns per thread, in quads 64 columns apart
  // S = (scale Q) K^T over Q^T and K^T chunks, O += P V over row-major V chunks.
  using QK = ScoreProduct<Traits, Br, Bc, RM, KM, HC, kThreads>;
  using PV = RowsProduct<Traits, RM, NC, TX, VC, HV, kThreads>;
  static constexpr int ldq = QK::lda, ldk = QK::ldb; // padded scratch rows
  static_assert((HV == 64 || HV == 128) && HV <= device_forward_max_hv, "value head dims 64, 128");
  static_assert(RM % 4 == 0 && KM == 4 && NC % 4 == 0, "quads of rows, keys and columns");
  static_assert(PV::scratch_elems <= QK::scratch_elems, "a V chunk reuses the Q^T and K^T scratch");
  static_assert(Bc % VC == 0, "V chunks tile a key tile");

  Common c;
  Rows<const T> q, k, v;
  Rows<T> out;
  Index n_qblocks = 0;
  // prep mode (the first step of the device backward, portable_device_backward_kernel.hpp): no
  // out; LSE and D = rowsum(dout * O) of the unrounded O, in Acc, into lse_acc and delta
  // [B][N][T] (the tiles kernel's prep, portable_forward_kernel.hpp). On when lse_acc is set.
  Rows<const T> dout;
  Acc* lse_acc = nullptr;
  Acc* delta = nullptr;

  static constexpr std::size_t scratch_size() {
    return scratch_bytes<Acc>(QK::scratch_elems) + scratch_bytes<Acc>(Bc * ldq) +
           scratch_bytes<Acc>(TX * Br);
  }
  static_assert(scratch_size() <= 46 * 1024, "team scratch within a CUDA block's 48 KB");

  struct Scratch {
    Acc *qt, *kt, *vs, *pt, *red;
  };

  KOKKOS_INLINE_FUNCTION Scratch carve(const Team& team) const {
    const Carver<Team> cv(team, 0);
    Scratch s;
    s.qt = cv.template take<Acc>(QK::scratch_elems);
    s.kt = s.qt + HC * ldq;
    s.vs = s.qt; // V chunks reuse the Q^T / K^T chunk space (separated by barriers)
    s.pt = cv.template take<Acc>(Bc * ldq);
    s.red = cv.template take<Acc>(TX * Br);
    return s;
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
    const int qrow = tid % Br, krow = tid % Bc;
    const auto q_ref = [&] {
      return RowRef<T>{q.data + q.at(b, sq.q_tok0 + i0 + (qrow < rows ? qrow : 0), n, 0),
                       qrow < rows ? H : 0};
    };
    // The plain kernel keeps its Q row across the key loop, kExtras takes it again per tile
    // (each the fewer registers under ptxas, f32 HV=128: 225 against 231, 237 against 255).
    [[maybe_unused]] const RowRef<T> qr_block = q_ref();
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
      const RowRef<T> qr = kExtras ? q_ref() : qr_block;
      const RowRef<T> kr{k.data + k.at(b, sq.k_tok0 + j0 + (krow < cols ? krow : 0), kh, 0),
                         krow < cols ? H : 0};

      // 1. S = (scale Q) K^T.
      Acc s[RM][KM];
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r)
        KATTN_UNROLL
      for (int e = 0; e < KM; ++e)
        s[r][e] = 0;
      QK::run(team, s, sc.qt, tid, r0, tx * KM, H, qr, q.sd, kr, k.sd, scale, qk_vec);

      // 2. The score rule. Keys a row does not see become -inf: only on tiles some query row
      //    of the block sees in part (the intersection of the rows' key ranges is [lo of the
      //    last row, hi of the first), both monotone in the row). Rows past the queries need
      //    nothing: their output is never read (written 0 below), so they are not tested.
      //    Row i sees key j when j < k_len, j >= i + d - left and j <= i + d + right (d: the
      //    diagonal offset; a negative window side is unbounded): for the thread's element (r,
      //    e), key j0 + tx KM + e of row i0 + r0 + r, that is e < cl and lo <= e - r < hi
      //    (MaskRule::window_band, clamped to [-RM, KM]: 32-bit bounds).
      if (kExtras || it < t_lo || it >= t_hi) {
        const IndexRange<Index> band = rule.window_band(i0 + r0, j0 + tx * KM, -RM, KM);
        const int lo = static_cast<int>(band.lo), hi = static_cast<int>(band.hi);
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

      // 4. O += P V, V in chunks of VC keys (over all of them: P^T is 0 past cols).
      PV::run(team, o, sc.pt, ldq, sc.vs, tid, r0, tx, cols,
              v.data + v.at(b, sq.k_tok0 + j0, kh, 0), v.st, v.sd, Hv, v_vec);
    }

    // Row sums over the TX threads of a row, then out = O / l and the LSE (prep: the thread's
    // part of D, summed over the TX threads of the row below).
    const bool prep = lse_acc != nullptr;
    team.team_barrier(); // the last tile's reads of red are done
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r)
      sc.red[(r0 + r) * TX + tx] = l[r];
    team.team_barrier();
    Acc d_part[RM], lse[RM];
    KATTN_UNROLL
    for (int r = 0; r < RM; ++r) {
      const int rr = r0 + r;
      d_part[r] = 0;
      lse[r] = neg_inf<Acc>();
      if (rr >= rows_out)
        continue;
      Acc sum = 0;
      for (int u = 0; u < TX; ++u)
        sum += sc.red[rr * TX + u];
      // Else a fully masked or padded row (sum 0). A NaN sum (a NaN or +inf score) is live:
      // its out and LSE come out NaN (docs/semantics.md non_finite). The sink, if any, joins
      // the denominator (Common::end_row, as the team kernels').
      bool live;
      Acc inv;
      c.end_row(n, rr < rows, m[r], sum, live, inv, lse[r]);
      const Index tok = sq.q_tok0 + i0 + rr;
      if (prep) {
        const T* drow = dout.data + dout.at(b, tok, n, 0);
        KATTN_UNROLL
        for (int g = 0; g < NC / 4; ++g)
          KATTN_UNROLL
        for (int e = 0; e < 4; ++e) {
          const int h = g * 4 * TX + tx * 4 + e;
          if (live && h < Hv)
            d_part[r] += Traits::load(drow[h * dout.sd]) * (o[r][g * 4 + e] * inv);
        }
        continue;
      }
      store_row_part<Traits, TX>(out.data + out.at(b, tok, n, 0), out.sd, o[r], tx, Hv, inv);
      if (c.lse && tx == 0)
        c.lse[b * c.lse_sb + n * c.lse_sn + tok * c.lse_st] = static_cast<float>(lse[r]);
    }
    if (prep) {            // team-uniform
      team.team_barrier(); // the row sums are read
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r)
        sc.red[(r0 + r) * TX + tx] = d_part[r];
      team.team_barrier();
      KATTN_UNROLL
      for (int r = 0; r < RM; ++r) {
        const int rr = r0 + r;
        if (tx != 0 || rr >= rows_out)
          continue;
        Acc d = 0;
        for (int u = 0; u < TX; ++u)
          d += sc.red[rr * TX + u];
        const Index at = (b * c.N + n) * c.T + i0 + rr;
        lse_acc[at] = lse[r];
        delta[at] = d;
      }
    }
  }
};

} // namespace kattn::portable
