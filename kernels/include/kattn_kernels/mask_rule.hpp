// The score mask of docs/semantics.md, one definition for every backend on host and device:
// per-sequence lengths, and an inclusive window (left, right) around the aligned diagonal
// (causal: right 0). Kernels derive their key-block ranges and their "does this tile need
// per-element masking" tests from it instead of re-deriving them. Templated on the index type:
// the GPU kernels use int (make_flash_params bounds every expression), host code int64.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kattn_kernels/host_device.hpp"

namespace kattn {

// Half-open [lo, hi); empty when hi <= lo, and then lo is not a position (it may lie past the
// sequence): walk a range only when hi > lo.
template <class I>
struct IndexRange {
  I lo;
  I hi;
  // The first tile start (a multiple of w) of a walk over the range in tiles of w: hi when the
  // range is empty, so that `for (t = r.first_tile(w); t < r.hi; t += w)` visits no tile. (A
  // walk from (lo / w) * w visited one tile of an empty range, past the keys when lo was:
  // portable read K/V rows out of range, found by the fuzzer.)
  KATTN_INLINE I first_tile(I w) const { return hi > lo ? lo / w * w : hi; }
};

template <class I>
struct BasicMaskRule {
  I q_len = 0;        // valid query rows of this sequence
  I k_len = 0;        // valid keys of this sequence
  I diag_offset = 0;  // key aligned with query 0: 0 (top-left) or k_len - q_len (bottom-right)
  I window_left = -1; // inclusive, -1 = unbounded
  I window_right = -1;

  // Is key j in the window of query row i? (The row itself is not tested: for kernels that
  // handle rows past q_len on their own.)
  KATTN_INLINE bool key_visible(I i, I j) const {
    const I d = i + diag_offset;
    return j < k_len && (window_left < 0 || j >= d - window_left) &&
           (window_right < 0 || j <= d + window_right);
  }

  // Is key j visible from query i, before any boolean mask tensor is applied?
  KATTN_INLINE bool visible(I i, I j) const { return i < q_len && key_visible(i, j); }

  // The keys row i may see, [lo, hi): lo may be negative (for per-element tests, not clamped).
  KATTN_INLINE IndexRange<I> row_keys(I i) const {
    const I d = i + diag_offset;
    I hi = k_len;
    if (window_right >= 0)
      hi = d + window_right + 1 < hi ? d + window_right + 1 : hi;
    return {window_left >= 0 ? d - window_left : I(0), hi};
  }

  // The keys any valid row of [first, last] may see: within [0, k_len] when any; lo == hi when
  // none (no valid row, or the window misses every key; see IndexRange). Each row's keys are one
  // interval moving right with the row, so the union over the rows is one interval too.
  KATTN_INLINE IndexRange<I> keys_of_rows(I first, I last) const {
    if (last >= q_len)
      last = q_len - 1;
    I lo = 0, hi = first <= last ? k_len : 0;
    if (window_left >= 0 && first + diag_offset - window_left > lo)
      lo = first + diag_offset - window_left;
    if (window_right >= 0 && last + diag_offset + window_right + 1 < hi)
      hi = last + diag_offset + window_right + 1;
    return {lo, hi < lo ? lo : hi};
  }

  // The valid rows that see any key of [first, last]: within [0, q_len] when any; lo == hi when
  // none.
  KATTN_INLINE IndexRange<I> rows_of_keys(I first, I last) const {
    if (last >= k_len)
      last = k_len - 1;
    I lo = 0, hi = first <= last ? q_len : 0;
    if (window_right >= 0 && first - diag_offset - window_right > lo)
      lo = first - diag_offset - window_right;
    if (window_left >= 0 && last - diag_offset + window_left + 1 < hi)
      hi = last - diag_offset + window_left + 1;
    return {lo, hi < lo ? lo : hi};
  }

  // The window as a band of a thread's register tile: key j + e is in the window of row i + r
  // exactly when band.lo <= e - r < band.hi (k_len is not tested). The bounds are clamped to
  // [cmin, cmax], which changes no test for offsets e - r inside (cmin, cmax): a tile of R rows
  // and E keys passes cmin = -R, cmax = E, and the bounds fit in int. hi < lo when the band
  // misses the tile. One row (r = 0) and cmin = 0 gives the row's visible columns of a tile.
  KATTN_INLINE IndexRange<I> window_band(I i, I j, I cmin, I cmax) const {
    const I base = i + diag_offset - j;
    I lo = window_left < 0 ? cmin : base - window_left;
    I hi = window_right < 0 ? cmax : base + window_right + 1;
    lo = lo < cmin ? cmin : (lo > cmax ? cmax : lo);
    hi = hi < cmin ? cmin : (hi > cmax ? cmax : hi);
    return {lo, hi};
  }

  // Does the key tile [j0, j0 + n) hide some key from some row of [first, last]? Tiles for
  // which it is false need no per-element masking. Rows are taken as given (not clamped). (The
  // left window is tested before the right, as sm80 did: the other order put a constant load
  // and byte moves into sm80's main loop;
  // benchmarks/results/h200-2026-12-01-kernel-contract-ab.md.)
  KATTN_INLINE bool tile_needs_mask(I first, I last, I j0, I n) const {
    if (j0 + n > k_len)
      return true;
    if (window_left >= 0 && j0 < last + diag_offset - window_left)
      return true;
    return window_right >= 0 && j0 + n - 1 > first + diag_offset + window_right;
  }

  // ALiBi's additive term: -slope * distance from the aligned diagonal.
  KATTN_INLINE double alibi(double slope, I i, I j) const {
    const I dist = i + diag_offset - j;
    return -slope * static_cast<double>(dist < 0 ? -dist : dist);
  }
};

// The rule of one sequence; the index type is q_len's.
template <class I>
KATTN_INLINE BasicMaskRule<I> make_mask_rule(I q_len, std::type_identity_t<I> k_len,
                                             bool bottom_right, std::type_identity_t<I> window_left,
                                             std::type_identity_t<I> window_right) {
  BasicMaskRule<I> r;
  r.q_len = q_len;
  r.k_len = k_len;
  r.diag_offset = bottom_right ? k_len - q_len : I(0);
  r.window_left = window_left;
  r.window_right = window_right;
  return r;
}

using MaskRule = BasicMaskRule<std::int64_t>;

// A row that saw no key (or only -inf scores) gives output 0 and LSE -inf (docs/semantics.md
// fully_masked_rows): its sum of weights is exactly 0, since a row with a finite score sums at
// least exp(0) = 1 at its max. A NaN or +inf score makes the sum NaN (exp of NaN, or of
// inf - inf), which is not empty: that row's out and LSE come out NaN (non_finite). The test
// is on the sum, not the max: a max that skips NaN scores stays -inf for a row of NaNs. For
// every kernel's softmax finish, over the row's full (reduced) sum.
KATTN_INLINE bool row_is_empty(float row_sum) {
  return row_sum == 0.0f;
}
KATTN_INLINE bool row_is_empty(double row_sum) {
  return row_sum == 0.0;
}

} // namespace kattn
