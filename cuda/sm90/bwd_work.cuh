// What one CTA of the sm90 backward computes: its 128 keys of one KV head of one sequence, and
// the steps (query head of the group, query block) that see them; from the kernel contract's
// sequence geometry and mask rule. The producer and the consumers derive it alike.
#pragma once

#include "bwd_config.cuh"
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

  // Key block n_block of KV head kv_ of sequence b_: the CTA's block coordinates, or in
  // deterministic mode those of its block ticket (bwd_kernel.cuh).
  __device__ __forceinline__ BwdWork(const FlashFwdParams& f, int n_block, int kv_, int b_)
      : b(b_), kv(kv_), n0(n_block * Cfg::kBlockN), seq(seq_span(f, b)), rule(mask_rule(f, seq)) {
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
    // side by side add into different dq_accum rows instead of contending for the same ones. In
    // deterministic mode every walk starts at its first query block: the order of the additions
    // (dq_order_ticket) then matches the order in which the key blocks reach a tile.
    if constexpr (!Cfg::kDet)
      rotation = m_count > 0 ? n_block % m_count : 0;
  }
  __device__ __forceinline__ explicit BwdWork(const FlashFwdParams& f)
      : BwdWork(f, static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y),
                static_cast<int>(blockIdx.z)) {}
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

// The CTA's work: its block coordinates, or in deterministic mode its key block drawn from its
// (sequence, KV head)'s counter (draw_block_ticket), so that the key blocks a CTA waits for
// (dq_order_ticket) were drawn by CTAs that already run: the order holds whatever order the
// hardware starts blocks in. Under a right-bounded window the key blocks are drawn last first.
// Each warpgroup reads the drawn block from shared memory after its register reallocation (kept
// in a register across it, values derived from a drawn ticket were spilled); the other
// coordinates stay the block's, which ptxas recomputes instead of keeping.
template <class Cfg>
__device__ __forceinline__ void draw_block_ticket(const FlashBwdParams& p, std::uint32_t smem,
                                                  int tid) {
  if (tid == 0) {
    const std::int64_t counter = dq_order_tiles(p.fwd) + blockIdx.z * gridDim.y + blockIdx.y;
    const int t = atomicAdd(p.dq_order + counter, 1);
    asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(BwdRing<Cfg>{smem + Cfg::kOffBar}.ticket()),
                 "r"(t)
                 : "memory");
  }
  __syncthreads();
}
template <class Cfg>
__device__ __forceinline__ BwdWork<Cfg> bwd_work(const FlashBwdParams& p, std::uint32_t smem) {
  if constexpr (!Cfg::kDet) {
    (void)smem;
    return BwdWork<Cfg>(p.fwd);
  } else {
    int t;
    asm volatile("ld.shared.s32 %0, [%1];\n"
                 : "=r"(t)
                 : "r"(BwdRing<Cfg>{smem + Cfg::kOffBar}.ticket())
                 : "memory");
    const int blocks = static_cast<int>(gridDim.x);
    return BwdWork<Cfg>(p.fwd, dq_order_descending(p.fwd.window_right) ? blocks - 1 - t : t,
                        static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z));
  }
}

} // namespace kattn::cuda_kernels::sm90
