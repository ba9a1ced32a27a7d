#include "ring_geometry.hpp"

#include "kokkosattn/errors.hpp"

namespace kattn::distributed {

using KokkosAttn::Distributed::Split;

std::vector<std::vector<Segment>> rank_segments(Split split,
                                                const std::vector<std::int64_t>& lengths) {
  const auto P = static_cast<std::int64_t>(lengths.size());
  std::vector<std::vector<Segment>> out(lengths.size());
  if (split == Split::contiguous) {
    std::int64_t at = 0;
    for (std::int64_t r = 0; r < P; ++r) {
      const std::int64_t n = lengths[std::size_t(r)];
      if (n > 0)
        out[std::size_t(r)].push_back({0, at, n});
      at += n;
    }
    return out;
  }
  // Zigzag: chunk r and chunk 2P - 1 - r, so that under a causal mask every rank has as much
  // work as every other (ring-flash-attention's balance).
  const std::int64_t local = lengths.empty() ? 0 : lengths[0];
  for (std::int64_t r = 0; r < P; ++r)
    if (lengths[std::size_t(r)] != local || local % 2 != 0) {
      std::string all;
      for (std::int64_t n : lengths)
        all += (all.empty() ? "" : ", ") + std::to_string(n);
      throw InvalidArgument("layout: zigzag expects every rank to hold the same even number of "
                            "tokens (two chunks of T / (2 ranks)), got local lengths [" +
                            all + "]");
    }
  const std::int64_t c = local / 2;
  for (std::int64_t r = 0; r < P && c > 0; ++r) {
    out[std::size_t(r)].push_back({0, r * c, c});
    out[std::size_t(r)].push_back({c, (2 * P - 1 - r) * c, c});
  }
  return out;
}

Visibility visibility(const Segment& q, const Segment& k, bool causal) {
  if (!causal)
    return Visibility::full;
  if (k.global + k.length - 1 <= q.global) // every key at or before the first query
    return Visibility::full;
  if (k.global > q.global + q.length - 1) // every key after the last query
    return Visibility::none;
  // Segments of one layout either coincide or are disjoint: an overlap is the same segment.
  return Visibility::causal_diagonal;
}

} // namespace kattn::distributed
