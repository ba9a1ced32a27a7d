// The tile configuration of the sm90 exact-fp32 forward (3xTF32 on wgmma) and its kernel
// arguments. Design and the shared-memory arithmetic: docs/cuda-f32-wgmma-plan.md.
//
// .tf32 wgmma reads both operands K-major only, so the launcher first splits k and v into
// big = tf32(x) and small = x - big in a workspace (f32_split.cuh), v transposed to Vt[h][key]
// (keys contiguous, the K dimension of P V). The kernel loads them, and the caller's q, by TMA
// into 128-byte-swizzled tiles of 32 floats per row; the consumer splits each Q tile in place.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "fwd_config.cuh"
#include "ptx.cuh"

namespace kattn::cuda_kernels::sm90 {

template <int kHeadDimT>
struct F32FwdConfig {
  static constexpr int kHeadDim = kHeadDimT;
  static_assert(kHeadDim == 128, "the fp32 wgmma forward is built for head dim 128");
  // One consumer warpgroup of 64 query rows: the split Q alone is 64 KB (big + small).
  static constexpr int kConsumerWGs = 1;
  static constexpr int kBlockM = 64;
  // 32-key blocks in two stages: 32 KB of K and 32 KB of Vt per stage (big + small). 64-key
  // blocks fit one stage only, and a single stage makes every V load wait for the last P V.
  static constexpr int kBlockN = 32;
  static constexpr int kStages = 2;
  static constexpr int kQStages = 1;
  // Work items of query blocks p and M - 1 - p (scheduler.cuh): even work under causal masks.
  static constexpr bool kPairedTiles = true;
  static constexpr int kThreads = 256; // the producer warpgroup + the consumer
  static constexpr int kConsumerThreads = 128;
  // Rows of 32 floats (128 bytes, the swizzle span): the head dim is kColBlocks of them.
  static constexpr int kColBlocks = kHeadDim / 32;
  static constexpr int kQPart = kBlockM * kHeadDim * 4; // one of big / small
  static constexpr int kKPart = kBlockN * kHeadDim * 4;
  static constexpr int kVPart = kHeadDim * kBlockN * 4; // Vt: head-dim rows of kBlockN keys
  static_assert(kBlockN * 4 == 128, "one Vt row of a key block is one 128-byte swizzle row");
  static constexpr int kQColBlockBytes = kBlockM * 128;
  static constexpr int kKColBlockBytes = kBlockN * 128;
  static constexpr int kOffQ = 0; // Q big, then Q small
  static constexpr int kOffK = kOffQ + 2 * kQPart;
  static constexpr int kOffV = kOffK + kStages * 2 * kKPart;
  // The tensor cores' fp32 accumulation truncates each wgmma's sum (round toward zero), a bias
  // that grows with the additions into one accumulator: O summed over all keys in the wgmma
  // accumulator was 1.6x the fp32 rule's error at S = 2048 and 3x at 6000 (H100). So every
  // kFlushBlocks key blocks (12 wgmmas each) the consumer adds O into an fp32 copy in shared
  // memory with round-to-nearest and restarts it (f32_mainloop.cuh): 32 KB, each thread its own
  // 64 floats in 16-byte chunks interleaved across the warpgroup (conflict-free).
  static constexpr int kFlushBlocks = 4;
  static constexpr int kOffAcc = kOffV + kStages * 2 * kVPart;
  static constexpr int kAccBytes = kBlockM * kHeadDim * 4;
  static constexpr int kOffBar = kOffAcc + kAccBytes;
  static constexpr int kNumBars = 2 * kQStages + 4 * kStages; // Ring's barriers
  static constexpr int kSmemBytes = kOffBar + kNumBars * 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory over the sm_90 limit");
  static_assert(kQPart % 1024 == 0 && kKPart % 1024 == 0 && kVPart % 1024 == 0 &&
                    kAccBytes % 1024 == 0 && kQColBlockBytes % 1024 == 0 &&
                    kKColBlockBytes % 1024 == 0,
                "swizzle atoms are 1024-byte aligned");
};

// FwdArgs (maps of q and of k's and v's big parts) plus the small parts' maps.
struct F32FwdArgs : FwdArgs {
  CUtensorMap tma_k_small;
  CUtensorMap tma_v_small;
  bool out_vec8; // out and its strides allow 8-byte stores of column pairs
};

} // namespace kattn::cuda_kernels::sm90
