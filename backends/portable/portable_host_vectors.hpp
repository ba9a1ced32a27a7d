// The forward's softmax pass over one chunk of 8 query rows, written with GCC/Clang vector
// extensions for host builds. The generic loop in portable_forward_kernel.hpp computes the same
// values, but GCC does not vectorise it (it stays scalar at -O2 and -O3, measured: ~4 ns per
// score on Zen 3), and the softmax then costs more than both tile products together. Here one
// 8-lane vector holds the chunk's 8 rows, so every step is a plain vertical vector operation.
// Tiles that every query row sees whole also get their score product here (scores_with_max: a
// 6 x 16 register block that hands the softmax each row's max) and an unmasked softmax pass;
// tiles that some rows see only in part (the causal diagonal) get their whole step here
// (masked_tile), computed over just the keys the rows see.
//
// Compiled only by host compilers (never nvcc/hipcc/SYCL) targeting AVX, where the 8 lanes are
// one register (elsewhere GCC would split them and warn that passing them changes the ABI),
// for float accumulation. Other targets keep the generic loop.
#pragma once

#if defined(__GNUC__) && defined(__AVX__) && !defined(__CUDACC__) && !defined(__HIPCC__) &&        \
    !defined(SYCL_LANGUAGE_VERSION)
#define KATTN_PORTABLE_HOST_VECTORS 1

#include <cstdint>
#include <cstring>

namespace kattn::portable::host_vectors {

using f8 = float __attribute__((vector_size(32)));
using i8 = std::int32_t __attribute__((vector_size(32)));

inline f8 load(const float* p) {
  f8 v;
  std::memcpy(&v, p, sizeof v); // unaligned-safe; compiles to one vector load
  return v;
}

inline void store(float* p, f8 v) {
  std::memcpy(p, &v, sizeof v);
}

// Prefetches the 64-byte lines of [p, p + bytes) into L1, for reading or for writing. Rows of the
// [B, T, heads, H] layouts are heads * H elements apart (2 KiB for the benchmark's fp32, two rows
// to a 4 KiB page), a stride the hardware prefetchers do not follow across pages: a loop over
// such rows otherwise waits on each row's lines in turn.
inline void prefetch_read(const void* p, int bytes) {
  for (int i = 0; i < bytes; i += 64)
    __builtin_prefetch(static_cast<const char*>(p) + i, 0, 3);
}

inline void prefetch_write(const void* p, int bytes) {
  for (int i = 0; i < bytes; i += 64)
    __builtin_prefetch(static_cast<const char*>(p) + i, 1, 3);
}

inline f8 splat(float x) {
  return f8{x, x, x, x, x, x, x, x}; // one broadcast (f8{} + x would add 0 first)
}

// exp(x) for x <= 0 lane by lane: the Cody-Waite reduction and degree-7 Taylor polynomial of
// the scalar exp_nonpositive in portable_tile.hpp (which it matches to about an ulp), with
// fewer operations: t = x / ln2 + (1.5 * 2^23 + 127) rounds x / ln2 to an integer n and leaves
// n + 127 in the low bits of t, so shifting t's bits up gives 2^n without a conversion; lanes
// below -87 (-inf included) are not clamped but cleared by a mask at the end. NaN lanes stay
// NaN (docs/semantics.md non_finite), as in the scalar version.
inline f8 exp_nonpositive(f8 x) {
  const i8 keep = ~(x < -87.0f); // exp(-87) ~ 1.6e-38: flush to 0 below; NaN compares false
  const f8 t = x * 1.44269504088896341f + 12583039.0f;
  const f8 n = t - 12583039.0f;
  f8 r = x - n * 0.693145751953125f;    // ln2 high part (exact product for |n| < 2^11)
  r = r - n * 1.42860682030941723e-06f; // ln2 low part
  f8 p = splat(1.0f / 5040.0f);
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  i8 bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits <<= 23;
  f8 scale;
  std::memcpy(&scale, &bits, sizeof scale);
  const f8 y = p * scale;
  std::memcpy(&bits, &y, sizeof bits);
  bits &= keep;
  f8 out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Rows r0 .. r0+7 of the transposed score tile st[.][ld] (st[cc * ld + r]), over the tile keys
// [c0, c1): live keys of row u are [lo[u], hi[u]). Updates the running max m and sum l of the
// rows, overwrites the scores of those keys with P = exp(S - m_new) (0 where not live) and
// returns, through alpha, the factors exp(m_old - m_new) the rows' accumulators must be
// rescaled by.
inline void softmax_chunk8(float* st, int ld, int r0, int c0, int c1, const int* lo, const int* hi,
                           float* m, float* l, float* alpha) {
  i8 vlo, vhi;
  std::memcpy(&vlo, lo, sizeof vlo);
  std::memcpy(&vhi, hi, sizeof vhi);
  const f8 ninf = splat(-__builtin_inff());
  f8 mx = ninf;
  for (int cc = c0; cc < c1; ++cc) {
    const i8 live = (vlo <= cc) & (vhi > cc);
    const f8 x = live ? load(st + cc * ld + r0) : ninf;
    mx = x > mx ? x : mx;
  }
  const f8 m_old = load(m + r0);
  const f8 m_new = mx > m_old ? mx : m_old;
  // A row that has seen nothing yet keeps -inf; exp(-inf - 0) = 0 keeps its P zero.
  const f8 base = m_new == ninf ? splat(0.0f) : m_new;
  const f8 a = exp_nonpositive(m_old - base);
  store(m + r0, m_new);
  f8 sum = splat(0.0f);
  for (int cc = c0; cc < c1; ++cc) {
    float* col = st + cc * ld + r0;
    const i8 live = (vlo <= cc) & (vhi > cc);
    const f8 p = exp_nonpositive((live ? load(col) : ninf) - base);
    store(col, p);
    sum += p;
  }
  store(l + r0, load(l + r0) * a + sum);
  store(alpha, a);
}

// st[key * ld + q] = sum_h k[key * k_ld + h] * qt[h * ld + q] for keys < nk (a multiple of
// scores_mr) and queries < nq (a multiple of 16): the transposed score tile S^T = K Q^T of a tile
// that every query row sees whole. Also cmax[q] = max over the keys < valid (<= nk; the rest are
// padding) of st[. * ld + q], the row max the softmax pass then need not search for. Query strips
// of 16 are the outer loop so that a strip's max stays in registers; each 6 x 16 block keeps 12
// accumulators in registers.
inline constexpr int scores_mr = 6; // keys per register block of scores_with_max

// One 6 x 16 register block of S^T: a0/a1[r] = sum_h kr[r * k_ld + h] * b[h * ld + (0..15)].
[[gnu::always_inline]] inline void score_block(const float* kr, int k_ld, const float* b, int ld,
                                               int H, f8 (&a0)[scores_mr], f8 (&a1)[scores_mr]) {
#pragma GCC unroll 8
  for (int r = 0; r < scores_mr; ++r)
    a0[r] = a1[r] = splat(0.0f);
  for (int h = 0; h < H; ++h) {
    const f8 b0 = load(b + h * ld), b1 = load(b + h * ld + 8);
#pragma GCC unroll 8
    for (int r = 0; r < scores_mr; ++r) {
      const f8 x = splat(kr[r * k_ld + h]);
      a0[r] += x * b0;
      a1[r] += x * b1;
    }
  }
}

// One 6 x 16 block of scores_with_max: S^T rows m0 .. m0+5 of a 16-query strip stored to s, and
// the strip's running max mx0/mx1 raised by the block's first nv (<= 6) rows. The block's own max
// is a tree, then one step of the running max. (Six steps of the running max per block, as
// before, made a chain through mx, which GCC keeps in memory here (17 live vectors): each step
// waited on store-to-load forwarding, ~12% of the whole product's time by perf annotate.) Full
// blocks pass nv = 6, a constant, so the masking folds away.
[[gnu::always_inline]] inline void score_block_max(const float* kr, int k_ld, const float* b,
                                                   int ld, int H, float* s, int nv, f8& mx0,
                                                   f8& mx1) {
  constexpr int MR = scores_mr;
  static_assert(MR == 6, "the block max is a tree over 6 rows");
  f8 a0[MR], a1[MR];
  score_block(kr, k_ld, b, ld, H, a0, a1);
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
    store(s + r * ld, a0[r]);
    store(s + r * ld + 8, a1[r]);
  }
  const f8 ninf = splat(-__builtin_inff());
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
    if (r >= nv) // padding keys of the last block take no part in the max
      a0[r] = a1[r] = ninf;
  const auto vmax = [](f8 x, f8 y) { return x > y ? x : y; };
  mx0 = vmax(mx0, vmax(vmax(vmax(a0[0], a0[1]), vmax(a0[2], a0[3])), vmax(a0[4], a0[5])));
  mx1 = vmax(mx1, vmax(vmax(vmax(a1[0], a1[1]), vmax(a1[2], a1[3])), vmax(a1[4], a1[5])));
}

inline void scores_with_max(int nk, int valid, int nq, int H, const float* k, int k_ld,
                            const float* qt, float* st, int ld, float* cmax) {
  constexpr int MR = scores_mr;
  const int full = valid < nk ? valid / MR * MR : nk; // blocks of valid keys only
  for (int n0 = 0; n0 < nq; n0 += 16) {
    f8 mx0 = splat(-__builtin_inff()), mx1 = mx0;
    int m0 = 0;
    for (; m0 < full; m0 += MR)
      score_block_max(k + m0 * k_ld, k_ld, qt + n0, ld, H, st + m0 * ld + n0, MR, mx0, mx1);
    for (; m0 < nk; m0 += MR)
      score_block_max(k + m0 * k_ld, k_ld, qt + n0, ld, H, st + m0 * ld + n0, valid - m0, mx0, mx1);
    store(cmax + n0, mx0);
    store(cmax + n0 + 8, mx1);
  }
}

// softmax_chunk8 for a tile whose first nk keys every row of the chunk sees, given the rows'
// max over them (cmax, from scores_with_max): one pass, no masking; keys from nk on are left
// as they are (the P V product reads only nk).
inline void softmax_full_chunk8(float* st, int ld, int r0, int nk, const float* cmax, float* m,
                                float* l, float* alpha) {
  const f8 mx = load(cmax + r0);
  const f8 m_old = load(m + r0);
  const f8 m_new = mx > m_old ? mx : m_old;
  const f8 base = m_new == splat(-__builtin_inff()) ? splat(0.0f) : m_new;
  const f8 a = exp_nonpositive(m_old - base);
  store(m + r0, m_new);
  f8 sum = splat(0.0f);
  for (int cc = 0; cc < nk; ++cc) {
    float* col = st + cc * ld + r0;
    const f8 p = exp_nonpositive(load(col) - base);
    store(col, p);
    sum += p;
  }
  store(l + r0, load(l + r0) * a + sum);
  store(alpha, a);
}

// One tile that not every query row sees whole (the causal diagonal tile, a window's edge), with
// no score extras and no dropout: S^T = K Q^T, the masked online softmax and O = alpha O + P V,
// each computed only over the keys the rows in question see. Query row r (< nq, a multiple of
// 48) sees tile keys [lo[r], hi[r]) (0 <= lo, hi <= the tile's keys; lo >= hi: none). The
// scores skip the 6-key blocks no row of a 16-query strip sees; the softmax runs, per 8-row
// chunk, over the keys of the 6-row blocks of P V that overlap it (it writes P = 0 where a row
// does not see a key, so every P each block's product reads is written); the P V product runs
// each 6-row block over the keys its rows see. Scores outside a strip's blocks are never
// written: they belong to keys no row of the strip sees, so the softmax replaces them by -inf
// before it looks at them. On the causal diagonal this does ~55% of the full tile's work.
// k: the tile's keys (rows k_ld apart, every 6-key block that a range touches readable);
// qt[h * nq + q] the pre-scaled queries; st[key * nq + q] scratch for S^T and P^T; v rows v_ld
// apart, nv (a multiple of 16) values each; o[q * nv + d] the accumulator; m, l running max and
// sum; alpha (nq) scratch.
inline constexpr int masked_max_rows = 192;

inline void masked_tile(int nq, const int* lo, const int* hi, int H, const float* k, int k_ld,
                        const float* qt, float* st, int nv, const float* v, int v_ld, float* o,
                        float* m, float* l, float* alpha) {
  constexpr int MR = scores_mr;
  // Union of the key ranges of rows [r0, r1); lo >= hi when none.
  const auto span = [&](int r0, int r1, int& a, int& b) {
    a = 1 << 30;
    b = 0;
    for (int r = r0; r < r1; ++r)
      if (lo[r] < hi[r]) {
        a = lo[r] < a ? lo[r] : a;
        b = hi[r] > b ? hi[r] : b;
      }
  };
  int blo[masked_max_rows / MR], bhi[masked_max_rows / MR];
  for (int bk = 0; bk < nq / MR; ++bk)
    span(bk * MR, bk * MR + MR, blo[bk], bhi[bk]);

  // S^T over the 6-key blocks each 16-query strip sees.
  for (int n0 = 0; n0 < nq; n0 += 16) {
    int a, b;
    span(n0, n0 + 16, a, b);
    for (int m0 = a / MR * MR; m0 < b; m0 += MR) {
      f8 a0[MR], a1[MR];
      score_block(k + m0 * k_ld, k_ld, qt + n0, nq, H, a0, a1);
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        store(st + (m0 + r) * nq + n0, a0[r]);
        store(st + (m0 + r) * nq + n0 + 8, a1[r]);
      }
    }
  }

  // Masked softmax per 8-row chunk over the keys of the P V blocks overlapping it.
  for (int r0 = 0; r0 < nq; r0 += 8) {
    const int b_first = r0 / MR, b_last = (r0 + 7) / MR;
    int a = 1 << 30, b = 0;
    for (int bk = b_first; bk <= b_last; ++bk)
      if (blo[bk] < bhi[bk]) {
        a = blo[bk] < a ? blo[bk] : a;
        b = bhi[bk] > b ? bhi[bk] : b;
      }
    softmax_chunk8(st, nq, r0, a, b, lo + r0, hi + r0, m, l, alpha + r0);
  }

  // O = alpha O + P V, each 6-row block over its rows' keys.
  for (int bk = 0; bk < nq / MR; ++bk) {
    const int m0 = bk * MR;
    for (int n0 = 0; n0 < nv; n0 += 16) {
      f8 a0[MR], a1[MR];
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        const f8 s = splat(alpha[m0 + r]);
        a0[r] = load(o + (m0 + r) * nv + n0) * s;
        a1[r] = load(o + (m0 + r) * nv + n0 + 8) * s;
      }
      for (int cc = blo[bk]; cc < bhi[bk]; ++cc) {
        const f8 b0 = load(v + cc * v_ld + n0), b1 = load(v + cc * v_ld + n0 + 8);
        const float* p = st + cc * nq + m0;
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const f8 x = splat(p[r]);
          a0[r] += x * b0;
          a1[r] += x * b1;
        }
      }
#pragma GCC unroll 8
      for (int r = 0; r < MR; ++r) {
        store(o + (m0 + r) * nv + n0, a0[r]);
        store(o + (m0 + r) * nv + n0 + 8, a1[r]);
      }
    }
  }
}

} // namespace kattn::portable::host_vectors

#endif
