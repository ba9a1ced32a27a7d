// Persistent tile scheduler, static and deterministic. Single tiles (head dim 64's 192-row
// configuration, tile_policy.hpp): tiles are ordered with the query blocks that see the most keys
// first (causal/windowed: the bottom blocks) and heads varying fastest (CTAs running together
// share K/V in L2). Round r hands tiles [r G, (r + 1) G) to the G CTAs, in snake order (odd
// rounds reversed) so that with decreasing tile costs no CTA gets the heaviest tile of every
// round: close to longest-first.
// Paired (Cfg::kPairedTiles, the other configurations): work item k = query blocks p and
// M - 1 - p of one (batch, head), equal in cost under a causal mask, with p varying fastest, so
// CTAs running together read the same K/V (at T = 512 the single-tile order reads each K/V block
// from HBM once per query block: HBM-bound, measured). CTA c runs item k G + c in rounds 2k
// (block p, the shorter one) and 2k + 1 (block M - 1 - p, which finds the shorter one's keys in
// L2).
#pragma once

#include "fwd_config.cuh"
#include "seq_info.cuh"

namespace kattn::cuda_kernels::sm90 {

struct Tile {
  int m_block;
  int head;
  int batch;
};

// One tile's work: its sequence, and the key blocks [nb_begin, nb_end) it visits.
struct TileWork {
  Tile t;
  SeqInfo s;
  int nb_begin;
  int nb_end;
  int k_end; // the tile's key range ends here (the last block may be partial)
  bool skip; // packed: the query block lies past this sequence, nothing to do or write
  __device__ __forceinline__ int n_iter() const { return nb_end - nb_begin; }
};

// The tile of CTA `cta` in round `round` (may be >= num_tiles in the last round).
__host__ __device__ __forceinline__ int tile_index(int round, int cta, int grid) {
  return round * grid + ((round & 1) != 0 ? grid - 1 - cta : cta);
}

// Work items (paired: pairs of query blocks) and the rounds a grid of `grid` CTAs needs.
template <class Cfg>
__host__ __device__ __forceinline__ int num_work_items(int num_m_blocks, int batch, int heads) {
  return (Cfg::kPairedTiles ? (num_m_blocks + 1) / 2 : num_m_blocks) * batch * heads;
}
template <class Cfg>
__host__ __device__ __forceinline__ int num_rounds(const FwdArgs& a, int grid) {
  const int rounds = (num_work_items<Cfg>(a.num_m_blocks, a.p.B, a.p.N) + grid - 1) / grid;
  return Cfg::kPairedTiles ? 2 * rounds : rounds;
}

// The tile CTA `cta` runs in round `round`; false when it has none.
// (Host-callable so the mapping can be checked exhaustively without a GPU.)
template <class Cfg>
__host__ __device__ __forceinline__ bool tile_of(const FwdArgs& a, int round, int cta, int grid,
                                                 Tile& t) {
  const int n = a.p.N;
  if constexpr (Cfg::kPairedTiles) {
    const int pairs = (a.num_m_blocks + 1) / 2;
    const int item = (round / 2) * grid + cta;
    if (item >= pairs * a.p.B * n) {
      return false;
    }
    const int bh = item / pairs;
    const int pr = item - bh * pairs;
    t.batch = bh / n;
    t.head = bh - t.batch * n;
    t.m_block = (round & 1) == 0 ? pr : a.num_m_blocks - 1 - pr;
    return (round & 1) == 0 || t.m_block != pr; // odd M: the middle block has no partner
  } else {
    const int idx = tile_index(round, cta, grid);
    if (idx >= a.num_tiles) {
      return false;
    }
    const int rest = idx / n;
    t.head = idx - rest * n;
    const int mi = rest / a.p.B;
    t.batch = rest - mi * a.p.B;
    t.m_block = a.num_m_blocks - 1 - mi;
    return true;
  }
}

template <class Cfg>
__device__ __forceinline__ TileWork tile_work(const FwdArgs& a, const Tile& tile) {
  TileWork w;
  w.t = tile;
  w.s = seq_info(a.p, w.t.batch);
  const int m0 = w.t.m_block * Cfg::kBlockM;
  w.skip = m0 >= w.s.q_len && a.p.cu_seqlens_q != nullptr;
  // Padded blocks past q_len still zero their rows (empty key range).
  const IndexRange<int> kr = w.s.rule(a.p).keys_of_rows(m0, m0 + Cfg::kBlockM - 1);
  w.nb_begin = kr.lo / Cfg::kBlockN;
  w.k_end = kr.hi;
  w.nb_end = kr.hi > kr.lo && !w.skip ? (kr.hi + Cfg::kBlockN - 1) / Cfg::kBlockN : w.nb_begin;
  return w;
}

} // namespace kattn::cuda_kernels::sm90
