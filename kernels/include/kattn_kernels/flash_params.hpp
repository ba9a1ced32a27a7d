// The one parameter block of our GPU flash-attention kernels (forward): cuda/sm80, cuda/sm90 and
// hip/ all take it, and backends/gpu_common/flash_params.cpp is the one function that fills it.
// Plain C++: no CUDA, HIP, Kokkos or kokkos-attention core types, so any host code can fill it.
//
// Layout (docs/semantics.md): batched q [B, T, N, H], k [B, S, K, H], v [B, S, K, Hv],
// out [B, T, N, Hv], lse f32 [B, N, T]; packed varlen (cu_seqlens_q/k given): q [Tq_total, N, H],
// k/v [Tk_total, K, H|Hv], out [Tq_total, N, Hv], lse [N, Tq_total] (the batch strides are then
// 0 and the row index is the token index cu_seqlens[b] + i: seq_geometry.hpp relies on both).
// Strides are in elements. The head-dim stride is 1 for out, and for q, k and v unless they are
// sequence-major (row stride 1, the layout of a B = 1 Kokkos LayoutLeft View), which only the
// sm90 family serves (unit_dim_stride_limit in params_limits.hpp refuses it for the others).
#pragma once

#include <cstdint>

namespace kattn {

// bf16/f16: every family; f32 and f64: sm80's forward only (3xTF32 or TF32, f64 MMAs); the
// families' checks refuse what they do not serve (params_limits.hpp's half_dtype_limit).
enum class ElemType : std::uint8_t { f16, bf16, f32, f64 };

struct FlashFwdParams {
  ElemType dtype = ElemType::bf16; // q, k, v and out share it

  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* out = nullptr;
  float* lse = nullptr; // optional (nullptr = not wanted)

  // Element strides: [batch, row (token), head]; batch 0 when packed. out's head-dim stride is 1.
  std::int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  std::int64_t k_batch_stride = 0, k_row_stride = 0, k_head_stride = 0;
  std::int64_t v_batch_stride = 0, v_row_stride = 0, v_head_stride = 0;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  // Head-dim strides of q, k, v: 1, or (sequence-major, row stride 1) the stride between rows of
  // the head dim.
  std::int64_t q_dim_stride = 1, k_dim_stride = 1, v_dim_stride = 1;
  // lse element strides: [batch, head, row]; packed: batch stride 0, row = token index.
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 1;

  int B = 0;  // batch (sequences)
  int T = 0;  // query length (packed: the longest sequence, extras.max_seqlen_q)
  int S = 0;  // key length (packed: the longest sequence, extras.max_seqlen_k)
  int N = 0;  // query heads
  int K = 0;  // key/value heads; N % K == 0, query head n reads KV head n / (N / K)
  int H = 0;  // q/k head dim
  int Hv = 0; // v/out head dim

  // Packed varlen: device i32 [B + 1] token offsets (both or neither), and the packed tensors'
  // token extents (Tq_total, Tk_total: the first dimension of q and k), which launchers need on
  // the host (e.g. for TMA descriptors) without reading cu_seqlens back from the device.
  const int* cu_seqlens_q = nullptr;
  const int* cu_seqlens_k = nullptr;
  std::int64_t total_q = 0;
  std::int64_t total_k = 0;
  // Padded batches: device i32 [B] valid lengths (each optional; rows i >= q_len give out 0 and
  // lse -inf, keys j >= k_len are masked).
  const int* seqlens_q = nullptr;
  const int* seqlens_k = nullptr;

  float scale = 0.f;   // resolved softmax scale (1/sqrt(H) by default)
  float softcap = 0.f; // > 0: s = softcap * tanh(s / softcap), applied before masking
  // The same two in double, for the f64 kernel (a float scale alone costs ~3e-8 relative error
  // in every score, a million f64 ulps).
  double scale_f64 = 0.0;
  double softcap_f64 = 0.0;

  // Resolved inclusive window around the aligned diagonal (causal = right 0), -1 unbounded.
  // Diagonal: query i is aligned with key i (top-left) or i + k_len - q_len (bottom-right),
  // with q_len/k_len the per-batch actual lengths. make_flash_params guarantees that every
  // index expression of mask_rule.hpp (|i + diag +- window| + 1 <= 2 (T + S) + 1) fits in int.
  int window_left = -1;
  int window_right = -1;
  bool bottom_right = false;

  // Paged KV cache (extras.page_table, docs/semantics.md paged_kv; only the decode kernel reads
  // it, params_limits.hpp's paged_limit keeps the other kernels off): k and v are then
  // [num_pages, page_size, K, H|Hv] with k/v_batch_stride the page stride, and key j of
  // sequence b lives in page page_table[b * page_table_stride + j / page_size], row
  // j % page_size. seqlens_k is given and S = max_pages_per_seq * page_size. An id outside
  // [0, num_pages) is never read: its keys are NaN, its values 0 (a device-resident table
  // cannot be checked on the host).
  const int* page_table = nullptr;
  std::int64_t page_table_stride = 0;
  int page_size = 0;
  int num_pages = 0;

  // f32 only: the products may round their operands to TF32 (one TF32 MMA instead of the 3xTF32
  // split; options.allow_tf32).
  bool tf32 = false;
};

} // namespace kattn
