// Where each rank's tokens sit in the global sequence, and which pairs of (query segment, key
// segment) a ring step computes and with which mask: plain C++ (no MPI, no Kokkos), so the
// geometry is tested without ranks (tests/mpi/test_ring_geometry.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "KokkosAttn_DistributedLayout.hpp"

namespace kattn::distributed {

// A run of a rank's local tokens [local, local + length) at global positions [global, ..).
struct Segment {
  std::int64_t local = 0, global = 0, length = 0;
};

// Every rank's segments for the local lengths `lengths` (one per rank, as all-gathered).
// Contiguous: rank r holds one block after ranks 0..r-1. Zigzag: the sequence in 2P chunks of
// equal length c, rank r holding chunks r and 2P-1-r (each rank 2c tokens: InvalidArgument
// otherwise, naming the lengths).
std::vector<std::vector<Segment>> rank_segments(KokkosAttn::Distributed::Split split,
                                                const std::vector<std::int64_t>& lengths);

// How a query segment sees a key segment under the global mask (self-attention, T == S).
enum class Visibility { none, full, causal_diagonal };
Visibility visibility(const Segment& q, const Segment& k, bool causal);

} // namespace kattn::distributed
