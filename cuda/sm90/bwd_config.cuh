// The tile configuration of the sm90 backward (bwd_kernel.cuh): shapes, register budgets, the
// shared-memory map and its barriers, and the kernel arguments.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "ptx.cuh"

#include "kattn_kernels/flash_bwd_params.hpp"

namespace kattn::cuda_kernels::sm90 {

// A CTA keeps 128 keys of K and V (64 per consumer warpgroup: the rows of its dK and dV
// accumulators) and walks the query blocks of 64 rows that see them, Q and dO double-buffered.
// dQ = dS K: at head dim 128 each warpgroup computes half of dQ's columns over all 128 keys (dS
// of both warpgroups through shared memory), at 64 all columns over its own 64 keys: both are
// m64n64 products, staged in shared memory and added into dq_accum, one reduction per warp.
//
// The reduction's kind, by head dim: at 64 a 1-D bulk reduction of the warp's fragments into
// dq_accum's tile order (p.dq_tile_order, kattn_kernels/bwd_geometry.hpp) with EVICT_LAST, at 128
// a TMA tensor reduction of a swizzled box into row-order dq_accum. Measured (H100, fwd+bwd, four
// A/B calls, benchmarks/results/h100-2026-12-07-sm90-bwd-dq-bulk/): the bulk form 1.01-1.05x
// at 64, 0.96-1.00x at 128 (with or without the hint, either order of a tile's column halves).
constexpr bool bwd_dq_bulk(int head_dim) {
  return head_dim == 64;
}

// kDetT: deterministic mode (bwd_dq_reduce.cuh): a writer warp adds each step's dQ into
// dq_accum in the key blocks' fixed order (kattn_kernels/bwd_geometry.hpp, dq_order_ticket).
template <bool kIsBf16, int kHeadDimT, bool kDetT = false>
struct BwdConfig {
  static constexpr bool kBf16 = kIsBf16;
  static constexpr int kHeadDim = kHeadDimT;
  static constexpr bool kDet = kDetT;
  static_assert(kHeadDim == 64 || kHeadDim == 128, "sm90 backward: head dims 64 and 128");
  static constexpr int kBlockN = 128; // keys per CTA
  static constexpr int kBlockM = 64;  // query rows per step
  static constexpr int kConsumerWGs = 2;
  static constexpr int kThreads = 128 * (1 + kConsumerWGs);
  static constexpr int kConsumerThreads = 128 * kConsumerWGs;
  static constexpr bool kDqSplit = kHeadDim == 128;
  static constexpr bool kDqBulk = bwd_dq_bulk(kHeadDim);
  // setmaxnreg budgets, as the forward's (a first version gave the producer 32, 1024 registers
  // past the CTA's pool: the consumers' increase then never returned, and the kernel hung).
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = 240;
  static_assert(128 * kProducerRegs + kConsumerThreads * kConsumerRegs <=
                    launch_register_pool(kThreads),
                "setmaxnreg budgets over the CTA's registers");
  static constexpr int kStages = 2; // Q and dO buffers
  // TMA with 128-byte swizzle moves 64-element column blocks.
  static constexpr int kColBlocks = kHeadDim / 64;
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;
  static constexpr int kKVColBlockBytes = kBlockN * 128;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kQColBlockBytes = kBlockM * 128;
  static constexpr int kDsBytes = kBlockN * kBlockM * 2; // dS^T: a key per 128-byte row
  static constexpr int kOffK = 0;
  static constexpr int kOffV = kOffK + kKVBytes;
  static constexpr int kOffQ = kOffV + kKVBytes;
  static constexpr int kOffDo = kOffQ + kStages * kQBytes;
  static constexpr int kOffDs = kOffDo + kStages * kQBytes; // two buffers
  // A warpgroup's dQ (64 rows x 64 fp32 columns), each warp's 16 rows one staging box: fragment
  // order (kDqBulk) or a TMA box whose rows are two 128-byte swizzle rows (columns 0-31, 32-63).
  static constexpr int kDqWarpRows = 16;
  static constexpr int kDqWarpBytes = kDqWarpRows * 256;
  static constexpr int kDqBytes = kBlockM * 256;
  static constexpr int kOffDq = kOffDs + 2 * kDsBytes;
  // Deterministic mode's hand-over buffers (the writer's, bwd_dq_reduce.cuh): at head dim 64 the
  // staged sum has two, so that the consumers stage a step while the writer still adds the one
  // before (one cost 16-25% fwd+bwd on an H100: benchmarks/results/
  // h100-2026-12-07-sm90-bwd-deterministic/); at 128 one (a second 32 KB is past the limit).
  static constexpr int kDqBuffers = kDet && !kDqSplit ? 2 : 1;
  // dQ staging slots of kDqBytes: one per consumer warpgroup, the last one's once per buffer.
  static constexpr int kDqSlots = kConsumerWGs + kDqBuffers - 1;
  // LSE * log2 e, then D, of a step's rows: per consumer warpgroup, per stage.
  static constexpr int kRowBytes = 2 * kBlockM * 4;
  static constexpr int kOffRows = kOffDq + kDqSlots * kDqBytes;
  static constexpr int kOffBar = kOffRows + kConsumerWGs * kStages * kRowBytes;
  // kv_full, q_full[], q_empty[], do_full[], do_empty[]; kDet: dq_full[2], dq_empty[2], the
  // CTA's block ticket (4 bytes of 8) and per buffer the staged dQ's job for the writer (DqJob,
  // 24 bytes in 32)
  static constexpr int kNumBars = 1 + 4 * kStages + (kDet ? 13 : 0);
  static constexpr int kSmemBytes = kOffBar + kNumBars * 8 + 1024; // + alignment to 1024
  static_assert(kSmemBytes <= 227 * 1024, "shared memory over the sm_90 limit");
  static_assert(kOffV % 1024 == 0 && kOffQ % 1024 == 0 && kOffDo % 1024 == 0 &&
                    kOffDs % 1024 == 0 && kOffDq % 1024 == 0 && kQColBlockBytes % 1024 == 0,
                "swizzle atoms");
};

// mbarriers. Q and dO of step `it` use stage it % kStages with parity (it / kStages) & 1.
// Named barriers of the consumers (bwd_consumer.cuh): 1 both warpgroups (tails zeroed), 2 + wg
// one warpgroup's dS^T rows and row buffers, 4 + wg its first rows, 6 + 2 wg + it % 2 warpgroup
// wg's dS^T rows for the other's dQ (head dim 128); kDet at head dim 64: 6 warpgroup 0's dQ
// staged for warpgroup 1 to add, 7 warpgroup 1 done reading it (warpgroup 0 may stage again).
template <class Cfg>
struct BwdRing {
  std::uint32_t bar;
  __device__ __forceinline__ std::uint32_t kv_full() const { return bar; }
  __device__ __forceinline__ std::uint32_t q_full(int st) const { return bar + 8 * (1 + st); }
  __device__ __forceinline__ std::uint32_t q_empty(int st) const {
    return bar + 8 * (1 + Cfg::kStages + st);
  }
  __device__ __forceinline__ std::uint32_t do_full(int st) const {
    return bar + 8 * (1 + 2 * Cfg::kStages + st);
  }
  __device__ __forceinline__ std::uint32_t do_empty(int st) const {
    return bar + 8 * (1 + 3 * Cfg::kStages + st);
  }
  // kDet: the consumers' staged dQ of a step in hand-over buffer `buf` is complete (count: the
  // warps that hand it over) and the writer is done with it (count 1). Step it uses buffer
  // dq_buffer(it) with parity dq_parity(it).
  __device__ __forceinline__ std::uint32_t dq_full(int buf) const {
    return bar + 8 * (1 + 4 * Cfg::kStages) + 8 * buf;
  }
  __device__ __forceinline__ std::uint32_t dq_empty(int buf) const { return dq_full(2) + 8 * buf; }
  __device__ __forceinline__ std::uint32_t ticket() const { return dq_full(4); }
  __device__ __forceinline__ std::uint32_t dq_job(int buf) const { return dq_full(5) + 32 * buf; }
  static_assert((Cfg::kOffBar + 8 * (1 + 4 * Cfg::kStages) + 40) % 16 == 0,
                "dq_job: 16-byte aligned stores");
  static __device__ __forceinline__ int dq_buffer(int it) { return it % Cfg::kDqBuffers; }
  static __device__ __forceinline__ std::uint32_t dq_parity(int it) {
    return static_cast<std::uint32_t>(it / Cfg::kDqBuffers) & 1u;
  }
  // Warp `warp`'s staged dQ box of consumer warpgroup `wg` in hand-over buffer `buf` (the last
  // warpgroup's box moves with the buffer; the others' have one).
  static __device__ __forceinline__ std::uint32_t dq_box(std::uint32_t smem, int wg, int buf,
                                                         int warp) {
    const int slot = wg + (wg == Cfg::kConsumerWGs - 1 ? buf : 0);
    return smem + Cfg::kOffDq + slot * Cfg::kDqBytes + warp * Cfg::kDqWarpBytes;
  }
  static __device__ __forceinline__ int stage(int it) { return it % Cfg::kStages; }
  static __device__ __forceinline__ std::uint32_t parity(int it) {
    return static_cast<std::uint32_t>(it / Cfg::kStages) & 1u;
  }
};

// Everything the kernel reads, passed once as a __grid_constant__ parameter.
struct BwdArgs {
  CUtensorMap tma_q;
  CUtensorMap tma_k;
  CUtensorMap tma_v;
  CUtensorMap tma_do;
  CUtensorMap tma_dq; // dq_accum, f32 [N, acc_rows, H]: the tensor reduction's target (!kDqBulk)
  FlashBwdParams p;
  std::uint64_t* trace; // bwd_trace.cuh's marks (trace builds only; nullptr: none)
};

} // namespace kattn::cuda_kernels::sm90
