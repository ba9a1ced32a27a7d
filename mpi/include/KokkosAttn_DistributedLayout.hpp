// How a global sequence is split over the ranks of a communicator (KokkosAttn::Distributed::sdpa).
#pragma once

#include <cstdint>

namespace KokkosAttn::Distributed {

enum class Split : std::uint8_t {
  contiguous, // rank r holds the r-th block; blocks may differ in length (even be empty)
  zigzag,     // 2P equal chunks, rank r holds chunks r and 2P-1-r: causal work balanced
};

struct Layout {
  Split split = Split::contiguous;
};

} // namespace KokkosAttn::Distributed
