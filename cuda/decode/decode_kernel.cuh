// The split-KV decode kernel (FlashDecoding): grid x = row blocks of the packed GQA rows
// (fastest, so the CTAs that read one KV head's tiles run side by side and share them in L2),
// y = key splits, z = sequence x KV head. Each CTA walks its split's key tiles (decode_config.cuh)
// with mma.sync (sm80's mainloop: Q K^T and P V per warp on its 16 keys of the tile), merges
// its warps' rows through shared memory and writes out and LSE (one split) or its partial rows
// (several: decode_combine.cuh merges them). Runtime options: causal/windows in both
// alignments (per packed row: token r / g), padded lengths, softcap, LSE, paged KV.
#pragma once

#include <cmath>
#include <cstdint>

#include "decode/decode_config.cuh"
#include "decode/kv_tile.cuh"
#include "kattn_kernels/flash_params.hpp"
#include "kattn_kernels/seq_geometry.hpp"
#include "sm80/mainloop.cuh"
#include "sm80/ptx.cuh"
#include "sm80/softmax.cuh"

namespace kattn::cuda_kernels::decode {

// This split's key tiles [lo, hi) of the keys `keys` some row of the CTA may see: the tiles of
// the range shared out evenly, so the splits of every sequence stay tile-aligned.
struct TileRange {
  int lo = 0, hi = 0;
};
__device__ __forceinline__ TileRange split_tiles(const IndexRange<int>& keys, int tile_keys,
                                                 int split, int splits) {
  TileRange r;
  if (keys.hi <= keys.lo)
    return r;
  const int first = keys.lo / tile_keys, last = (keys.hi + tile_keys - 1) / tile_keys;
  const int per = (last - first + splits - 1) / splits;
  r.lo = min(last, first + split * per);
  r.hi = min(last, r.lo + per);
  return r;
}

// Softcap, then -inf outside each row's keys [lo, hi) (empty for rows past the problem).
__device__ __forceinline__ void cap_and_mask(float (&s)[1][2][4], float softcap, float cap_in,
                                             const int (&lo)[2], const int (&hi)[2], int key0,
                                             int lane) {
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x = s[0][nt][e];
      if (softcap > 0.f)
        x = softcap * fast_tanh(x * cap_in);
      const int key = key0 + nt * 8 + 2 * (lane & 3) + (e & 1), h = e >> 1;
      s[0][nt][e] = key < lo[h] || key >= hi[h] ? -INFINITY : x;
    }
}

template <class Elem, int HD>
__global__ void __launch_bounds__(Config<HD>::THREADS)
    decode_kernel(const __grid_constant__ FlashFwdParams p, const SplitOut part) {
  using C = Config<HD>;
  constexpr int DT = HD / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Elem* sQ = reinterpret_cast<Elem*>(smem_raw);
  Elem* sKV = sQ + C::Q_ELEMS; // stage s: K at s * STAGE_ELEMS, V after it

  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int b = static_cast<int>(blockIdx.z) / p.K, kv = static_cast<int>(blockIdx.z) % p.K;
  const int group = p.N / p.K, rows = group * p.T;
  const int r0 = static_cast<int>(blockIdx.x) * C::ROWS;
  const SeqSpan<int> seq = seq_span(p, b);
  const BasicMaskRule<int> rule = mask_rule(p, seq);
  const int t_first = r0 / group, t_last = (min(r0 + C::ROWS, rows) - 1) / group;
  const TileRange tiles = split_tiles(rule.keys_of_rows(t_first, t_last), C::TILE,
                                      static_cast<int>(blockIdx.y), part.splits);

  // The keys each of this thread's two rows (g, g + 8) sees: [lo, hi), empty past the rows.
  int key_lo[2], key_hi[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = r0 + (lane >> 2) + 8 * h, t = r / group;
    const IndexRange<int> keys =
        r < rows && t < seq.q_len ? rule.row_keys(t) : IndexRange<int>{0, 0};
    key_lo[h] = keys.lo;
    key_hi[h] = keys.hi;
  }
  const bool capped = p.softcap > 0.f;
  const float mult = (capped ? 1.f : p.scale) * 1.4426950408889634f;
  const float cap_in = capped ? p.scale / p.softcap : 0.f;

  float o[1][DT][4];
#pragma unroll
  for (int dt = 0; dt < DT; ++dt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      o[0][dt][e] = 0.f;
  sm80::OnlineSoftmax<1> softmax;
  softmax.init();

  if (tiles.lo < tiles.hi) {
    load_q_rows<Elem, HD>(sQ, p, b, kv, group, r0, rows, tid);
    load_kv_tile<Elem, HD>(sKV, sKV + C::KV_ELEMS, p, b, kv, seq.k_len, tiles.lo, tid);
    sm80::cp_async_commit();
    const sm80::LaneOffsets lo = sm80::lane_offsets<HD>(0, lane);
    const std::uint32_t aQ = sm80::smem_addr(sQ);
    const std::uint32_t aWarp = sm80::smem_addr(sKV) + warp * C::WARP_KEYS * HD * 2;
    const std::uint32_t qf[1][1][4] = {}; // Q stays in shared memory
    for (int tile = tiles.lo; tile < tiles.hi; ++tile) {
      const int stage = (tile - tiles.lo) & 1;
      if (tile + 1 < tiles.hi) { // the other stage was freed by the last tile's barrier
        Elem* next = sKV + (stage ^ 1) * C::STAGE_ELEMS;
        load_kv_tile<Elem, HD>(next, next + C::KV_ELEMS, p, b, kv, seq.k_len, tile + 1, tid);
        sm80::cp_async_commit();
        sm80::cp_async_wait<1>();
      } else {
        sm80::cp_async_wait<0>();
      }
      __syncthreads(); // this tile (and Q) landed for every thread
      const std::uint32_t aK = aWarp + stage * C::STAGE_ELEMS * 2, aV = aK + C::KV_ELEMS * 2;
      float s[1][2][4] = {};
      sm80::gemm_qk<Elem, HD, 1, C::WARP_KEYS, false>(s, qf, aQ, aK, lo);
      cap_and_mask(s, p.softcap, cap_in, key_lo, key_hi, tile * C::TILE + warp * C::WARP_KEYS,
                   lane);
      softmax.update(s, o, mult);
      sm80::gemm_pv<Elem, HD, 1, C::WARP_KEYS>(o, s, aV, lo);
      __syncthreads(); // every warp is done with this stage
    }
  }

  // Merge the warps' rows: O, max and sum per row through the (now idle) stages.
  float* sO = reinterpret_cast<float*>(sKV);
  float* sM = sO + C::WARPS * C::ROWS * C::O_STRIDE;
  float* sL = sM + C::WARPS * C::ROWS;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = (lane >> 2) + 8 * h, at = (warp * C::ROWS + row) * C::O_STRIDE;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt)
      *reinterpret_cast<float2*>(sO + at + dt * 8 + 2 * (lane & 3)) =
          make_float2(o[0][dt][2 * h], o[0][dt][2 * h + 1]);
    const float l = sm80::quad_sum(softmax.row_sum[0][h]);
    if ((lane & 3) == 0) {
      sM[warp * C::ROWS + row] = softmax.row_max[0][h];
      sL[warp * C::ROWS + row] = l;
    }
  }
  __syncthreads();
  Elem* out = static_cast<Elem*>(p.out);
  for (int idx = tid; idx < C::ROWS * HD; idx += C::THREADS) {
    const int row = idx / HD, col = idx % HD, r = r0 + row;
    if (r >= rows)
      break; // rows only grow with idx
    float mx = -INFINITY;
#pragma unroll
    for (int w = 0; w < C::WARPS; ++w)
      mx = fmaxf(mx, sM[w * C::ROWS + row]);
    // A warp at the max (or every warp of an empty row) weighs 1: an empty row stays 0, a
    // warp's NaN sum (a NaN score) stays NaN (kattn_kernels/mask_rule.hpp, row_is_empty).
    float acc = 0.f, l = 0.f;
#pragma unroll
    for (int w = 0; w < C::WARPS; ++w) {
      const float m_w = sM[w * C::ROWS + row];
      const float f = m_w == mx ? 1.f : exp2f((m_w - mx) * mult);
      acc += f * sO[(w * C::ROWS + row) * C::O_STRIDE + col];
      l += f * sL[w * C::ROWS + row];
    }
    const bool empty = row_is_empty(l);
    const float val = empty ? 0.f : acc / l;
    const float lse = empty ? -INFINITY : (mx * mult + log2f(l)) * 0.6931471805599453f;
    const int t = r / group, n = kv * group + r % group;
    if (part.splits == 1) {
      out[b * p.o_batch_stride + t * p.o_row_stride + n * p.o_head_stride + col] = Elem(val);
      if (p.lse != nullptr && col == 0)
        p.lse[b * p.lse_batch_stride + n * p.lse_head_stride + t * p.lse_row_stride] = lse;
    } else {
      const std::int64_t id =
          ((static_cast<std::int64_t>(blockIdx.y) * p.B + b) * p.N + n) * p.T + t;
      part.o[id * HD + col] = val;
      if (col == 0)
        part.lse[id] = lse;
    }
  }
}

} // namespace kattn::cuda_kernels::decode
