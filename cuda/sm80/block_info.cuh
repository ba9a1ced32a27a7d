// The tile scheduler and per-sequence facts of one CTA: which (query block, head, batch) it
// computes, the sequence's lengths and mask rule, and where its rows start in each tensor (all
// from the kernel contract's seq_geometry.hpp).
#pragma once

#include "kattn_kernels/seq_geometry.hpp"

namespace kattn::cuda_kernels::sm80 {

struct BlockInfo {
  int m_block = 0; // query block index
  int head = 0;    // query head n
  int batch = 0;
  SeqSpan<int> seq; // valid lengths of this sequence
  int rows_out = 0; // rows to write: q_len (packed), or T (rows >= q_len get 0/-inf)
  int diag = 0;     // key aligned with query 0
  RowOffsets off;   // element offsets of row 0 of this (batch, head) in each tensor
};

// Grid: x = query blocks (reversed: the last blocks, which see the most keys under a causal
// mask, are scheduled first), y = query heads, z = batch.
__device__ __forceinline__ BlockInfo block_info(const FlashFwdParams& p) {
  BlockInfo bi;
  bi.m_block = static_cast<int>(gridDim.x - 1 - blockIdx.x);
  bi.head = static_cast<int>(blockIdx.y);
  bi.batch = static_cast<int>(blockIdx.z);
  bi.seq = seq_span(p, bi.batch);
  // A no-op (seq_span clamped both lengths) after which ptxas schedules sm80's main loops as
  // before the kernel contract (head dim 128: 896 instructions, 906 without): head dim 64 runs
  // 2% faster, 256 1% (benchmarks/results/h200-2026-12-01-kernel-contract-ab2.md).
  bi.seq.q_len = clamp_length(bi.seq.q_len, p.T);
  bi.seq.k_len = clamp_length(bi.seq.k_len, p.S);
  bi.rows_out = rows_written(p, bi.seq);
  bi.diag = mask_rule(p, bi.seq).diag_offset;
  bi.off = row_offsets(p, bi.seq, bi.batch, bi.head);
  return bi;
}

} // namespace kattn::cuda_kernels::sm80
