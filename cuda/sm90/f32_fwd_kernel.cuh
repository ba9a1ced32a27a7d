// The sm_90a exact-fp32 forward kernel (f32_config.cuh): a persistent grid of CTAs of two
// warpgroups. One producer thread streams Q and the split K and Vt tiles (big and small parts)
// by TMA into a two-stage ring; the consumer warpgroup runs f32_mainloop.cuh.
#pragma once

#include <cstdint>

#include "f32_config.cuh"
#include "f32_mainloop.cuh"
#include "pipeline.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"

namespace kattn::cuda_kernels::sm90 {

// Q (the caller's, raw: the consumer splits it) once per tile, then K and Vt per key block, each
// as its big and its small part. The workspace's tensors keep the caller's (batch, head, row)
// coordinates (f32_split.cuh), Vt with keys as its columns.
template <class Cfg>
__device__ __forceinline__ void produce_f32_tile(const F32FwdArgs& a, std::uint32_t smem,
                                                 const TileWork& w, int& it, int& q_count) {
  const Ring<Cfg> ring{smem + Cfg::kOffBar};
  const int kv_head = w.t.head / (a.p.N / a.p.K);
  const int b = w.s.coord_b;
  mbar_wait(ring.q_empty(0), Ring<Cfg>::q_parity(q_count) ^ 1u);
  mbar_expect_tx(ring.q_full(0), Cfg::kQPart);
  const int q_row = w.t.m_block * Cfg::kBlockM;
#pragma unroll
  for (int c = 0; c < Cfg::kColBlocks; ++c) {
    tma_load_4d(smem + Cfg::kOffQ + c * Cfg::kQColBlockBytes, &a.tma_q, ring.q_full(0), c * 32,
                q_row, w.t.head, b);
  }
  ++q_count;
  for (int nb = w.nb_begin; nb < w.nb_end; ++nb, ++it) {
    const int st = Ring<Cfg>::stage(it);
    const std::uint32_t ph = Ring<Cfg>::parity(it);
    const int key = nb * Cfg::kBlockN;
    mbar_wait(ring.k_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.k_full(st), 2 * Cfg::kKPart);
#pragma unroll
    for (int c = 0; c < Cfg::kColBlocks; ++c) {
      const std::uint32_t dst = smem + Cfg::kOffK + st * 2 * Cfg::kKPart + c * Cfg::kKColBlockBytes;
      tma_load_4d(dst, &a.tma_k, ring.k_full(st), c * 32, key, kv_head, b);
      tma_load_4d(dst + Cfg::kKPart, &a.tma_k_small, ring.k_full(st), c * 32, key, kv_head, b);
    }
    mbar_wait(ring.v_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.v_full(st), 2 * Cfg::kVPart);
    const std::uint32_t dst = smem + Cfg::kOffV + st * 2 * Cfg::kVPart;
    tma_load_4d(dst, &a.tma_v, ring.v_full(st), key, 0, kv_head, b);
    tma_load_4d(dst + Cfg::kVPart, &a.tma_v_small, ring.v_full(st), key, 0, kv_head, b);
  }
}

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    f32_fwd_kernel(const __grid_constant__ F32FwdArgs a) {
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int tid = static_cast<int>(threadIdx.x);
  ring_prologue<Cfg>(smem, &a.tma_q, &a.tma_k, &a.tma_v, &a.tma_k_small, &a.tma_v_small);
  int it = 0;      // K/V block iterations so far (ring position)
  int q_count = 0; // Q loads so far
  const int cta = static_cast<int>(blockIdx.x);
  const int grid = static_cast<int>(gridDim.x);
  const int rounds = num_rounds<Cfg>(a, grid);
  const bool producer = tid < 128;
  if (producer && tid != 0) {
    return;
  }
  for (int r = 0; r < rounds; ++r) {
    Tile t;
    if (!tile_of<Cfg>(a, r, cta, grid, t)) {
      continue;
    }
    const TileWork w = tile_work<Cfg>(a, t);
    if (producer) {
      if (w.n_iter() > 0) {
        produce_f32_tile<Cfg>(a, smem, w, it, q_count);
      }
    } else if (!w.skip) {
      consume_f32_tile<Cfg>(a, smem, w, it, q_count);
    }
  }
}

} // namespace kattn::cuda_kernels::sm90
