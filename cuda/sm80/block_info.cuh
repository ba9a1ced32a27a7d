// The tile scheduler and per-sequence facts of one CTA: which (query block, head, batch) it
// computes, the sequence's actual lengths, and where its rows start in each tensor.
#pragma once

#include <cstdint>

#include "kattn_cuda/flash_params.hpp"

namespace kattn::cuda_kernels::sm80 {

struct BlockInfo {
  int m_block = 0; // query block index
  int head = 0;    // query head n
  int kv_head = 0; // n / (N / K)
  int batch = 0;
  int q_len = 0;    // valid query rows of this sequence
  int k_len = 0;    // valid keys of this sequence
  int rows_out = 0; // rows to write: q_len, or T for padded batches (rows >= q_len get 0/-inf)
  int diag = 0;     // key aligned with query 0
  // Element offsets of row 0 of this (batch, head) in q, k, v, out, and of lse's row 0.
  std::int64_t q_off = 0, k_off = 0, v_off = 0, o_off = 0, lse_off = 0;
};

// Grid: x = query blocks (reversed: the last blocks, which see the most keys under a causal
// mask, are scheduled first), y = query heads, z = batch.
__device__ __forceinline__ BlockInfo block_info(const FlashFwdParams& p) {
  BlockInfo bi;
  bi.m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  bi.head = static_cast<int>(blockIdx.y);
  bi.batch = static_cast<int>(blockIdx.z);
  bi.kv_head = bi.head / (p.N / p.K);
  const bool packed = p.cu_seqlens_q != nullptr;
  const int b = bi.batch;
  std::int64_t q_tok = 0, k_tok = 0; // first token of this sequence (packed)
  if (packed) {
    q_tok = p.cu_seqlens_q[b];
    k_tok = p.cu_seqlens_k[b];
    bi.q_len = p.cu_seqlens_q[b + 1] - p.cu_seqlens_q[b];
    bi.k_len = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
  } else {
    bi.q_len = p.seqlens_q ? p.seqlens_q[b] : p.T;
    bi.k_len = p.seqlens_k ? p.seqlens_k[b] : p.S;
  }
  if (packed && p.seqlens_k) // flash-attn's "seqused_k": fewer keys than the packed slot holds
    bi.k_len = p.seqlens_k[b];
  bi.q_len = min(max(bi.q_len, 0), p.T);
  bi.k_len = min(max(bi.k_len, 0), p.S);
  bi.rows_out = packed ? bi.q_len : p.T;
  bi.diag = p.bottom_right ? bi.k_len - bi.q_len : 0;
  const std::int64_t qb = packed ? q_tok * p.q_row_stride : b * p.q_batch_stride;
  const std::int64_t kb = packed ? k_tok * p.k_row_stride : b * p.k_batch_stride;
  const std::int64_t vb = packed ? k_tok * p.v_row_stride : b * p.v_batch_stride;
  const std::int64_t ob = packed ? q_tok * p.o_row_stride : b * p.o_batch_stride;
  bi.q_off = qb + bi.head * p.q_head_stride;
  bi.k_off = kb + bi.kv_head * p.k_head_stride;
  bi.v_off = vb + bi.kv_head * p.v_head_stride;
  bi.o_off = ob + bi.head * p.o_head_stride;
  bi.lse_off = packed ? bi.head * p.lse_head_stride + q_tok * p.lse_row_stride
                      : b * p.lse_batch_stride + bi.head * p.lse_head_stride;
  return bi;
}

} // namespace kattn::cuda_kernels::sm80
