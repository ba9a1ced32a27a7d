// The f32 and f64 forward: sm80's kernel structure (one CTA per (query block, head, batch), the
// same cp.async pipeline and mask rule: fwd_kernel.cuh) with tiles, tensor-core products and an
// online softmax in the element type itself (wide_math.cuh: f64 MMAs, or fp32 by the 3xTF32
// split), so the result carries that type's rounding.
//
// Fragments (m16n8k8, ptx.cuh): lane (g, t) holds score columns 2t and 2t + 1 of each
// 8-key tile in rows g and g + 8 of its warp's 16. P.V sums over keys in any order, so its k
// index t stands for key 2t and t + 4 for key 2t + 1: P's A fragment is then the score registers
// themselves and V's B fragment is V[2t][column g], V[2t + 1][column g] (wide_config.cuh's V
// stride keeps those reads conflict-free).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kattn_kernels/flash_params.hpp"
#include "sm80/block_info.cuh"
#include "sm80/ptx.cuh"
#include "sm80/softmax.cuh"
#include "sm80/wide_config.cuh"
#include "sm80/wide_math.cuh"

namespace kattn::cuda_kernels::sm80 {

// The 16-byte chunks of a [ROWS, HD] tile (rows of STRIDE elements) that thread `tid` moves:
// chunk `chunk` of rows row0 + it * ROWS_PER_STEP. The copy and the conversion below walk the
// same chunks, so a thread converts only what its own cp.async wrote (visible to it after
// cp_async_wait, no barrier in between).
template <int HD, int ROWS, int STRIDE, int THREADS, class T>
struct TileChunks {
  static constexpr int CHUNK = 16 / static_cast<int>(sizeof(T));
  static constexpr int CHUNKS = HD / CHUNK;
  static constexpr int ROWS_PER_STEP = THREADS / CHUNKS;
  static constexpr int STEPS = ROWS / ROWS_PER_STEP;
  static_assert(THREADS % CHUNKS == 0 && ROWS % ROWS_PER_STEP == 0, "uneven tile split");
  int row0, chunk;
  __device__ __forceinline__ explicit TileChunks(int tid)
      : row0(tid / CHUNKS), chunk(tid % CHUNKS) {}
  // Offset (elements) of this thread's chunk in step `it`.
  __device__ __forceinline__ int at(int it) const {
    return (row0 + it * ROWS_PER_STEP) * STRIDE + chunk * CHUNK;
  }
};

// Global -> shared copy of a [ROWS, HD] tile, 16 bytes per cp.async; rows past `valid_rows` are
// zero-filled (exact zeros in S and P.V).
template <int HD, int ROWS, int STRIDE, int THREADS, class T>
__device__ __forceinline__ void
copy_wide_tile_async(T* smem, const T* gmem, std::int64_t row_stride, int valid_rows, int tid) {
  using Chunks = TileChunks<HD, ROWS, STRIDE, THREADS, T>;
  const Chunks c(tid);
  const T* src = gmem + c.row0 * row_stride + c.chunk * Chunks::CHUNK;
  const std::int64_t step = Chunks::ROWS_PER_STEP * row_stride;
#pragma unroll
  for (int it = 0; it < Chunks::STEPS; ++it) {
    const bool valid = c.row0 + it * Chunks::ROWS_PER_STEP < valid_rows;
    cp_async_16(smem_addr(smem + c.at(it)), valid ? src : gmem, valid);
    src += step;
  }
}

// This thread's chunks of a landed K or V tile into the math's operand form, in place
// (M::convert: TF32 rounding in the TF32 mode, nothing otherwise).
template <class M, int HD, int ROWS, int STRIDE, int THREADS, class T>
__device__ __forceinline__ void convert_wide_tile(T* smem, int tid) {
  using Chunks = TileChunks<HD, ROWS, STRIDE, THREADS, T>;
  const Chunks c(tid);
#pragma unroll
  for (int it = 0; it < Chunks::STEPS; ++it)
    M::convert(smem + c.at(it));
}

// Softcap (c * tanh(s * scale / c)) and mask (-inf) on this warp's scores: s[nt][2h + e] is
// row g + 8h, key column nt * 8 + 2t + e.
template <class T, int NT>
__device__ __forceinline__ void cap_and_mask_wide(T (&s)[NT][4], T softcap, T cap_in, bool masked,
                                                  const BasicMaskRule<int>& rule, int row0, int j0,
                                                  int lane) {
  const int g = lane >> 2, t = lane & 3;
  if (softcap > T(0)) {
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[nt][e] = softcap * WideMath<T>::tanh(s[nt][e] * cap_in);
  }
  if (!masked)
    return;
  const int col0 = j0 + 2 * t;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const IndexRange<int> keys = rule.row_keys(row0 + g + 8 * h);
    const int lo = keys.lo - col0, hi = keys.hi - 1 - col0;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int c = nt * 8 + e;
        if (c < lo || c > hi)
          s[nt][2 * h + e] = -INFINITY;
      }
  }
}

template <class T, int HD, bool TF32>
__global__ void __launch_bounds__(WideConfig<T, HD>::THREADS, WideConfig<T, HD>::CTAS)
    wide_fwd_kernel(const __grid_constant__ FlashFwdParams p) {
  using C = WideConfig<T, HD>;
  using M = typename WideMathFor<T, TF32>::type;
  constexpr int BLOCK_N = C::BLOCK_N, BLOCK_M = C::BLOCK_M;
  constexpr int NT = BLOCK_N / 8, DT = HD / 8;
  constexpr int QS = C::QK_STRIDE, VS = C::V_STRIDE;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  T* sQ = reinterpret_cast<T*>(smem_raw);
  T* sK = sQ + C::Q_ELEMS;
  T* sV = sK + C::K_ELEMS;

  const BlockInfo bi = block_info(p);
  const int m0 = bi.m_block * BLOCK_M;
  if (m0 >= bi.rows_out)
    return; // packed varlen: this sequence is shorter than T
  const int tid = static_cast<int>(threadIdx.x);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane >> 2, t = lane & 3;
  const int warp_row0 = warp * C::WARP_ROWS;

  const int q_len = bi.seq.q_len, k_len = bi.seq.k_len;
  const BasicMaskRule<int> rule{q_len, k_len, bi.diag, p.window_left, p.window_right};
  const int m_last = min(m0 + BLOCK_M, q_len) - 1;
  const IndexRange<int> keys = rule.keys_of_rows(m0, m_last);
  const int n_min = keys.lo / BLOCK_N;
  const int n_max = keys.hi > keys.lo ? (keys.hi + BLOCK_N - 1) / BLOCK_N : n_min;

  const bool capped = p.softcap_f64 > 0.0;
  const double log2e = 1.4426950408889634074;
  const T mult = static_cast<T>((capped ? 1.0 : p.scale_f64) * log2e);
  const T cap_in = static_cast<T>(capped ? p.scale_f64 / p.softcap_f64 : 0.0);
  const T softcap = static_cast<T>(p.softcap_f64);

  T o[DT][4]; // o[dt][2h + e]: row g + 8h, column dt * 8 + 2t + e
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      o[dt][e] = T(0);
  T row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {T(0), T(0)};

  if (n_min < n_max) {
    const T* gQ = static_cast<const T*>(p.q) + bi.off.q + m0 * p.q_row_stride;
    const T* gK = static_cast<const T*>(p.k) + bi.off.k;
    const T* gV = static_cast<const T*>(p.v) + bi.off.v;
    auto load_k = [&](int nb) {
      copy_wide_tile_async<HD, BLOCK_N, QS, C::THREADS>(sK, gK + nb * BLOCK_N * p.k_row_stride,
                                                        p.k_row_stride, k_len - nb * BLOCK_N, tid);
    };
    copy_wide_tile_async<HD, BLOCK_M, QS, C::THREADS>(sQ, gQ, p.q_row_stride, q_len - m0, tid);
    load_k(n_max - 1);
    cp_async_commit();

    // This lane's first fragment element in each tile (see wide_config.cuh).
    const int qk_col = C::F64 ? t : 4 * t; // f32 reads Q and K as 16-byte vectors
    const T* q_frag = sQ + (warp_row0 + g) * QS + qk_col;
    const T* k_frag = sK + g * QS + qk_col;
    const T* v_frag = sV + 2 * t * VS + g;
    for (int nb = n_max - 1; nb >= n_min; --nb) {
      const int j0 = nb * BLOCK_N;
      cp_async_wait<0>();
      convert_wide_tile<M, HD, BLOCK_N, QS, C::THREADS>(sK, tid);
      __syncthreads(); // K[nb] (and Q) landed and converted; every warp is done with V[nb + 1]
      copy_wide_tile_async<HD, BLOCK_N, VS, C::THREADS>(sV, gV + j0 * p.v_row_stride,
                                                        p.v_row_stride, k_len - j0, tid);
      cp_async_commit();

      T s[NT][4];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[nt][e] = T(0);
      if constexpr (C::F64) {
#pragma unroll
        for (int kk = 0; kk < HD / 8; ++kk) {
          const T* qa = q_frag + kk * 8;
          typename M::A a;
          M::prep_a(a, {qa[0], qa[8 * QS], qa[4], qa[8 * QS + 4]});
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const T* kb = k_frag + nt * 8 * QS + kk * 8;
            typename M::B b;
            M::load_b(b, kb, 4);
            M::mma(s[nt], a, b);
          }
        }
      } else {
        // Two k-steps per 16-byte load: lane t's columns 4t, 4t + 1 serve the first step's k
        // indices t, t + 4 and 4t + 2, 4t + 3 the second's, in Q and K alike (wide_config.cuh).
        // One LDS.128 where two k-steps took four LDS.32 per fragment: +3-5% at head dim 128
        // on the H100 (benchmarks/results/h100-2026-12-06-cuda-f32-lds128.md).
#pragma unroll
        for (int kk = 0; kk < HD / 8; kk += 2) {
          const float4 q0 = *reinterpret_cast<const float4*>(q_frag + kk * 8);
          const float4 q1 = *reinterpret_cast<const float4*>(q_frag + kk * 8 + 8 * QS);
          typename M::A a0, a1;
          M::prep_a(a0, {q0.x, q1.x, q0.y, q1.y});
          M::prep_a(a1, {q0.z, q1.z, q0.w, q1.w});
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            const float4 kv = *reinterpret_cast<const float4*>(k_frag + nt * 8 * QS + kk * 8);
            typename M::B b0, b1;
            M::make_b(b0, kv.x, kv.y);
            M::make_b(b1, kv.z, kv.w);
            M::mma(s[nt], a0, b0);
            M::mma(s[nt], a1, b1);
          }
        }
      }
      const bool masked = rule.tile_needs_mask(m0, m_last, j0, BLOCK_N);
      if (capped || masked)
        cap_and_mask_wide(s, softcap, cap_in, masked, rule, m0 + warp_row0, j0, lane);

      cp_async_wait<0>();
      convert_wide_tile<M, HD, BLOCK_N, VS, C::THREADS>(sV, tid);
      __syncthreads(); // V[nb] landed and converted; every warp is done with K[nb]
      if (nb > n_min) {
        load_k(nb - 1);
        cp_async_commit();
      }

      // Online softmax: scores -> unnormalised probabilities, O rescaled by the max's change.
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        T mx = row_max[h];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          mx = fmax(mx, fmax(s[nt][2 * h], s[nt][2 * h + 1]));
        mx = quad_max(mx);
        // Nothing visible yet keeps max -inf; exponent offset 0 keeps exp2 NaN-free.
        const T base = mx == -INFINITY ? T(0) : mx * mult;
        const T corr = M::exp2(row_max[h] * mult - base);
        row_max[h] = mx;
        T sum = row_sum[h] * corr;
        // (Skipping this rescale when no row of the warp moved, by a warp vote, ran 0.99x.)
#pragma unroll
        for (int dt = 0; dt < DT; ++dt) {
          o[dt][2 * h] *= corr;
          o[dt][2 * h + 1] *= corr;
        }
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const T pr = M::exp2(fma(s[nt][2 * h + e], mult, -base));
            s[nt][2 * h + e] = pr;
            sum += pr;
          }
        row_sum[h] = sum;
      }

      if constexpr (M::kFreshTiles) {
        // The tile's P V in fresh accumulators, 8 column groups (32 registers) at a time, then
        // added into O (wide_math.cuh): the A fragments are split again per part.
        constexpr int DP = DT < 8 ? DT : 8;
#pragma unroll
        for (int d0 = 0; d0 < DT; d0 += DP) {
          T acc[DP][4];
#pragma unroll
          for (int dt = 0; dt < DP; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              acc[dt][e] = T(0);
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            typename M::A a;
            M::prep_a(a, {s[nt][0], s[nt][2], s[nt][1], s[nt][3]});
#pragma unroll
            for (int dt = 0; dt < DP; ++dt) {
              typename M::B b;
              M::load_b(b, v_frag + nt * 8 * VS + (d0 + dt) * 8, VS);
              M::mma(acc[dt], a, b);
            }
          }
#pragma unroll
          for (int dt = 0; dt < DP; ++dt)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              o[d0 + dt][e] += acc[dt][e];
        }
      } else {
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          // k index t <-> key 2t, t + 4 <-> key 2t + 1 (see the top of this file).
          typename M::A a;
          M::prep_a(a, {s[nt][0], s[nt][2], s[nt][1], s[nt][3]});
#pragma unroll
          for (int dt = 0; dt < DT; ++dt) {
            const T* vb = v_frag + nt * 8 * VS + dt * 8;
            typename M::B b;
            M::load_b(b, vb, VS);
            M::mma(o[dt], a, b);
          }
        }
      }
    }
  }

  // Epilogue: O / l as one store of each lane's column pair (16 or 8 bytes), LSE (natural log) by
  // lane t == 0. Rows past the sequence get O = 0 and LSE = -inf (padded batches); rows past the
  // tensor are not touched.
  using Pair = std::conditional_t<C::F64, double2, float2>;
  T* out = static_cast<T*>(p.out) + bi.off.o;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const T l = quad_sum(row_sum[h]);
    const int i = m0 + warp_row0 + g + 8 * h;
    if (i >= bi.rows_out)
      continue;
    const bool valid = i < q_len && !row_is_empty(l);
    const T f = valid ? T(1) / l : T(0);
    T* row = out + i * p.o_row_stride + 2 * t;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
      *reinterpret_cast<Pair*>(row + dt * 8) = Pair{o[dt][2 * h] * f, o[dt][2 * h + 1] * f};
    if (p.lse != nullptr && t == 0)
      p.lse[bi.off.lse + i * p.lse_row_stride] =
          valid ? static_cast<float>((double(row_max[h] * mult) + log2(double(l))) *
                                     0.6931471805599453094)
                : -INFINITY;
  }
}

} // namespace kattn::cuda_kernels::sm80
