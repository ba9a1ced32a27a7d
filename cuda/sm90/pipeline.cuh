// mbarrier bookkeeping of the shared-memory ring (K and V stages) and the Q buffer. Counters
// run across the tiles a persistent CTA processes: K/V block iteration `it` uses stage
// it % kStages and waits on parity (it / kStages) & 1; Q load number q likewise over kQStages.
#pragma once

#include <cstdint>

#include "ptx.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
struct Ring {
  std::uint32_t bar;                           // barrier array base (shared address)
  static constexpr int kQ = 2 * Cfg::kQStages; // barriers before the K/V ones
  __device__ __forceinline__ std::uint32_t q_full(int qs) const { return bar + 8 * qs; }
  __device__ __forceinline__ std::uint32_t q_empty(int qs) const {
    return bar + 8 * (Cfg::kQStages + qs);
  }
  __device__ __forceinline__ std::uint32_t k_full(int st) const { return bar + 8 * (kQ + st); }
  __device__ __forceinline__ std::uint32_t v_full(int st) const {
    return bar + 8 * (kQ + Cfg::kStages + st);
  }
  __device__ __forceinline__ std::uint32_t k_empty(int st) const {
    return bar + 8 * (kQ + 2 * Cfg::kStages + st);
  }
  __device__ __forceinline__ std::uint32_t v_empty(int st) const {
    return bar + 8 * (kQ + 3 * Cfg::kStages + st);
  }
  // Q buffer and parity of the q-th Q load.
  static __device__ __forceinline__ int q_stage(int q) { return q % Cfg::kQStages; }
  static __device__ __forceinline__ std::uint32_t q_parity(int q) {
    return static_cast<std::uint32_t>(q / Cfg::kQStages) & 1u;
  }
  static __device__ __forceinline__ int stage(int it) { return it % Cfg::kStages; }
  static __device__ __forceinline__ std::uint32_t parity(int it) {
    return static_cast<std::uint32_t>(it / Cfg::kStages) & 1u;
  }

  // Full barriers complete on the producer's expect_tx + TMA bytes; empty barriers on one
  // arrival per consumer warp.
  __device__ __forceinline__ void init() const {
    const std::uint32_t consumer_warps = Cfg::kConsumerThreads / 32;
    for (int qs = 0; qs < Cfg::kQStages; ++qs) {
      mbar_init(q_full(qs), 1);
      mbar_init(q_empty(qs), consumer_warps);
    }
    for (int st = 0; st < Cfg::kStages; ++st) {
      mbar_init(k_full(st), 1);
      mbar_init(v_full(st), 1);
      mbar_init(k_empty(st), consumer_warps);
      mbar_init(v_empty(st), consumer_warps);
    }
    fence_barrier_init();
  }
};

// The forward kernels' prologue: thread 0 prefetches the tensor maps' descriptors and
// initialises the ring's barriers; every thread waits for both.
template <class Cfg, class... Maps>
__device__ __forceinline__ void ring_prologue(std::uint32_t smem, const Maps*... maps) {
  if (threadIdx.x == 0) {
    (prefetch_tma_map(maps), ...);
    Ring<Cfg>{smem + Cfg::kOffBar}.init();
  }
  __syncthreads();
}

} // namespace kattn::cuda_kernels::sm90
