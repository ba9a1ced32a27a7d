// How a global sequence is split over the ranks of a communicator (KokkosAttn::Distributed::sdpa).
#pragma once

#include <cstdint>

namespace KokkosAttn::Distributed {

enum class Split : std::uint8_t {
  contiguous, // rank r holds the r-th block; blocks may differ in length (even be empty)
  zigzag,     // 2P equal chunks, rank r holds chunks r and 2P-1-r: causal work balanced
};

// How the ranks share the work.
enum class Scheme : std::uint8_t {
  ring,       // each rank keeps its queries, K/V blocks travel around the ranks (any P)
  all_to_all, // Ulysses: all-to-all from sequence- to head-sharded and back; P must divide K
};

struct Layout {
  Split split = Split::contiguous;
  Scheme scheme = Scheme::ring;
};

} // namespace KokkosAttn::Distributed
