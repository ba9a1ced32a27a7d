// Internal to the reference backend: where a sequence's tokens live, and one row of
// probabilities recomputed from scratch (scores, softcap, bias, ALiBi, masks, sinks, softmax,
// dropout).
#pragma once

#include <cstdint>
#include <vector>

#include "kattn_kernels/mask_rule.hpp"
#include "kokkosattn/detail/host_access.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::reference::detail {

// Sequence b of the batch: its first token in the token dimension (packed varlen) and its
// valid lengths. For batched layouts q_start = k_start = 0 and b indexes dimension 0.
struct Sequence {
  std::int64_t b = 0;
  std::int64_t q_start = 0, q_len = 0;
  std::int64_t k_start = 0, k_len = 0;
};

Sequence sequence(const ForwardProblem& p, const Dims& d, std::int64_t b);

// Element offset of token `pos` of a sequence, head `head`, feature `f` in a q/k/v/out-like
// tensor ([B, L, heads, dim] batched, [total, heads, dim] packed).
inline std::int64_t token_offset(const Tensor& t, bool packed, std::int64_t b, std::int64_t start,
                                 std::int64_t pos, std::int64_t head, std::int64_t f) {
  return packed ? element_offset(t, start + pos, head, f) : element_offset(t, b, pos, head, f);
}

// Element offset of key j of sequence s, KV head kv, feature f in k or v: through the page table
// when the cache is paged (rule paged_kv), else as token_offset.
inline std::int64_t key_offset(const ForwardProblem& p, const Dims& d, const Tensor& t,
                               const Sequence& s, std::int64_t j, std::int64_t kv, std::int64_t f) {
  if (!d.paged)
    return token_offset(t, d.packed, s.b, s.k_start, j, kv, f);
  const Tensor& pt = p.extras.page_table;
  const std::int64_t page = load_int(pt, element_offset(pt, s.b, j / d.page_size));
  return element_offset(t, page, j % d.page_size, kv, f);
}

// Offset of (b, n, i, j) in a [B|1, N|1, T, S] bias/mask/dbias tensor: broadcast dims read 0.
inline std::int64_t broadcast_offset(const Tensor& t, std::int64_t b, std::int64_t n,
                                     std::int64_t i, std::int64_t j) {
  return element_offset(t, t.extent[0] == 1 ? 0 : b, t.extent[1] == 1 ? 0 : n, i, j);
}

// The same tensor with row-major strides: element_offset on it is the index into a dense
// double buffer holding the tensor in logical order.
Tensor logical_layout(const Tensor& t);
// Writes a dense logical-order buffer into t through its strides (every element).
void store_all(const Tensor& t, const std::vector<double>& dense);
// Sets every element of t to v.
void fill_all(const Tensor& t, double v);

// One query row (b, n, i): for each key j < k_len of the sequence.
struct Row {
  bool empty = true;               // no visible key with a finite score (and none NaN or +inf)
  double lse = 0.0;                // natural-log sum-exp of the undropped scores (and the sink)
  double sink_prob = 0.0;          // the sink's share of the denominator, exp(sink - lse)
  std::vector<double> prob;        // softmax probability P_ij (0 where masked)
  std::vector<double> keep;        // dropout multiplier Z_ij: 0 or 1/(1-p); 1 without dropout
  std::vector<double> dcap;        // d(capped score)/d(raw score): 1 - tanh^2, or 1 without softcap
  std::vector<unsigned char> seen; // 1 where the row sees key j (window rule and boolean mask)
};

void compute_row(const ForwardProblem& p, const Dims& d, const Sequence& s, std::int64_t n,
                 std::int64_t i, Row& row);

} // namespace kattn::reference::detail
