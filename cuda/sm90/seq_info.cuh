// Where one sequence's rows are for the TMA (batched, padded, packed), with its lengths and mask
// rule from the kernel contract (kattn_kernels/seq_geometry.hpp).
#pragma once

#include "kattn_kernels/seq_geometry.hpp"

namespace kattn::cuda_kernels::sm90 {

struct SeqInfo {
  int q_row0 = 0;  // TMA row coordinate of query 0 (packed: token offset)
  int k_row0 = 0;  // same for key 0
  int coord_b = 0; // TMA batch coordinate (0 when packed)
  int q_len = 0;
  int k_len = 0;
  int diag = 0; // key aligned with query 0

  // The keys each row sees, built where it is used with the windows read from the params, as
  // the kernel read them before the contract (constant-bank operands, not tile registers).
  __device__ __forceinline__ BasicMaskRule<int> rule(const FlashFwdParams& p) const {
    return {q_len, k_len, diag, p.window_left, p.window_right};
  }
};

__device__ __forceinline__ SeqInfo seq_info(const FlashFwdParams& p, int b) {
  const SeqSpan<int> span = seq_span(p, b);
  SeqInfo s;
  s.q_row0 = span.q_tok0;
  s.k_row0 = span.k_tok0;
  s.coord_b = p.cu_seqlens_q != nullptr ? 0 : b;
  s.q_len = span.q_len;
  s.k_len = span.k_len;
  s.diag = mask_rule(p, span).diag_offset;
  return s;
}

} // namespace kattn::cuda_kernels::sm90
