// The sm_90a flash-attention forward kernel: a persistent grid of warp-specialised CTAs. One
// producer thread streams Q/K/V tiles with TMA into a shared-memory ring (mbarrier completion);
// 2 or 3 consumer warpgroups (64 query rows each) run the wgmma mainloop, taking turns on the
// tensor cores.
#pragma once

#include <cstdint>

#include "fwd_config.cuh"
#include "mainloop.cuh"
#include "pipeline.cuh"
#include "probe.cuh"
#include "producer.cuh"
#include "ptx.cuh"
#include "scheduler.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg, class Probe = NoProbe>
__global__ void __launch_bounds__(Cfg::kThreads, 1) fwd_kernel(const __grid_constant__ FwdArgs a) {
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int tid = static_cast<int>(threadIdx.x);
  ring_prologue<Cfg>(smem, &a.tma_q, &a.tma_k, &a.tma_v);

  int it = 0;      // K/V block iterations so far (ring position)
  int q_count = 0; // Q loads so far
  const int cta = static_cast<int>(blockIdx.x);
  const int grid = static_cast<int>(gridDim.x);
  // Cfg::kUniformWg (head dims 256 and 64): broadcast from lane 0 so the compiler knows wg is
  // warp-uniform; shared-memory addresses and wgmma descriptors derived from it then live in
  // uniform registers instead of ~28 vector registers hoisted out of the mainloop (at head dim
  // 256 ptxas spilled without it; head dim 64: +5-6% everywhere). Head dim 128 keeps tid / 128:
  // interleaved A/B (docs/cuda-sm90.md) found the broadcast neutral for 192-key blocks and
  // 2-6% slower for the short configuration.
  const int wg = Cfg::kUniformWg ? __shfl_sync(0xffffffffu, tid / 128, 0) : tid / 128;
  if (wg == 0) {
    regs_dealloc<Cfg::kProducerRegs>();
    if (tid == 0) {
      const int rounds = num_rounds<Cfg>(a, grid);
      for (int r = 0; r < rounds; ++r) {
        Tile t;
        if (!tile_of<Cfg>(a, r, cta, grid, t)) {
          continue;
        }
        const TileWork w = tile_work<Cfg>(a, t);
        if (w.n_iter() > 0) {
          produce_tile<Cfg>(a, smem, w, it, q_count);
        }
      }
    }
  } else {
    regs_alloc<Cfg::kConsumerRegs>();
    const int rounds = num_rounds<Cfg>(a, grid);
    for (int r = 0; r < rounds; ++r) {
      Tile t;
      if (!tile_of<Cfg>(a, r, cta, grid, t)) {
        continue;
      }
      const TileWork w = tile_work<Cfg>(a, t);
      if (!w.skip) {
        consume_tile<Cfg, Probe>(a, smem, w, wg - 1, it, q_count,
                                 Probe(a, r, wg - 1, Cfg::kConsumerWGs));
      }
    }
    turn_drain<Cfg>(wg - 1, q_count);
  }
}

} // namespace kattn::cuda_kernels::sm90
