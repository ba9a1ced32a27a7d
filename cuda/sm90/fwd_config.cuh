// Tile shapes and the shared-memory map of the sm90 forward, per element type and head dim.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kattn_cuda/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

// Template knobs, by name (FwdConfig<bf16, head dim, FwdKnobs{.block_n = 192, ...}>): 0 (or -1
// for the on/off knobs) picks the base tile of the head dim; what each does is documented at its
// use in FwdConfig. The configurations the library instantiates are the aliases below. Base
// consumer warpgroups: head dim 64: 3 (192 query rows, which halves the K/V traffic per FLOP
// that limits that head dim); 128 and 256: 2. Head dim 256: key block 80 (S is 64 x 80 = 40 fp32
// registers beside O's 128, and Q 64 KB + 2 stages of K and V at 40 KB each fill the 227 KB of
// shared memory), no ping-pong (measured faster: each warpgroup's GEMMs are long next to its
// softmax), and paired query blocks in the scheduler (scheduler.cuh).
struct FwdKnobs {
  int consumer_wgs = 0;
  int block_n = 0;
  int stages = 0;
  int ping_pong = -1;
  int q_stages = 1;
  int paired = -1;
  int uniform_wg = -1;
  int late_rescale = 0;
  int tail_n = 0;
  int lazy_rescale = 0;
  int split_last_pv = 0;
  int desc_advance = 0;
};

template <bool kIsBf16, int kHeadDimT, FwdKnobs kKnobs = FwdKnobs{}>
struct FwdConfig {
  static constexpr FwdKnobs kKnobsGiven = kKnobs; // for variants of a configuration (A/B tool)
  static constexpr bool kBf16 = kIsBf16;
  static constexpr int kHeadDim = kHeadDimT;
  static_assert(kHeadDim == 64 || kHeadDim == 128 || kHeadDim == 256, "head dims 64/128/256");
  static constexpr int kConsumerWGs =
      kKnobs.consumer_wgs != 0 ? kKnobs.consumer_wgs : (kHeadDim == 64 ? 3 : 2);
  // Consumer warpgroups take turns issuing their GEMMs (named barriers), so one runs softmax
  // while another's GEMMs own the tensor cores.
  static constexpr bool kPingPong = kKnobs.ping_pong >= 0 ? kKnobs.ping_pong != 0 : kHeadDim != 256;
  // Work items of two query blocks (p, M - 1 - p) of one (batch, head) instead of single tiles.
  static constexpr bool kPairedTiles = kKnobs.paired >= 0 ? kKnobs.paired != 0 : kHeadDim == 256;
  // The consumer warpgroup index broadcast from lane 0 (fwd_kernel.cuh): provably warp-uniform,
  // so shared-memory addresses and wgmma descriptors live in uniform registers.
  static constexpr bool kUniformWg =
      kKnobs.uniform_wg >= 0 ? kKnobs.uniform_wg != 0 : kHeadDim == 256;
  // The running output is rescaled once P V(i - 1) has completed (by softmax(i)'s factor),
  // outside the GEMM turn, instead of between issuing S(i) and P V(i - 1) inside it.
  static constexpr bool kLateRescale = kKnobs.late_rescale != 0;
  static constexpr int kBlockM = 64 * kConsumerWGs; // 64 query rows per consumer warpgroup
  static constexpr int kBlockN =
      kKnobs.block_n != 0 ? kKnobs.block_n : (kHeadDim == 256 ? 80 : 128);
  // wgmma: N of S = Q K^T a multiple of 8 (<= 256), K of P V in steps of 16.
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256, "key block");
  // A tile's last key block, when it holds at most kTailN keys, runs S = Q K^T with N = kTailN
  // and P V over kTailN keys (0: off). 192-key blocks at 4096 keys: 64 of 192 keys in the last
  // block, a full-width block would spend 2/3 of its GEMMs on masked keys.
  static constexpr int kTailN = kKnobs.tail_n;
  static_assert(kTailN == 0 || (kTailN % 16 == 0 && kTailN < kBlockN), "tail block");
  // The running max is kept while no row of a warp's block grows it by more than 8 (log2
  // units), and O is not rescaled for such blocks: the probabilities stay <= 2^8, well inside
  // fp32 for O and the row sums and exact to bf16's relative precision; the final 1/sum and LSE
  // use the same max, so the result is the same up to rounding.
  static constexpr bool kLazyRescale = kKnobs.lazy_rescale != 0;
  // A tile's last P V runs as two wgmma groups over the output's column halves; the first
  // half is normalised and stored while the second half's GEMM runs.
  static constexpr bool kSplitLastPv = kKnobs.split_last_pv != 0 && kHeadDim == 128;
  // wgmma descriptors built once per block and advanced per k-step by a 32-bit add, instead of
  // packed from the address at every k-step.
  static constexpr bool kDescAdvance = kKnobs.desc_advance != 0;
  static constexpr int kStages = kKnobs.stages != 0 ? kKnobs.stages : (kHeadDim == 64 ? 3 : 2);
  static constexpr int kThreads = 128 * (1 + kConsumerWGs); // + the producer warpgroup
  static constexpr int kConsumerThreads = 128 * kConsumerWGs;
  // setmaxnreg budgets: 64K registers split between producer and consumers.
  static constexpr int kProducerRegs = 24;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;
  static_assert(128 * kProducerRegs + kConsumerThreads * kConsumerRegs <= 65536, "registers");
  // TMA with 128-byte swizzle moves 64-element column blocks; a tile is kColBlocks of them.
  static constexpr int kColBlocks = kHeadDim / 64;
  static constexpr int kQBytes = kBlockM * kHeadDim * 2;
  static constexpr int kKVBytes = kBlockN * kHeadDim * 2;
  static constexpr int kQColBlockBytes = kBlockM * 128;
  static constexpr int kKVColBlockBytes = kBlockN * 128;
  // 2: the next tile's Q loads while this tile still computes (persistent CTAs).
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

// The configurations the library instantiates (inst/*.cu) and which problems get them
// (tile_choice.hpp). Measured with kokkosattn_sm90_config_ab (docs/cuda-sm90.md, "Tile
// configurations"): below 4096 keys head dim 128 gains 4-29% from paired query blocks with a
// double-buffered Q (K/V read once per pair, the next Q loads under this tile); from 4096 a
// 192-key block amortises the per-block waits and barriers (+1-8%). Head dim 64 with causal
// masks up to 1024 keys: 2 consumer warpgroups (128-row tiles waste less on the diagonal).
// Head dim 64's 192-row tiles also take the warp-uniform warpgroup index (kUniformWg): +5-6% at
// every T, causal or not (A/B round 4). Round 5: every ping-pong configuration carries its
// turns across tiles (+0.2-5%); head dim 64's 192-row tiles also rescale O late (+1-2%; it
// costs head dim 128 2-15%). Round 9 (docs/cuda-sm90.md): head dims 64 and 128 (from 4096
// keys) advance their wgmma descriptors by one add per k-step (+1.5-2.7% at head dim 128, up to
// +2.6% at 64; mixed at 256 and for the short head dim 128 tile); the 192-key tile splits its
// last P V in column halves (+1-2% at 4096 keys); head dim 256 rescales O lazily (+2-7%: without
// ping-pong the 128-register rescale sits between a warpgroup's own GEMMs; it costs head dims 64
// and 128 0.5-4%).
template <bool kBf16>
using Sm90H64 =
    FwdConfig<kBf16, 64, FwdKnobs{.uniform_wg = 1, .late_rescale = 1, .desc_advance = 1}>;
template <bool kBf16>
using Sm90H64ShortCausal =
    FwdConfig<kBf16, 64, FwdKnobs{.consumer_wgs = 2, .stages = 3, .paired = 1}>;
template <bool kBf16>
using Sm90H128Short = FwdConfig<kBf16, 128, FwdKnobs{.q_stages = 2, .paired = 1}>;
// From 4096 keys: 192-key blocks, and a narrow (64-key) last block for key lengths whose last
// block holds at most 64 keys (round 6: +1-2% at 4096 keys).
template <bool kBf16>
using Sm90H128LongTail = FwdConfig<kBf16, 128,
                                   FwdKnobs{.block_n = 192,
                                            .stages = 2,
                                            .paired = 1,
                                            .tail_n = 64,
                                            .split_last_pv = 1,
                                            .desc_advance = 1}>;
template <bool kBf16>
using Sm90H256 = FwdConfig<kBf16, 256, FwdKnobs{.lazy_rescale = 1}>;

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

} // namespace kattn::cuda_kernels::sm90
