// dQ into dq_accum for the sm90 backward: one warp's staged box by one reduction (the consumers
// issue it themselves by default), and deterministic mode's writer, which adds a step's boxes
// only when the key blocks before it in the fixed order have added theirs.
#pragma once

#include <cstdint>

#include "bwd_config.cuh"
#include "bwd_work.cuh"
#include "kattn_kernels/bwd_geometry.hpp"
#include "ptx.cuh"

namespace kattn::cuda_kernels::sm90 {

// Whether warp `warp`'s 16-row box of the query block at m0 reaches into the sequence (a box
// wholly past it is not added; DqJob::boxes counts those that do).
template <class Cfg>
__device__ __forceinline__ bool dq_box_has_rows(const BwdWork<Cfg>& w, int m0, int warp) {
  return Cfg::kDqWarpRows * warp < w.seq.q_len - m0;
}

// Adds the staged box of warp `warp` of consumer warpgroup `wg` into dq_accum (query head `head`,
// the block's first accumulator row `row`, acc_row0 + m0 in the kernel's layout), completing in
// the calling thread's bulk group (the caller commits): at head dim 64 (kDqBulk) a 1-D bulk
// reduction of the 4 KB fragment-order block into its place in dq_accum's tile
// (tile_order_offset) with an EVICT_LAST hint (rows past the sequence add into the sequence's own
// last tile, which the conversion never reads); otherwise one TMA tensor reduction of the
// swizzled 16 x 64 box (two 32-column boxes queued at the TMA unit).
template <class Cfg>
__device__ __forceinline__ void issue_dq_box(const BwdArgs& a, int head, std::int64_t row, int wg,
                                             int warp, std::uint32_t box) {
  if constexpr (Cfg::kDqBulk) {
    float* dst = a.p.dq_accum + (head * a.p.acc_rows + row) * Cfg::kHeadDim +
                 (Cfg::kDqSplit ? wg * 4096 : 0) + warp * 1024;
    bulk_reduce_add_f32_evict_last(dst, box, Cfg::kDqWarpBytes);
  } else {
    tma_reduce_add_4d(&a.tma_dq, box, 0, Cfg::kDqSplit ? 2 * wg : 0,
                      static_cast<int>(row) + Cfg::kDqWarpRows * warp, head);
  }
}

// What the writer needs of a staged step, written by the consumers beside the staged dQ (the
// writer's 24 registers would not hold the step's work).
struct DqJob {
  std::int64_t row; // issue_dq_box's
  int head;
  int boxes;  // warp boxes with rows in the sequence
  int slot;   // the tile's counter in p.dq_order
  int ticket; // this key block's place in the tile's order
};

// The job of step (head, m0) of the CTA's work (dq_order_ticket: never -1 for a step of the walk,
// tests/unit/test_bwd_accumulator_layout.cpp).
template <class Cfg>
__device__ __forceinline__ DqJob dq_job_of(const FlashBwdParams& p, const BwdWork<Cfg>& w, int head,
                                           int m0) {
  DqJob j;
  j.row = acc_row0<Cfg::kDqBulk>(p, w.seq, w.b) + m0;
  j.head = head;
  const int rows = w.seq.q_len - m0;
  j.boxes = rows >= Cfg::kBlockM ? 4 : (rows + Cfg::kDqWarpRows - 1) / Cfg::kDqWarpRows;
  j.slot = static_cast<int>(dq_order_slot(p, w.seq, w.b, head, m0));
  j.ticket = dq_order_ticket(w.rule, w.n0 / Cfg::kBlockN, Cfg::kBlockN, m0, Cfg::kBlockM);
  return j;
}
// The job's 16-byte half first (ring.dq_job(buf) is 16-byte aligned), then the row.
__device__ __forceinline__ void store_dq_job(std::uint32_t at, const DqJob& j) {
  asm volatile("st.shared.v4.s32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(j.head), "r"(j.boxes),
               "r"(j.slot), "r"(j.ticket)
               : "memory");
  asm volatile("st.shared.v2.u32 [%0], {%1, %2};\n" ::"r"(at + 16),
               "r"(static_cast<std::uint32_t>(j.row)), "r"(static_cast<std::uint32_t>(j.row >> 32))
               : "memory");
}
__device__ __forceinline__ DqJob load_dq_job(std::uint32_t at) {
  DqJob j;
  asm volatile("ld.shared.v4.s32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(j.head), "=r"(j.boxes), "=r"(j.slot), "=r"(j.ticket)
               : "r"(at)
               : "memory");
  std::uint32_t lo, hi;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(lo), "=r"(hi) : "r"(at + 16) : "memory");
  j.row = static_cast<std::int64_t>((static_cast<std::uint64_t>(hi) << 32) | lo);
  return j;
}

// Deterministic mode: one thread of the producer warpgroup. Per step, once the consumers staged
// its dQ and job (dq_full), it waits until the tile's counter equals this key block's ticket,
// adds the boxes, waits for the additions to complete, advances the counter and frees the
// staging (dq_empty), which the consumers wait for before staging into that buffer again. At
// head dim 64 warpgroup 1 stages the sum of both warpgroups' dQ (bwd_consumer.cuh), two buffers
// in turn: one addition per key block, and a step staged while the writer adds the one before.
template <class Cfg>
__device__ __forceinline__ void write_dq_in_order(const BwdArgs& a, std::uint32_t smem, int steps) {
  static_assert(Cfg::kDet);
  const BwdRing<Cfg> ring{smem + Cfg::kOffBar};
  for (int it = 0; it < steps; ++it) {
    const int buf = BwdRing<Cfg>::dq_buffer(it);
    mbar_wait(ring.dq_full(buf), BwdRing<Cfg>::dq_parity(it));
    const DqJob j = load_dq_job(ring.dq_job(buf));
    if (j.ticket < 0) {
      __trap(); // a step outside the order would wait forever
    }
    std::int32_t* flag = a.p.dq_order + j.slot;
    wait_flag_eq(flag, j.ticket);
    fence_proxy_async_global();
#pragma unroll 1
    for (int wg = Cfg::kDqSplit ? 0 : 1; wg < Cfg::kConsumerWGs; ++wg) {
#pragma unroll 1
      for (int warp = 0; warp < j.boxes; ++warp) {
        issue_dq_box<Cfg>(a, j.head, j.row, wg, warp, BwdRing<Cfg>::dq_box(smem, wg, buf, warp));
      }
    }
    bulk_commit();
    bulk_wait<0>(); // the additions are complete in global memory, not only read
    fence_proxy_async_global();
    release_flag_add(flag, 1);
    mbar_arrive(ring.dq_empty(buf));
  }
}

} // namespace kattn::cuda_kernels::sm90
