// What one CTA of the sm90 backward computes: its 128 keys of one KV head of one sequence, and
// the steps (query head of the group, query block) that see them; from the kernel contract's
// sequence geometry and mask rule. The producer and the consumers derive it alike.
#pragma once

#include "kattn_kernels/bwd_geometry.hpp"
#include "kattn_kernels/seq_geometry.hpp"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
struct BwdWork {
  int b = 0, kv = 0;
  int n0 = 0;       // first key of the CTA
  int key_rows = 0; // dk/dv rows written for this sequence
  SeqSpan<int> seq;
  BasicMaskRule<int> rule;
  int q_row0 = 0, k_row0 = 0, coord_b = 0; // TMA row and batch coordinates of row 0
  int group = 1;                           // query heads per KV head
  int m_begin = 0, m_count = 0;            // query blocks that see a key of the CTA
  int steps = 0;                           // group * m_count
  int rotation = 0;                        // the query block a CTA starts its walk with

  __device__ __forceinline__ explicit BwdWork(const FlashFwdParams& f)
      : b(static_cast<int>(blockIdx.z)), kv(static_cast<int>(blockIdx.y)),
        n0(static_cast<int>(blockIdx.x) * Cfg::kBlockN), seq(seq_span(f, b)),
        rule(mask_rule(f, seq)) {
    key_rows = key_rows_written(f, seq);
    const bool packed = f.cu_seqlens_q != nullptr;
    q_row0 = seq.q_tok0;
    k_row0 = seq.k_tok0;
    coord_b = packed ? 0 : b;
    group = f.N / f.K;
    const int last_key = (n0 + Cfg::kBlockN < seq.k_len ? n0 + Cfg::kBlockN : seq.k_len) - 1;
    const IndexRange<int> rows = rule.rows_of_keys(n0, last_key);
    m_begin = rows.lo / Cfg::kBlockM;
    m_count = rows.hi > rows.lo ? (rows.hi + Cfg::kBlockM - 1) / Cfg::kBlockM - m_begin : 0;
    steps = group * m_count;
    // Neighbouring key blocks start their walks one query block apart, so that CTAs running
    // side by side add into different dq_accum rows instead of contending for the same ones.
    rotation = m_count > 0 ? static_cast<int>(blockIdx.x) % m_count : 0;
  }
  // Padded or packed rows past a length may hold anything (caller padding, another sequence):
  // a tile that reaches past q_len (k_len) has those rows zeroed in shared memory.
  __device__ __forceinline__ bool q_tail(const FlashFwdParams& f, int m0_) const {
    return (f.seqlens_q != nullptr || f.cu_seqlens_q != nullptr) && m0_ + Cfg::kBlockM > seq.q_len;
  }
  __device__ __forceinline__ bool k_tail(const FlashFwdParams& f) const {
    return (f.seqlens_k != nullptr || f.cu_seqlens_k != nullptr) && n0 + Cfg::kBlockN > seq.k_len;
  }
};

// Step it of a CTA's walk: query head kv * group + it / m_count, query block m_begin +
// (it % m_count + rotation) % m_count; advanced without divisions (computed per step, they
// stalled the consumers: H200 ncu, 2026-12-03). The producer and the consumers walk alike.
template <class Cfg>
struct BwdStep {
  int it = 0;
  int head = 0;
  int m_rel = 0; // query block m_begin + m_rel
  int m0 = 0;
  __device__ __forceinline__ static BwdStep first(const BwdWork<Cfg>& w) {
    BwdStep s;
    s.head = w.kv * w.group;
    s.m_rel = w.rotation;
    s.m0 = (w.m_begin + s.m_rel) * Cfg::kBlockM;
    return s;
  }
  __device__ __forceinline__ BwdStep next(const BwdWork<Cfg>& w) const {
    BwdStep s = *this;
    ++s.it;
    s.m_rel = m_rel + 1 == w.m_count ? 0 : m_rel + 1;
    if (s.m_rel == w.rotation) { // the walk came round: the group's next query head
      ++s.head;
    }
    s.m0 = (w.m_begin + s.m_rel) * Cfg::kBlockM;
    return s;
  }
};

} // namespace kattn::cuda_kernels::sm90
