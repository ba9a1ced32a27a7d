// The tile configuration of the sm90 forward (knobs, shapes, shared-memory map) and its
// kernel arguments.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "ptx.cuh"

#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

// The knobs of one tile configuration, all given explicitly: the library's configurations come
// from tile_policy() (tile_policy.hpp), the A/B tool's candidates are variants of them.
struct FwdKnobs {
  int consumer_wgs; // consumer warpgroups, 64 query rows each (the tile has 64 x this many)
  int block_n;      // keys per block (S = Q K^T is 64 x block_n per warpgroup)
  int stages;       // K/V ring stages
  // Consumer warpgroups take turns issuing their GEMMs (named barriers), so one runs softmax
  // while another's GEMMs own the tensor cores; the turns run on across tiles (mainloop.cuh).
  bool ping_pong;
  int q_stages; // Q buffers; 2: the next tile's Q loads while this tile still computes
  // Work items of two query blocks (p, M - 1 - p) of one (batch, head) instead of single tiles
  // (scheduler.cuh).
  bool paired;
  // The consumer warpgroup index broadcast from lane 0 (fwd_kernel.cuh): provably warp-uniform,
  // so shared-memory addresses and wgmma descriptors live in uniform registers.
  bool uniform_wg;
  // The running output is rescaled once P V(i - 1) has completed (by softmax(i)'s factor),
  // outside the GEMM turn, instead of between issuing S(i) and P V(i - 1) inside it.
  bool late_rescale;
  // A tile's last key block, when it holds at most tail_n keys, runs S = Q K^T with N = tail_n
  // and P V over tail_n keys (0: off).
  int tail_n;
  // The running max is kept while no row of a warp's block grows it by more than 8 (log2
  // units), and O is not rescaled for such blocks: the probabilities stay <= 2^8, well inside
  // fp32 for O and the row sums and exact to bf16's relative precision; the final 1/sum and LSE
  // use the same max, so the result is the same up to rounding.
  bool lazy_rescale;
  // A tile's last P V runs as two wgmma groups over the output's column halves (one 64-column
  // block each: head dim 128); the first half is normalised and stored while the second runs.
  bool split_last_pv;
  // wgmma descriptors built once per block and advanced per k-step by a 32-bit add, instead of
  // packed from the address at every k-step.
  bool desc_advance;
};

// Tile shapes, register budgets and the shared-memory map of one configuration. kSeqMajorT:
// q, k, v are sequence-major (row stride 1, as a B = 1 Kokkos LayoutLeft View): TMA boxes are
// 64 rows x the head dim, stored as head-dim rows of 64 sequence elements, and the GEMMs read
// Q and K MN-major and V K-major (the row-major tiles are the other way round).
template <bool kIsBf16, int kHeadDimT, FwdKnobs kKnobs, bool kSeqMajorT = false>
struct FwdConfig {
  static constexpr bool kBf16 = kIsBf16;
  static constexpr bool kSeqMajor = kSeqMajorT;
  static constexpr int kHeadDim = kHeadDimT;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dims 64/128/256");
  static constexpr int kConsumerWGs = kKnobs.consumer_wgs;
  static_assert(kConsumerWGs == 2 || kConsumerWGs == 3, "2 or 3 consumer warpgroups");
  static constexpr bool kPingPong = kKnobs.ping_pong;
  static constexpr bool kPairedTiles = kKnobs.paired;
  static constexpr bool kUniformWg = kKnobs.uniform_wg;
  static constexpr bool kLateRescale = kKnobs.late_rescale;
  static constexpr int kBlockM = 64 * kConsumerWGs;
  static constexpr int kBlockN = kKnobs.block_n;
  // wgmma: N of S = Q K^T a multiple of 8 (<= 256), K of P V in steps of 16.
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256, "key block");
  static constexpr int kTailN = kKnobs.tail_n;
  static_assert(kTailN == 0 || (kTailN % 16 == 0 && kTailN < kBlockN), "tail block");
  static constexpr bool kLazyRescale = kKnobs.lazy_rescale;
  static constexpr bool kSplitLastPv = kKnobs.split_last_pv;
  static_assert(!kSplitLastPv || kHeadDim == 128, "split last P V: head dim 128");
  static constexpr bool kDescAdvance = kKnobs.desc_advance;
  static constexpr int kStages = kKnobs.stages;
  static constexpr int kThreads = 128 * (1 + kConsumerWGs); // + the producer warpgroup
  static constexpr int kConsumerThreads = 128 * kConsumerWGs;
  // setmaxnreg budgets: 64K registers split between producer and consumers.
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;
  static_assert(128 * kProducerRegs + kConsumerThreads * kConsumerRegs <=
                    launch_register_pool(kThreads),
                "setmaxnreg budgets over the CTA's registers");
  // TMA with 128-byte swizzle moves 64-element column blocks; a tile is kColBlocks of them.
  static constexpr int kColBlocks = kHeadDim / 64;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;
  static constexpr int kQColBlockBytes = kBlockM * 128;
  static constexpr int kKVColBlockBytes = kBlockN * 128;
  // Sequence-major: a tile is kBlockM / 64 (kBlockN / 64) boxes of 64 sequence elements by the
  // head dim, kSeqBoxBytes each; a narrow last key block (kTailN) is whole boxes too.
  static constexpr int kSeqBoxBytes = kHeadDim * 128;
  static_assert(!kSeqMajor || (kBlockN % 64 == 0 && kTailN % 64 == 0 && kHeadDim <= 128),
                "sequence-major: key blocks of 64-row boxes, head dims 64 and 128");
  static constexpr int kQStages = kKnobs.q_stages;
  static constexpr int kOffQ = 0;
  static constexpr int kOffK = kOffQ + kQStages * kQBytes;
  static constexpr int kOffV = kOffK + kStages * kKVBytes;
  static constexpr int kOffBar = kOffV + kStages * kKVBytes;
  // q_full[], q_empty[], k_full[], v_full[], k_empty[], v_empty[]
  static constexpr int kNumBars = 2 * kQStages + 4 * kStages;
  // +1024: the dynamic buffer is aligned up to 1024 bytes (the swizzle atom) at run time.
  static constexpr int kSmemBytes = kOffBar + kNumBars * 8 + 1024;
  static_assert(kSmemBytes <= 227 * 1024, "shared memory over the sm_90 limit");
  static_assert(kQColBlockBytes % 1024 == 0 && kKVColBlockBytes % 1024 == 0, "swizzle atoms");
};

// Everything the kernel reads, passed once as a __grid_constant__ parameter.
struct FwdArgs {
  CUtensorMap tma_q;
  CUtensorMap tma_k;
  CUtensorMap tma_v;
  FlashFwdParams p;
  int num_m_blocks;
  int num_tiles;      // num_m_blocks * B * N, walked by a persistent grid
  float softmax_log2; // multiplier turning the (soft-capped) score into log2 units
  float score_scale;  // scale applied before softcap (or folded into softmax_log2 without it)
  float softcap_mul;  // softcap (0 = none)
  // A tool's Probe buffer (probe.cuh); nullptr and never read by the library's kernels (NoProbe).
  void* probe;
  bool out_vec16; // out and its strides allow 16-byte row stores (8 elements)
};

// The score arguments of p: softcap, and the scale applied before it or folded into the log2
// multiplier without it.
inline void set_score_args(FwdArgs& a, const FlashFwdParams& p) {
  constexpr float kLog2e = 1.4426950408889634f;
  a.softcap_mul = p.softcap;
  a.score_scale = p.softcap > 0.f ? p.scale / p.softcap : p.scale;
  a.softmax_log2 = p.softcap > 0.f ? kLog2e : p.scale * kLog2e;
}

} // namespace kattn::cuda_kernels::sm90
