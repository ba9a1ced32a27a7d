// Where the backward's extra tensors and workspaces put sequence b (kattn_kernels/
// flash_bwd_params.hpp): dout and dq rows beside q's, dk and dv rows beside k's, and the fp32
// accumulator rows of D and dQ. One definition for every backward kernel.
#pragma once

#include <cstdint>

#include "kattn_kernels/flash_bwd_params.hpp"
#include "kattn_kernels/seq_geometry.hpp"

namespace kattn {

// Accumulator row of query 0 of sequence b: b * T (batched) or its first token (packed).
KATTN_INLINE std::int64_t acc_row0(const FlashBwdParams& p, const SeqSpan<int>& s, int b) {
  return p.fwd.cu_seqlens_q != nullptr ? std::int64_t{s.q_tok0} : std::int64_t{b} * p.fwd.T;
}

struct BwdRowOffsets {
  std::int64_t dout = 0, dq = 0; // query head n's row 0
  std::int64_t dk = 0, dv = 0;   // KV head kv's row 0
};
KATTN_INLINE BwdRowOffsets bwd_row_offsets(const FlashBwdParams& p, const SeqSpan<int>& s, int b,
                                           int n, int kv) {
  const bool packed = p.fwd.cu_seqlens_q != nullptr;
  BwdRowOffsets r;
  r.dout =
      row0_offset(packed, s.q_tok0, b, n, p.do_batch_stride, p.do_row_stride, p.do_head_stride);
  r.dq = row0_offset(packed, s.q_tok0, b, n, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride);
  r.dk = row0_offset(packed, s.k_tok0, b, kv, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride);
  r.dv = row0_offset(packed, s.k_tok0, b, kv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride);
  return r;
}

// Rows of dk and dv a kernel writes for sequence b: its own keys (packed), or all S.
KATTN_INLINE int key_rows_written(const FlashFwdParams& p, const SeqSpan<int>& s) {
  return p.cu_seqlens_k != nullptr ? s.k_len : p.S;
}

} // namespace kattn
