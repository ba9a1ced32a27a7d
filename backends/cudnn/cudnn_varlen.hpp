// Padded and packed (ragged) batches for the cudnn backend: small device kernels around the
// cuDNN graph, compiled at run time with NVRTC (this backend is built without nvcc) and loaded
// through the CUDA runtime's library API.
//   prep      per-batch lengths (seq_len_q/kv for cuDNN's padding mask) and, for packed
//             tensors, the ragged element offsets cu_seqlens[b] * token_stride;
//   fix_rows  after the forward: rows past q_len (padded) and rows whose visible key range is
//             empty get out = 0 and LSE = -inf (docs/semantics.md; cuDNN leaves them undefined);
//   stats     LSE copies: packed forwards write cuDNN's stats to a [total_q, N] scratch that is
//             copied into our [N, total_q]; backwards read a copy with -inf turned into +inf, so
//             that cuDNN's recomputed P = exp(s - lse) is 0 (not NaN) on rows without keys;
//   fix_grads after the backward: dq rows past q_len or without keys, dk/dv rows past k_len = 0.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kattn::cudnn::detail {

inline constexpr int max_ragged = 10; // distinct (side, token stride) pairs: <= 9 tensors

// Plain structs passed by value to the kernels: the same layout on the host and in NVRTC code.
struct PrepArgs {
  const int* cu_q = nullptr; // packed: cu_seqlens (i32 [B+1]) and their element strides
  const int* cu_k = nullptr;
  long long cu_q_stride = 1, cu_k_stride = 1;
  const int* len_q = nullptr; // padded: seqlens (nullptr = every batch T / S long)
  const int* len_k = nullptr;
  long long len_q_stride = 1, len_k_stride = 1;
  int B = 0, T = 0, S = 0;
  int* seq_q = nullptr; // out: [B]
  int* seq_k = nullptr;
  int n_off = 0; // packed: ragged offsets [B+1] = cu_side[b] * token_stride
  int* off[max_ragged] = {};
  long long token_stride[max_ragged] = {};
  int side_k[max_ragged] = {}; // 0: from cu_q, 1: from cu_k
};

// Where row (b, i) of a [B, T, heads, dim] (padded) or [total, heads, dim] (packed) tensor is.
struct RowsArgs {
  void* data = nullptr; // 2-byte elements (bf16/f16)
  long long batch_stride = 0, token_stride = 0, head_stride = 0;
  int heads = 0, dim = 0;
  float* lse = nullptr; // optional: [B, N, T] or [N, total_q] (batch stride unused if packed)
  long long lse_batch = 0, lse_head = 0, lse_token = 0;
};

struct FixArgs {
  RowsArgs rows;
  const int* seq_q = nullptr; // from prep
  const int* seq_k = nullptr;
  const int* cu = nullptr; // packed: the row side's cu_seqlens; nullptr when padded
  long long cu_stride = 1;
  int B = 0, T = 0;
  long long left = -1, right = -1; // inclusive window, -1 unbounded
  int bottom_right = 0;
  int keys_side = 0; // fix_rows: 0 (query rows, masked rows too); 1: key rows past k_len
};

// Copies an LSE between layouts: padded [B, N, T] (batch, head, token strides), packed
// [N, total] (head, token strides); inf_to_pos turns -inf into +inf (the backward's copy).
struct StatsArgs {
  const float* src = nullptr;
  long long src_batch = 0, src_head = 0, src_token = 0;
  float* dst = nullptr;
  long long dst_batch = 0, dst_head = 0, dst_token = 0;
  int B = 0, N = 0, T = 0;
  long long total = 0; // packed: total_q
  int packed = 0;
  int inf_to_pos = 0;
};

void launch_prep(const PrepArgs& a, cudaStream_t stream);
// Grid over (T rows, B batches); rows outside the sequence (or inside, when keys_side == 0 and
// the row has no visible key) are zeroed, LSE (if given) set to -inf.
void launch_fix_rows(const FixArgs& a, cudaStream_t stream);
void launch_stats(const StatsArgs& a, cudaStream_t stream);

} // namespace kattn::cudnn::detail
