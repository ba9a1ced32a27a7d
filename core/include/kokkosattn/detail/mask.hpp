// The masking and score rules of docs/semantics.md as small inline functions, shared by every
// backend (host and device) so that all of them agree on one definition.
#pragma once

#include <cstdint>

#include "kokkosattn/config.hpp"

namespace kattn {

// Everything the score rule needs for one (batch, head), resolved by the caller.
struct MaskRule {
  std::int64_t q_len = 0;        // valid query rows of this batch
  std::int64_t k_len = 0;        // valid keys of this batch
  std::int64_t diag_offset = 0;  // key aligned with query 0: 0 (top_left) or k_len - q_len
  std::int64_t window_left = -1; // inclusive, -1 = unbounded
  std::int64_t window_right = -1;

  // Is key j visible from query i, before any boolean mask tensor is applied?
  KATTN_INLINE bool visible(std::int64_t i, std::int64_t j) const {
    if (i >= q_len || j >= k_len)
      return false;
    const std::int64_t d = i + diag_offset;
    if (window_left >= 0 && j < d - window_left)
      return false;
    if (window_right >= 0 && j > d + window_right)
      return false;
    return true;
  }

  // ALiBi's additive term: -slope * distance from the aligned diagonal.
  KATTN_INLINE double alibi(double slope, std::int64_t i, std::int64_t j) const {
    const std::int64_t dist = i + diag_offset - j;
    return -slope * static_cast<double>(dist < 0 ? -dist : dist);
  }
};

KATTN_INLINE MaskRule make_mask_rule(std::int64_t q_len, std::int64_t k_len, bool bottom_right,
                                     std::int64_t window_left, std::int64_t window_right) {
  MaskRule r;
  r.q_len = q_len;
  r.k_len = k_len;
  r.diag_offset = bottom_right ? k_len - q_len : 0;
  r.window_left = window_left;
  r.window_right = window_right;
  return r;
}

} // namespace kattn
