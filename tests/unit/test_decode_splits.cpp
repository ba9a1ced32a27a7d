// The decode kernel's split heuristic (kattn_kernels/decode_splits.hpp) at its edges, without a
// GPU: H200-like slots (132 SMs x 3 resident CTAs) unless a case says otherwise.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "kattn_kernels/decode_splits.hpp"

namespace {

using kattn::decode_row_blocks;
using kattn::decode_splits;
using kattn::DecodeGrid;
constexpr std::int64_t kSlots = 132 * 3;

} // namespace

TEST_CASE("decode_splits: packed rows per KV head in blocks of 16") {
  CHECK(decode_row_blocks(32, 32, 1) == 1); // MHA
  CHECK(decode_row_blocks(32, 8, 4) == 1);  // g = 4, T = 4: 16 rows
  CHECK(decode_row_blocks(32, 8, 5) == 2);
  CHECK(decode_row_blocks(32, 1, 1) == 2); // MQA: 32 rows
  CHECK(decode_row_blocks(32, 1, 4) == 8);
}

TEST_CASE("decode_splits: one split when the CTAs fill the device or the keys are few") {
  CHECK(decode_splits(kSlots, 65536, kSlots) == 1);
  CHECK(decode_splits(317, 65536, kSlots) == 1); // 317 / 396 >= 80% of a wave
  CHECK(decode_splits(1, 64 * (DecodeGrid::kMinTilesPerSplit * 2 - 1), kSlots) ==
        1); // 1 split's keys
  CHECK(decode_splits(1, 1, kSlots) == 1);
  CHECK(decode_splits(0, 4096, kSlots) == 1); // degenerate inputs never divide by zero
  CHECK(decode_splits(8, 0, kSlots) == 1);
  CHECK(decode_splits(8, 4096, 0) == 1);
}

TEST_CASE("decode_splits: fills a wave, capped by the keys and by kMaxSplits") {
  // 2 CTAs, 8k keys: 128 tiles allow 32 splits of 4 tiles; the wave asks 198.
  CHECK(decode_splits(2, 8192, kSlots) == 32);
  // 2 CTAs, 64k keys: the wave's 198 is capped at kMaxSplits.
  CHECK(decode_splits(2, 65536, kSlots) == DecodeGrid::kMaxSplits);
  // 64 CTAs (B = 8, K = 8): ceil(396 / 64) = 7 splits.
  CHECK(decode_splits(64, 16384, kSlots) == 7);
  // Just under 80% of a wave still splits in two.
  CHECK(decode_splits(316, 65536, kSlots) == 2);
  // The split count never exceeds the tiles / kMinTilesPerSplit.
  for (std::int64_t S : {512, 1000, 4096, 100000})
    for (std::int64_t ctas : {1, 3, 50, 300})
      CHECK(decode_splits(ctas, S, kSlots) <=
            std::max<std::int64_t>(1, (S + 63) / 64 / DecodeGrid::kMinTilesPerSplit));
}
