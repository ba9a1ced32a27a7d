// Where sequence b of a problem lives and how long it is (docs/semantics.md): batched (T, S),
// padded (seqlens_q/k), packed varlen (cu_seqlens_q/k). One definition for cuda/sm80, cuda/sm90,
// hip/ and the portable backend, on host and device.
#pragma once

#include <cstdint>

#include "kattn_kernels/flash_params.hpp"
#include "kattn_kernels/host_device.hpp"
#include "kattn_kernels/mask_rule.hpp"

namespace kattn {

template <class I>
struct SeqSpan {
  I q_len = 0;  // valid query rows
  I k_len = 0;  // valid keys
  I q_tok0 = 0; // packed: the sequence's first query token (cu_seqlens_q[b]); else 0
  I k_tok0 = 0; // packed: its first key token; else 0
};

// A device-resident length, within [0, limit].
template <class I>
KATTN_INLINE I clamp_length(I len, I limit) {
  return len < 0 ? I(0) : (len > limit ? limit : len);
}

// Sequence b. cu_q/cu_k (packed offsets) and len_q/len_k (padded lengths) are indexable and
// test false when absent (raw pointers, or accessors with an explicit operator bool). Lengths
// read from memory are clamped to [0, T] and [0, S]: device-resident lengths cannot be checked
// on the host, and a length past the tensor must not move a read or a write outside it. (Each
// read is clamped where it is made: one clamp after both branches made ptxas spill in the sm90
// head dim 128 kernel, 120 local loads/stores, and grow it by 680 instructions.)
template <class I, class CuQ, class CuK, class LenQ, class LenK>
KATTN_INLINE SeqSpan<I> seq_span(I b, I T, I S, const CuQ& cu_q, const CuK& cu_k, const LenQ& len_q,
                                 const LenK& len_k) {
  SeqSpan<I> s;
  if (cu_q) {
    s.q_tok0 = static_cast<I>(cu_q[b]);
    s.k_tok0 = static_cast<I>(cu_k[b]);
    s.q_len = clamp_length(static_cast<I>(cu_q[b + 1]) - s.q_tok0, T);
    s.k_len = clamp_length(static_cast<I>(cu_k[b + 1]) - s.k_tok0, S);
  } else {
    s.q_len = len_q ? clamp_length(static_cast<I>(len_q[b]), T) : T;
    s.k_len = len_k ? clamp_length(static_cast<I>(len_k[b]), S) : S;
  }
  return s;
}

// The GPU kernels' form.
KATTN_INLINE SeqSpan<int> seq_span(const FlashFwdParams& p, int b) {
  return seq_span<int>(b, p.T, p.S, p.cu_seqlens_q, p.cu_seqlens_k, p.seqlens_q, p.seqlens_k);
}

// The mask rule of a sequence of these params.
KATTN_INLINE BasicMaskRule<int> mask_rule(const FlashFwdParams& p, const SeqSpan<int>& s) {
  return make_mask_rule(s.q_len, s.k_len, p.bottom_right, p.window_left, p.window_right);
}

// Rows a kernel writes for sequence b: the sequence's own (packed varlen), or all T of the batch
// entry (batched and padded: rows past q_len get output 0 and LSE -inf).
KATTN_INLINE int rows_written(const FlashFwdParams& p, const SeqSpan<int>& s) {
  return p.cu_seqlens_q != nullptr ? s.q_len : p.T;
}

// Element offset of row 0 of sequence `s` (batch entry b), head `head`, in a tensor of these
// strides: packed rows start at the sequence's first token (`tok0`), batched ones at batch b.
KATTN_INLINE std::int64_t row0_offset(bool packed, int tok0, int b, int head,
                                      std::int64_t batch_stride, std::int64_t row_stride,
                                      std::int64_t head_stride) {
  return (packed ? tok0 * row_stride : b * batch_stride) + head * head_stride;
}

// Element offsets of row 0 of sequence b, query head n, in q and out (its KV head's in k and v)
// and of its first LSE entry (one product per tensor: kernels recompute these where registers
// are short).
struct RowOffsets {
  std::int64_t q = 0, k = 0, v = 0, o = 0, lse = 0;
};
KATTN_INLINE RowOffsets row_offsets(const FlashFwdParams& p, const SeqSpan<int>& s, int b, int n) {
  const int kv = n / (p.N / p.K);
  const bool packed = p.cu_seqlens_q != nullptr;
  RowOffsets r;
  r.q = row0_offset(packed, s.q_tok0, b, n, p.q_batch_stride, p.q_row_stride, p.q_head_stride);
  r.o = row0_offset(packed, s.q_tok0, b, n, p.o_batch_stride, p.o_row_stride, p.o_head_stride);
  r.k = row0_offset(packed, s.k_tok0, b, kv, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
  r.v = row0_offset(packed, s.k_tok0, b, kv, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
  r.lse =
      row0_offset(packed, s.q_tok0, b, n, p.lse_batch_stride, p.lse_row_stride, p.lse_head_stride);
  return r;
}

} // namespace kattn
