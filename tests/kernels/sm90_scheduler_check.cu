// The sm90 persistent scheduler's tile mapping (cuda/sm90/scheduler.cuh), checked on the host:
// no GPU needed, so CI runs it. For every (query blocks M, batch B, heads N, grid G) in a range
// that covers odd M, grids larger and smaller than the tile count and the H200's 132 SMs, every
// tile (m, b, h) is produced exactly once over the rounds, and
// for each configuration the library instantiates (tile_policy.hpp; the fp32 kernel's
// f32_config.cuh):
//  - single-tile order (head dim 64, 192-row tiles): rounds hand out tiles with non-increasing m
//    (the blocks that see the most keys under a causal mask first);
//  - paired order (every other configuration): a CTA's odd round runs the partner
//    M - 1 - p of the block p it ran the round before, in the same (batch, head).
// Exit 0 and one summary line when all hold; otherwise the first violation and exit 1.
#include <cstdio>
#include <vector>

#include "sm90/f32_config.cuh"
#include "sm90/scheduler.cuh"
#include "sm90/tile_policy.hpp"

namespace {

using namespace kattn::cuda_kernels::sm90;

// The single-tile order at a head dim whose shipped configurations all pair.
constexpr FwdKnobs kH128SingleTiles = [] {
  FwdKnobs k = tile_policy(TileChoice::h128_short);
  k.paired = false;
  return k;
}();

template <class Cfg>
bool check(const char* name, long& cases) {
  for (int M = 1; M <= 25; ++M)
    for (int B = 1; B <= 5; ++B)
      for (int N = 1; N <= 8; ++N)
        for (int G : {1, 2, 3, 7, 64, 132}) {
          FwdArgs a{};
          a.p.B = B;
          a.p.N = N;
          a.num_m_blocks = M;
          a.num_tiles = M * B * N;
          std::vector<int> seen(static_cast<std::size_t>(M * B * N), 0);
          const int rounds = num_rounds<Cfg>(a, G);
          int last_m = M; // default order: non-increasing m across rounds
          for (int r = 0; r < rounds; ++r) {
            int round_min = M;
            for (int c = 0; c < G; ++c) {
              Tile t{};
              if (!tile_of<Cfg>(a, r, c, G, t))
                continue;
              if (t.m_block < 0 || t.m_block >= M || t.batch < 0 || t.batch >= B || t.head < 0 ||
                  t.head >= N) {
                std::printf("%s: M=%d B=%d N=%d G=%d round %d cta %d: tile (%d, %d, %d) out of "
                            "range\n",
                            name, M, B, N, G, r, c, t.m_block, t.batch, t.head);
                return false;
              }
              ++seen[static_cast<std::size_t>((t.batch * N + t.head) * M + t.m_block)];
              if constexpr (Cfg::kPairedTiles) {
                Tile prev{};
                if ((r & 1) == 1 && (!tile_of<Cfg>(a, r - 1, c, G, prev) || prev.batch != t.batch ||
                                     prev.head != t.head || prev.m_block != M - 1 - t.m_block)) {
                  std::printf("%s: M=%d B=%d N=%d G=%d round %d cta %d: block %d is not the "
                              "partner of the previous round's block %d\n",
                              name, M, B, N, G, r, c, t.m_block, prev.m_block);
                  return false;
                }
              } else {
                if (t.m_block > last_m) {
                  std::printf("%s: M=%d B=%d N=%d G=%d round %d: block %d after a round that "
                              "reached %d\n",
                              name, M, B, N, G, r, t.m_block, last_m);
                  return false;
                }
                round_min = t.m_block < round_min ? t.m_block : round_min;
              }
            }
            last_m = round_min;
          }
          for (std::size_t i = 0; i < seen.size(); ++i)
            if (seen[i] != 1) {
              std::printf("%s: M=%d B=%d N=%d G=%d: tile %zu produced %d times\n", name, M, B, N, G,
                          i, seen[i]);
              return false;
            }
          ++cases;
        }
  return true;
}

} // namespace

int main() {
  long cases = 0;
  const bool ok =
      check<Sm90Config<true, TileChoice::h64>>("h64", cases) &&
      check<Sm90Config<true, TileChoice::h64_short_causal>>("h64 short causal", cases) &&
      check<Sm90Config<true, TileChoice::h128_short>>("h128 short", cases) &&
      check<Sm90Config<true, TileChoice::h128_long_tail>>("h128 long", cases) &&
      check<Sm90Config<true, TileChoice::h256>>("h256", cases) &&
      check<FwdConfig<true, 128, kH128SingleTiles>>("h128 single-tile order", cases) &&
      check<F32FwdConfig<128>>("f32 h128 (64-row tiles, paired)", cases);
  if (!ok)
    return 1;
  std::printf("sm90 scheduler: %ld (M, B, N, grid) cases, every tile exactly once, order holds\n",
              cases);
  return 0;
}
