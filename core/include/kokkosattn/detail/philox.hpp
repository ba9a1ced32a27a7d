// Counter-based dropout: Philox4x32-10 keyed by the seed, counted by (j/4, i, b*N+n, offset).
// Every backend draws the same bits for the same (seed, offset, b, n, i, j), so dropout masks
// agree bit for bit across backends. See docs/semantics.md, "Dropout".
#pragma once

#include <cstdint>

#include "kokkosattn/config.hpp"

namespace kattn {

struct Philox4x32 {
  std::uint32_t v[4];
};

KATTN_INLINE void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi,
                                 std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

// Ten rounds of Philox-4x32 (Salmon et al., SC'11) with its published constants.
KATTN_INLINE Philox4x32 philox4x32_10(Philox4x32 ctr, std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, ctr.v[0], hi0, lo0);
    philox_mulhilo(0xCD9E8D57u, ctr.v[2], hi1, lo1);
    ctr = Philox4x32{{hi1 ^ ctr.v[1] ^ k0, lo1, hi0 ^ ctr.v[3] ^ k1, lo0}};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return ctr;
}

// Keep threshold in 24-bit units: an element is kept iff its 24-bit draw is below it.
KATTN_INLINE std::uint32_t dropout_keep_threshold(double p_drop) {
  return static_cast<std::uint32_t>((1.0 - p_drop) * 16777216.0 + 0.5);
}

// The 32-bit draw for element (i, j) of head bh = b*N + n. Backends that work on four
// consecutive keys may reuse the four words of one Philox call.
KATTN_INLINE std::uint32_t dropout_bits(std::uint64_t seed, std::uint64_t offset, std::uint64_t bh,
                                        std::uint64_t i, std::uint64_t j) {
  const Philox4x32 ctr{{static_cast<std::uint32_t>(j >> 2), static_cast<std::uint32_t>(i),
                        static_cast<std::uint32_t>(bh), static_cast<std::uint32_t>(offset)}};
  const Philox4x32 r =
      philox4x32_10(ctr, static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return r.v[j & 3];
}

KATTN_INLINE bool dropout_keep(std::uint64_t seed, std::uint64_t offset, std::uint64_t bh,
                               std::uint64_t i, std::uint64_t j, std::uint32_t keep_threshold) {
  return (dropout_bits(seed, offset, bh, i, j) >> 8) < keep_threshold;
}

} // namespace kattn
