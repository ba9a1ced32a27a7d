// Tile shapes and the shared-memory map of the sm90 forward, per element type and head dim.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "kattn_cuda/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

// Template knobs: 0 picks the tuned default (head dim 64: 3 consumer warpgroups, i.e. 192 query
// rows, which halves the K/V traffic per FLOP that limits that head dim; 128: 2).
template <bool kIsBf16, int kHeadDimT, int kConsumerWGsT = 0, int kBlockNT = 0, int kStagesT = 0,
          bool kPingPongT = true, int kQStagesT = 1>
struct FwdConfig {
  static constexpr bool kBf16 = kIsBf16;
  static constexpr int kHeadDim = kHeadDimT;
  static constexpr int kConsumerWGs = kConsumerWGsT != 0 ? kConsumerWGsT : (kHeadDim == 64 ? 3 : 2);
  // Consumer warpgroups take turns issuing their GEMMs (named barriers), so one runs softmax
  // while another's GEMMs own the tensor cores.
  static constexpr bool kPingPong = kPingPongT;
  static constexpr int kBlockM = 64 * kConsumerWGs; // 64 query rows per consumer warpgroup
  static constexpr int kBlockN = kBlockNT != 0 ? kBlockNT : 128;
  static constexpr int kStages = kStagesT != 0 ? kStagesT : (kHeadDim == 64 ? 3 : 2);
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
  static constexpr int kQStages = kQStagesT;
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
};

} // namespace kattn::cuda_kernels::sm90
