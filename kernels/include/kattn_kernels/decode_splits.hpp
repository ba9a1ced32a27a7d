// How many pieces the decode kernel (cuda/decode/) splits each sequence's keys into
// (FlashDecoding): enough CTAs to fill the device once, each split at least a few key tiles long.
// Host code, no CUDA: the heuristic is tested at its edges without a GPU
// (tests/unit/test_decode_splits.cpp) and explain() names its result.
#pragma once

#include <algorithm>
#include <cstdint>

namespace kattn {

struct DecodeGrid {
  static constexpr int kRows = 16;            // packed query rows (GQA group x new tokens) per CTA
  static constexpr int kTileKeys = 64;        // keys per pipeline stage of a CTA (16 per warp)
  static constexpr int kMinTilesPerSplit = 4; // 256 keys: a split's merge costs < its loads
  static constexpr int kMaxSplits = 128;
};

// Packed rows of one (sequence, KV head): the g = N / K query heads sharing the KV head times
// the T new tokens, in CTAs of DecodeGrid::kRows.
inline std::int64_t decode_row_blocks(std::int64_t N, std::int64_t K, std::int64_t T) {
  const std::int64_t rows = (N / K) * T;
  return (rows + DecodeGrid::kRows - 1) / DecodeGrid::kRows;
}

// The split count for a problem of `ctas` CTAs before splitting (row blocks x B x K), keys up
// to S, on a device running `slots` CTAs at once (SMs x resident CTAs per SM): 1 when the CTAs
// already fill the device or the keys are too few to share; else the count that fills it,
// capped by the keys (kMinTilesPerSplit tiles each) and kMaxSplits (the merge's workspace).
inline int decode_splits(std::int64_t ctas, std::int64_t S, std::int64_t slots) {
  if (ctas <= 0 || S <= 0 || slots <= 0)
    return 1;
  const std::int64_t tiles = (S + DecodeGrid::kTileKeys - 1) / DecodeGrid::kTileKeys;
  const std::int64_t by_keys = tiles / DecodeGrid::kMinTilesPerSplit;
  if (ctas * 5 >= slots * 4 || by_keys < 2) // >= 80% of a wave: splitting adds only the merge
    return 1;
  const std::int64_t fill = (slots + ctas - 1) / ctas;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min({fill, by_keys, std::int64_t{DecodeGrid::kMaxSplits}})));
}

} // namespace kattn
