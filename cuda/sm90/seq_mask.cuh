// Per-sequence lengths/offsets (batched, padded, packed) and the window mask of one tile.
#pragma once

#include "kattn_cuda/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

struct SeqInfo {
  int q_row0 = 0;  // TMA row coordinate of query 0 (packed: token offset)
  int k_row0 = 0;  // same for key 0
  int coord_b = 0; // TMA batch coordinate (0 when packed)
  int q_len = 0;
  int k_len = 0;
  int diag = 0; // key aligned with query 0 (bottom-right: k_len - q_len)
};

__device__ __forceinline__ SeqInfo seq_info(const FlashFwdParams& p, int b) {
  SeqInfo s;
  if (p.cu_seqlens_q != nullptr) {
    s.q_row0 = p.cu_seqlens_q[b];
    s.k_row0 = p.cu_seqlens_k[b];
    s.q_len = p.cu_seqlens_q[b + 1] - s.q_row0;
    s.k_len = p.cu_seqlens_k[b + 1] - s.k_row0;
  } else {
    s.coord_b = b;
    s.q_len = p.seqlens_q != nullptr ? p.seqlens_q[b] : p.T;
    s.k_len = p.seqlens_k != nullptr ? p.seqlens_k[b] : p.S;
  }
  s.diag = p.bottom_right ? s.k_len - s.q_len : 0;
  return s;
}

// Key range [lo, hi) that query rows [m_lo, m_hi] may see.
struct KeyRange {
  int lo;
  int hi;
};
__device__ __forceinline__ KeyRange key_range(const FlashFwdParams& p, const SeqInfo& s, int m_lo,
                                              int m_hi) {
  int lo = 0;
  int hi = s.k_len;
  if (p.window_left >= 0) {
    lo = max(0, m_lo + s.diag - p.window_left);
  }
  if (p.window_right >= 0) {
    hi = min(hi, m_hi + s.diag + p.window_right + 1);
  }
  return {lo, max(lo, hi)};
}

// Whether any key of [n0, n0 + bn) is masked for some row of [m_lo, m_hi].
__device__ __forceinline__ bool block_needs_mask(const FlashFwdParams& p, const SeqInfo& s, int n0,
                                                 int bn, int m_lo, int m_hi) {
  if (n0 + bn > s.k_len) {
    return true;
  }
  if (p.window_right >= 0 && n0 + bn - 1 > m_lo + s.diag + p.window_right) {
    return true;
  }
  return p.window_left >= 0 && n0 < m_hi + s.diag - p.window_left;
}

// Visible keys of query row i: [lo, hi).
__device__ __forceinline__ KeyRange row_keys(const FlashFwdParams& p, const SeqInfo& s, int i) {
  int lo = 0;
  int hi = s.k_len;
  if (p.window_left >= 0) {
    lo = i + s.diag - p.window_left;
  }
  if (p.window_right >= 0) {
    hi = min(hi, i + s.diag + p.window_right + 1);
  }
  return {lo, hi};
}

} // namespace kattn::cuda_kernels::sm90
