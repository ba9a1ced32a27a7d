// Persistent tile scheduler. Tiles are ordered with the query blocks that see the most keys
// first (causal/windowed: the bottom blocks) and heads varying fastest (CTAs running together
// share K/V in L2). Round r hands tiles [r G, (r + 1) G) to the G CTAs, in snake order (odd
// rounds reversed) so that with decreasing tile costs no CTA gets the heaviest tile of every
// round: static, deterministic and close to longest-first.
#pragma once

#include "fwd_config.cuh"
#include "seq_mask.cuh"

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
  bool skip; // packed: the query block lies past this sequence, nothing to do or write
  __device__ __forceinline__ int n_iter() const { return nb_end - nb_begin; }
};

// The tile of CTA `cta` in round `round` (may be >= num_tiles in the last round).
__device__ __forceinline__ int tile_index(int round, int cta, int grid) {
  return round * grid + ((round & 1) != 0 ? grid - 1 - cta : cta);
}

template <class Cfg>
__device__ __forceinline__ TileWork tile_work(const FwdArgs& a, int idx) {
  TileWork w;
  const int n = a.p.N;
  const int rest = idx / n;
  w.t.head = idx - rest * n;
  const int mi = rest / a.p.B;
  w.t.batch = rest - mi * a.p.B;
  w.t.m_block = a.num_m_blocks - 1 - mi;
  w.s = seq_info(a.p, w.t.batch);
  const int m0 = w.t.m_block * Cfg::kBlockM;
  w.skip = m0 >= w.s.q_len && a.p.cu_seqlens_q != nullptr;
  // Padded blocks past q_len still zero their rows (empty key range).
  const KeyRange kr = key_range(a.p, w.s, m0, m0 + Cfg::kBlockM - 1);
  w.nb_begin = kr.lo / Cfg::kBlockN;
  w.nb_end = kr.hi > kr.lo && m0 < w.s.q_len && !w.skip ? (kr.hi + Cfg::kBlockN - 1) / Cfg::kBlockN
                                                        : w.nb_begin;
  return w;
}

} // namespace kattn::cuda_kernels::sm90
