// Tile shapes and shared memory of the decode kernel, and where a split's partial rows go.
//
// A CTA of 4 warps owns DecodeGrid::kRows packed query rows (row r of a (sequence, KV head) is
// token r / g of query head kv * g + r % g, g = N / K: the query heads that share the KV head
// read each K/V tile once) and walks its split's keys kTileKeys at a time; each warp takes 16
// keys of every tile with its own online softmax, and the warps' rows are merged at the end.
// Tiles are double-buffered (cp.async), so one tile of K and V is in flight while the other is
// used: decode is bound by the bytes of K and V, not by the MMAs.
#pragma once

#include <cstdint>

#include "kattn_kernels/decode_splits.hpp"

namespace kattn::cuda_kernels::decode {

template <int HD>
struct Config {
  static constexpr int WARPS = 4;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int ROWS = DecodeGrid::kRows;
  static constexpr int TILE = DecodeGrid::kTileKeys;
  static constexpr int WARP_KEYS = TILE / WARPS;
  static constexpr int STAGES = 2;
  static constexpr int CHUNKS = HD / 8;                  // 16-byte chunks per row
  static constexpr int ROWS_PER_STEP = THREADS / CHUNKS; // rows one copy step covers
  static constexpr int Q_ELEMS = ROWS * HD;
  static constexpr int KV_ELEMS = TILE * HD; // one K or V tile
  static constexpr int STAGE_ELEMS = 2 * KV_ELEMS;
  static constexpr int SMEM_BYTES = (Q_ELEMS + STAGES * STAGE_ELEMS) * 2;
  // The warps' merge reuses the stages: O [WARPS][ROWS][O_STRIDE] f32 (padded rows: the
  // fragment stores of one column pair spread over the banks), then max and sum per row.
  static constexpr int O_STRIDE = HD + 4;
  static constexpr int MERGE_BYTES = (WARPS * ROWS * O_STRIDE + 2 * WARPS * ROWS) * 4;
  static_assert(MERGE_BYTES <= STAGES * STAGE_ELEMS * 2, "the merge must fit in the stages");
  static_assert(WARP_KEYS == 16, "a warp's keys are one k-step of P V");
  static_assert(TILE % ROWS_PER_STEP == 0 && ROWS * CHUNKS % THREADS == 0, "uneven copies");
};

// Partial rows of a split run (splits > 1), f32, merged by decode_combine: row id
// ((split * B + b) * N + n) * T + t; out normalised by the split's own sum, LSE natural.
struct SplitOut {
  float* o = nullptr;   // [splits, B, N, T, Hv]
  float* lse = nullptr; // [splits, B, N, T]
  int splits = 1;       // 1: the kernel writes out (and lse) itself
};

} // namespace kattn::cuda_kernels::decode
