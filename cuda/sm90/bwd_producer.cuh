// The sm90 backward's producer: one thread issues the TMA loads (K and V once, then Q and dO per
// step into their two-stage buffers), throttled by the consumers' empty barriers.
#pragma once

#include <cstdint>

#include "bwd_config.cuh"
#include "bwd_trace.cuh"
#include "bwd_work.cuh"
#include "ptx.cuh"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
__device__ __forceinline__ void produce_tiles(const BwdArgs& a, std::uint32_t smem,
                                              const BwdWork<Cfg>& w) {
  const BwdRing<Cfg> ring{smem + Cfg::kOffBar};
  // A tensor's tile of `rows` rows at row coordinate `row`: its 64-column boxes.
  const auto load = [&](std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int row,
                        int head, int col_block_bytes) {
#pragma unroll
    for (int c = 0; c < Cfg::kColBlocks; ++c) {
      tma_load_4d(dst + c * col_block_bytes, map, bar, c * 64, row, head, w.coord_b);
    }
  };
  // A mark for the timeline (bwd_trace.cuh); no code outside trace builds.
  const auto mark = [&]([[maybe_unused]] int step, [[maybe_unused]] BwdProducerMark m) {
#ifdef KATTN_SM90_BWD_TRACE
    bwd_trace_mark(a.trace, BwdTraceShape::kProducerRow, step, m);
#endif
  };
  mbar_expect_tx(ring.kv_full(), 2 * Cfg::kKVBytes);
  load(smem + Cfg::kOffK, &a.tma_k, ring.kv_full(), w.k_row0 + w.n0, w.kv, Cfg::kKVColBlockBytes);
  load(smem + Cfg::kOffV, &a.tma_v, ring.kv_full(), w.k_row0 + w.n0, w.kv, Cfg::kKVColBlockBytes);
  const auto issue = [&](const BwdStep<Cfg>& s) {
    const int st = BwdRing<Cfg>::stage(s.it);
    const std::uint32_t ph = BwdRing<Cfg>::parity(s.it);
    const int row = w.q_row0 + s.m0;
    mark(s.it, kProducerWait);
    mbar_wait(ring.q_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.q_full(st), Cfg::kQBytes);
    load(smem + Cfg::kOffQ + st * Cfg::kQBytes, &a.tma_q, ring.q_full(st), row, s.head,
         Cfg::kQColBlockBytes);
    mark(s.it, kProducerQIssued);
    mbar_wait(ring.do_empty(st), ph ^ 1u);
    mbar_expect_tx(ring.do_full(st), Cfg::kQBytes);
    load(smem + Cfg::kOffDo + st * Cfg::kQBytes, &a.tma_do, ring.do_full(st), row, s.head,
         Cfg::kQColBlockBytes);
    mark(s.it, kProducerDoIssued);
  };
  if constexpr (Cfg::kDet) {
    // Not unrolled: beside the dQ writer's code, in 24 registers, the unrolled walk spilled.
#pragma unroll 1
    for (BwdStep<Cfg> s = BwdStep<Cfg>::first(w); s.it < w.steps; s = s.next(w)) {
      issue(s);
    }
  } else {
    for (BwdStep<Cfg> s = BwdStep<Cfg>::first(w); s.it < w.steps; s = s.next(w)) {
      issue(s);
    }
  }
}

} // namespace kattn::cuda_kernels::sm90
