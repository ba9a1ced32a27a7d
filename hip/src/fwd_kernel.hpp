// The forward flash-attention kernel, one source for both paths (see mma16.hpp): a block of
// kWaves wavefronts owns kBlockM = 16 * kWaves query rows of one (batch, head); each wavefront
// owns 16 of them. Key/value tiles of kBlockN keys stream through LDS; scores, the online softmax
// (fp32, exp2 domain) and the output accumulator live in registers in the WaveLayout. Sequence
// lengths, offsets, key ranges and the empty-row rule come from the kernel contract
// (kattn_kernels/seq_geometry.hpp).
//
// Semantics (docs/semantics.md): s = scale * q.k -> softcap -> mask (kattn::BasicMaskRule:
// per-batch lengths, inclusive window around the aligned diagonal) -> softmax -> P (rounded to the
// input dtype) . V. Rows that see no key give out 0 and lse -inf. Padded batches write rows [q_len,
// T) as such rows; packed varlen writes only the sequence's own tokens.
#pragma once

#include <cstdint>

#include "elem.hpp"
#include "kattn_kernels/seq_geometry.hpp"
#include "mma16.hpp"
#include "wave_layout.hpp"

namespace kattn::hip_kernels::detail {

inline constexpr int kWaves = 4;
inline constexpr int kBlockM = 16 * kWaves;
inline constexpr int kBlockN = 32;

// Four 16-bit elements moved as one 64-bit access (the support check requires 8-byte alignment).
struct alignas(8) U16x4 {
  std::uint16_t v[4];
};

// rows x HD elements from global rows [row0, row0 + rows) into LDS (row stride ld); rows at or
// beyond `valid` are zero (so masked keys never bring NaN/Inf into P.V).
template <int HD>
__device__ __forceinline__ void load_tile(std::uint16_t* lds, int ld, const std::uint16_t* g,
                                          std::int64_t row_stride, int row0, int rows, int valid) {
  constexpr int kChunks = HD / 4;
  for (int c = static_cast<int>(threadIdx.x); c < rows * kChunks;
       c += static_cast<int>(blockDim.x)) {
    const int r = c / kChunks, h = (c % kChunks) * 4;
    U16x4 x = {{0, 0, 0, 0}};
    if (row0 + r < valid)
      x = *reinterpret_cast<const U16x4*>(g + (row0 + r) * row_stride + h);
    *reinterpret_cast<U16x4*>(lds + r * ld + h) = x;
  }
}

template <class E, int HD, int W, bool kMfma>
__global__ void __launch_bounds__(W* kWaves) flash_fwd_kernel(const FlashFwdParams p) {
  using L = WaveLayout<W>;
  using Mma = Mma16<E, W, kMfma>;
  constexpr int R = L::kRowsPerLane;
  constexpr int kLd = HD + 8;       // LDS row pitch of Q/K/V tiles (elements; 16-byte multiple)
  constexpr int kLdP = kBlockN + 8; // LDS row pitch of a wavefront's P tile
  constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.6931471805599453f;
  const float neg_inf = -__int_as_float(0x7f800000);
  alignas(16) __shared__ std::uint16_t qs[kBlockM * kLd];
  alignas(16) __shared__ std::uint16_t ks[kBlockN * kLd];
  alignas(16) __shared__ std::uint16_t vs[kBlockN * kLd];
  alignas(16) __shared__ std::uint16_t ps[kWaves * 16 * kLdP];

  const int lane = static_cast<int>(threadIdx.x) % W, wave = static_cast<int>(threadIdx.x) / W;
  const int n = static_cast<int>(blockIdx.y), b = static_cast<int>(blockIdx.z);
  const int i0 = static_cast<int>(blockIdx.x) * kBlockM;
  const SeqSpan<int> seq = seq_span(p, b);
  if (i0 >= rows_written(p, seq)) // whole block: no barrier is skipped by part of it
    return;
  const RowOffsets off = row_offsets(p, seq, b, n);
  const auto* q = static_cast<const std::uint16_t*>(p.q) + off.q;
  const auto* k = static_cast<const std::uint16_t*>(p.k) + off.k;
  const auto* v = static_cast<const std::uint16_t*>(p.v) + off.v;
  const BasicMaskRule<int> rule = mask_rule(p, seq);

  // Keys any valid row of this block can see: tiles outside [keys.lo, keys.hi) are skipped.
  const IndexRange<int> keys = rule.keys_of_rows(i0, i0 + kBlockM - 1);

  load_tile<HD>(qs, kLd, q, p.q_row_stride, i0, kBlockM, seq.q_len);

  float m2[R], lsum[R], o[HD / 16][R]; // running max (log2 domain), partial row sums, output
#pragma unroll
  for (int r = 0; r < R; ++r) {
    m2[r] = neg_inf;
    lsum[r] = 0.f;
#pragma unroll
    for (int hb = 0; hb < HD / 16; ++hb)
      o[hb][r] = 0.f;
  }
  std::uint16_t* my_p = ps + wave * 16 * kLdP;
  const std::uint16_t* my_q = qs + wave * 16 * kLd;

  for (int kt = (keys.lo / kBlockN) * kBlockN; kt < keys.hi; kt += kBlockN) {
    __syncthreads(); // the previous tile's K/V/P reads are done
    load_tile<HD>(ks, kLd, k, p.k_row_stride, kt, kBlockN, seq.k_len);
    load_tile<HD>(vs, kLd, v, p.v_row_stride, kt, kBlockN, seq.k_len);
    __syncthreads();

    float s[kBlockN / 16][R];
#pragma unroll
    for (int nb = 0; nb < kBlockN / 16; ++nb) {
#pragma unroll
      for (int r = 0; r < R; ++r)
        s[nb][r] = 0.f;
#pragma unroll
      for (int kc = 0; kc < HD / 16; ++kc)
        Mma::run(s[nb], my_q + kc * 16, kLd, ks + nb * 16 * kLd + kc * 16, 1, kLd, lane);
    }

#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int lr = L::row(lane, r);
      const int i = i0 + wave * 16 + lr;
      float mx = neg_inf;
#pragma unroll
      for (int nb = 0; nb < kBlockN / 16; ++nb) {
        const int j = kt + nb * 16 + L::col(lane);
        float x = s[nb][r] * p.scale;
        if (p.softcap > 0.f)
          x = p.softcap * tanhf(x / p.softcap);
        x = rule.visible(i, j) ? x * kLog2e : neg_inf;
        s[nb][r] = x;
        mx = fmaxf(mx, x);
      }
      mx = row_max<W>(mx);
      const float m_new = fmaxf(m2[r], mx);
      const float base = m_new == neg_inf ? 0.f : m_new; // no visible key yet: p = 0
      const float alpha = exp2f(m2[r] - base);
      m2[r] = m_new;
      lsum[r] *= alpha;
#pragma unroll
      for (int hb = 0; hb < HD / 16; ++hb)
        o[hb][r] *= alpha;
#pragma unroll
      for (int nb = 0; nb < kBlockN / 16; ++nb) {
        const float pr = exp2f(s[nb][r] - base);
        lsum[r] += pr;
        my_p[lr * kLdP + nb * 16 + L::col(lane)] = E::from_float(pr);
      }
    }
    __syncthreads(); // P visible to the whole wavefront

#pragma unroll
    for (int hb = 0; hb < HD / 16; ++hb)
#pragma unroll
      for (int kb = 0; kb < kBlockN / 16; ++kb)
        Mma::run(o[hb], my_p + kb * 16, kLdP, vs + kb * 16 * kLd + hb * 16, kLd, 1, lane);
  }

  auto* out = static_cast<std::uint16_t*>(p.out) + off.o;
  const int rows_out = rows_written(p, seq);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float l = row_sum<W>(lsum[r]); // every lane takes part in the shuffles
    const int i = i0 + wave * 16 + L::row(lane, r);
    if (i >= rows_out)
      continue;
    const bool empty = row_is_empty(l);
    const float inv = empty ? 0.f : 1.f / l;
#pragma unroll
    for (int hb = 0; hb < HD / 16; ++hb)
      out[i * p.o_row_stride + hb * 16 + L::col(lane)] = E::from_float(o[hb][r] * inv);
    if (p.lse && L::col(lane) == 0)
      p.lse[off.lse + i * p.lse_row_stride] = empty ? neg_inf : m2[r] * kLn2 + logf(l);
  }
}

} // namespace kattn::hip_kernels::detail
