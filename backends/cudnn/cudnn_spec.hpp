// What shapes a cuDNN attention graph (sizes, strides, dtypes, options; never pointers), and the
// string key the graph cache files it under.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kokkosattn/problem.hpp"

namespace kattn::cudnn::detail {

// Strides of a [B, T, heads, dim] tensor reordered to cuDNN's [B, heads, T, dim] dim order.
using Strides4 = std::array<std::int64_t, 4>;

struct GraphSpec {
  int device = 0;
  void* stream = nullptr; // in the key: each stream gets its own graph and workspace
  DType dtype = DType::bf16;
  std::int64_t B = 0, T = 0, S = 0, N = 0, K = 0, H = 0, Hv = 0;
  Strides4 q{}, k{}, v{}, o{}; // cuDNN order [B, heads, seq, dim]
  bool lse = false;
  Strides4 lse_stride{}; // [B, N, T, 1]
  bool bias = false;
  DType bias_dtype = DType::bf16;
  std::array<std::int64_t, 4> bias_dim{}; // [B|1, N|1, T, S]
  Strides4 bias_stride{};
  // cuDNN's diagonal band: key j visible iff j <= i + d + right_bound (inclusive) and
  // j > i + d - left_bound (EXCLUSIVE); -1 = not set. left_bound = our window_left + 1.
  std::int64_t left_bound = -1;
  std::int64_t right_bound = -1;
  bool bottom_right = false;
  float scale = 1.0f;
  // cuDNN's own ALiBi (slopes 2^(-8(n+1)/N), added as slope * (j - i)): only served causal
  // top-left with the user's slopes equal to cuDNN's (cudnn_backend.cpp checks).
  bool alibi = false;
  // Dropout with cuDNN's Philox (not our stream): probability of dropping, seed/offset come from
  // the options at run time (device scalars written before each launch).
  bool dropout = false;
  float dropout_p = 0.0f;
  // FP8 (dtype f8_e4m3 / f8_e5m2): descale/scale factors and amax outputs are graph tensors.
  bool fp8() const { return dtype == DType::f8_e4m3 || dtype == DType::f8_e5m2; }
  // Backward graphs: dO, dQ, dK, dV strides (cuDNN order); Stats (our LSE) is an input then.
  bool backward = false;
  bool deterministic = false;
  Strides4 dout{}, dq{}, dk{}, dv{};
  // dO's and dQ/dK/dV's dtypes: `dtype` except in FP8 backwards (dO in either FP8 format,
  // dQ/dK/dV in dO's or f16/bf16; docs/semantics.md).
  DType dout_dtype = DType::bf16, grad_dtype = DType::bf16;
  bool dbias = false; // the bias gradient, same dims as the bias
  Strides4 dbias_stride{};
  // Varlen: cuDNN sees [B, heads, T, dim] with T, S the longest lengths, a padding mask from
  // per-batch lengths (seq_len_q/kv, made on the device by cudnn_varlen's prep kernel), and for
  // packed tensors ragged offsets: element offsets cu_seqlens[b] * token stride, one tensor per
  // distinct (side, token stride); ragged_slot[t] is tensor t's (RaggedTensor order), -1 none.
  bool padded = false, packed = false;
  int n_ragged = 0;
  std::array<std::int64_t, 10> ragged_token_stride{};
  std::array<int, 10> ragged_side_k{};
  std::array<int, 9> ragged_slot{-1, -1, -1, -1, -1, -1, -1, -1, -1};
  bool varlen() const { return padded || packed; }

  std::string key() const;
  std::string describe() const; // short human-readable form for error messages
};

// The tensors that may be ragged, in ragged_slot order.
enum RaggedTensor { rt_q, rt_k, rt_v, rt_o, rt_stats, rt_do, rt_dq, rt_dk, rt_dv };

// Our inclusive window_left L ("j >= i + d - L") as cuDNN's exclusive left bound
// ("j > i + d - W"): W = L + 1. -1 (unbounded) stays unset.
constexpr std::int64_t cudnn_left_bound(std::int64_t window_left) {
  return window_left < 0 ? -1 : window_left + 1;
}

// Packed varlen whose longest query sequence is 1 (issue 20 item 9): cuDNN's LSE through ragged
// Stats offsets came back wrong there (H200, cuDNN 9.19). When every sequence has its one query
// (total_q == B) the Stats go without offsets, row b at b * N, the addresses the offsets gave;
// with empty sequences among them they cannot, and the backend refuses the problem.
inline bool packed_longest_query_one(const Dims& d) {
  return d.packed && d.T == 1;
}
inline bool stats_without_offsets(const ForwardProblem& p, const Dims& d) {
  return packed_longest_query_one(d) && p.q.extent[0] == d.B;
}

// Requires a validated problem the backend's host checks accepted.
GraphSpec make_spec(const ForwardProblem& p, const Dims& d, int device, void* stream);
GraphSpec make_spec(const BackwardProblem& p, const Dims& d, int device, void* stream);

} // namespace kattn::cudnn::detail
