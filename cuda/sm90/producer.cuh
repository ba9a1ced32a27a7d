// The producer: one thread issues every TMA load of the CTA's tiles (Q once per tile, then K
// and V per key block) into the ring, throttled by the consumers' empty barriers.
#pragma once

#include <cstdint>

#include "fwd_config.cuh"
#include "pipeline.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
__device__ __forceinline__ void produce_tile(const FwdArgs& a, std::uint32_t smem,
                                             const TileWork& w, int& it, int& q_count) {
  const Ring<Cfg> ring{smem + Cfg::kOffBar};
  const int kv_head = w.t.head / (a.p.N / a.p.K);
  // Q buffer: free once every consumer warp finished that buffer's previous tile's last S.
  const int qs = Ring<Cfg>::q_stage(q_count);
  mbar_wait(ring.q_empty(qs), Ring<Cfg>::q_parity(q_count) ^ 1u);
  mbar_expect_tx(ring.q_full(qs), Cfg::kQBytes);
  const int q_row = w.s.q_row0 + w.t.m_block * Cfg::kBlockM;
  if constexpr (Cfg::kSeqMajor) {
#pragma unroll
    for (int c = 0; c < Cfg::kBlockM / 64; ++c) {
      tma_load_4d(smem + Cfg::kOffQ + qs * Cfg::kQBytes + c * Cfg::kSeqBoxBytes, &a.tma_q,
                  ring.q_full(qs), q_row + c * 64, 0, w.t.head, w.s.coord_b);
    }
  } else {
#pragma unroll
    for (int c = 0; c < Cfg::kColBlocks; ++c) {
      tma_load_4d(smem + Cfg::kOffQ + qs * Cfg::kQBytes + c * Cfg::kQColBlockBytes, &a.tma_q,
                  ring.q_full(qs), c * 64, q_row, w.t.head, w.s.coord_b);
    }
  }
  ++q_count;
  for (int nb = w.nb_begin; nb < w.nb_end; ++nb, ++it) {
    const int st = Ring<Cfg>::stage(it);
    const std::uint32_t ph = Ring<Cfg>::parity(it);
    const int row = w.s.k_row0 + nb * Cfg::kBlockN;
    // K or V of this block into its ring stage: the tensor's 64-element boxes.
    const auto load_kv = [&](std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar) {
      if constexpr (Cfg::kSeqMajor) {
#pragma unroll
        for (int c = 0; c < Cfg::kBlockN / 64; ++c) {
          tma_load_4d(dst + c * Cfg::kSeqBoxBytes, map, bar, row + c * 64, 0, kv_head, w.s.coord_b);
        }
      } else {
#pragma unroll
        for (int c = 0; c < Cfg::kColBlocks; ++c) {
          tma_load_4d(dst + c * Cfg::kKVColBlockBytes, map, bar, c * 64, row, kv_head, w.s.coord_b);
        }
      }
    };
    mbar_wait(ring.k_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.k_full(st), Cfg::kKVBytes);
    load_kv(smem + Cfg::kOffK + st * Cfg::kKVBytes, &a.tma_k, ring.k_full(st));
    mbar_wait(ring.v_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.v_full(st), Cfg::kKVBytes);
    load_kv(smem + Cfg::kOffV + st * Cfg::kKVBytes, &a.tma_v, ring.v_full(st));
  }
}

} // namespace kattn::cuda_kernels::sm90
