// The sm_90a flash-attention backward kernel: one CTA per (128 keys, KV head, sequence), warp
// specialised. The producer warpgroup streams K and V once and Q, dO per step with TMA; two
// consumer warpgroups (64 keys each) run the wgmma products of bwd_consumer.cuh and reduce dQ
// into dq_accum with TMA (in deterministic mode a writer thread does, in a fixed order). GQA/MQA:
// the steps cover every query head of the KV head's group, so dK and dV are summed in registers. D
// and dq's conversion are the row passes of common/.
#pragma once

#include <cstdint>

#include "bwd_config.cuh"
#include "bwd_consumer.cuh"
#include "bwd_dq_reduce.cuh"
#include "bwd_producer.cuh"
#include "bwd_work.cuh"
#include "ptx.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1) bwd_kernel(const __grid_constant__ BwdArgs a) {
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t smem = (smem_addr(smem_raw) + 1023u) & ~1023u;
  const int tid = static_cast<int>(threadIdx.x);
  if constexpr (Cfg::kDet)
    draw_block_ticket<Cfg>(a.p, smem, tid);
  const BwdWork<Cfg> w0 = bwd_work<Cfg>(a.p, smem);
  if (w0.n0 >= w0.key_rows) {
    return; // packed varlen: this sequence has fewer keys than S
  }
  if (tid == 0) {
    prefetch_tma_map(&a.tma_q);
    prefetch_tma_map(&a.tma_k);
    prefetch_tma_map(&a.tma_v);
    prefetch_tma_map(&a.tma_do);
    if constexpr (!Cfg::kDqBulk)
      prefetch_tma_map(&a.tma_dq);
    const BwdRing<Cfg> ring{smem + Cfg::kOffBar};
    constexpr std::uint32_t consumer_warps = Cfg::kConsumerThreads / 32;
    mbar_init(ring.kv_full(), 1);
    for (int st = 0; st < Cfg::kStages; ++st) {
      mbar_init(ring.q_full(st), 1);
      mbar_init(ring.q_empty(st), consumer_warps);
      mbar_init(ring.do_full(st), 1);
      mbar_init(ring.do_empty(st), consumer_warps);
    }
    if constexpr (Cfg::kDet) {
      for (int buf = 0; buf < Cfg::kDqBuffers; ++buf) {
        mbar_init(ring.dq_full(buf), Cfg::kDqSplit ? consumer_warps : consumer_warps / 2);
        mbar_init(ring.dq_empty(buf), 1);
      }
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
  if (wg == 0) {
    regs_dealloc<Cfg::kProducerRegs>();
    const BwdWork<Cfg> w = Cfg::kDet ? bwd_work<Cfg>(a.p, smem) : w0;
    if (tid == 0 && w.steps > 0) {
      produce_tiles<Cfg>(a, smem, w);
    }
    if constexpr (Cfg::kDet) {
      if (tid == 32 && w.steps > 0) {
        write_dq_in_order<Cfg>(a, smem, w.steps);
      }
    }
  } else {
    regs_alloc<Cfg::kConsumerRegs>();
    const BwdWork<Cfg> w = Cfg::kDet ? bwd_work<Cfg>(a.p, smem) : w0;
    consume_steps<Cfg>(a, smem, w, wg - 1);
  }
}

} // namespace kattn::cuda_kernels::sm90
