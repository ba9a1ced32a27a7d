// The score mask of docs/semantics.md on the device: keys past the sequence, and the inclusive
// window (left, right) around the aligned diagonal (causal = right 0). Also the range of key
// blocks a query block must visit, and whether a key tile needs per-element masking at all.
#pragma once

namespace kattn::cuda_kernels::sm80 {

struct Mask {
  int k_len = 0;
  int diag = 0;   // key aligned with query 0
  int left = -1;  // inclusive, -1 unbounded
  int right = -1; // inclusive, -1 unbounded

  __device__ __forceinline__ bool visible(int i, int j) const {
    const int d = i + diag;
    return j < k_len && (left < 0 || j >= d - left) && (right < 0 || j <= d + right);
  }

  // Key blocks [n_min, n_max) that rows [m0, m1) can see (empty when n_min >= n_max).
  __device__ __forceinline__ void key_blocks(int m0, int m1, int block_n, int& n_min,
                                             int& n_max) const {
    int lo = 0, hi = k_len; // visible keys [lo, hi)
    if (left >= 0)
      lo = max(lo, m0 + diag - left);
    if (right >= 0)
      hi = min(hi, m1 - 1 + diag + right + 1);
    if (m1 <= m0 || hi <= lo) {
      n_min = n_max = 0;
      return;
    }
    n_min = lo / block_n;
    n_max = (hi + block_n - 1) / block_n;
  }

  // Does key tile [j0, j0 + block_n) hide any key from any row of [m0, m1)?
  __device__ __forceinline__ bool tile_needs_mask(int m0, int m1, int j0, int block_n) const {
    if (j0 + block_n > k_len)
      return true;
    if (left >= 0 && j0 < m1 - 1 + diag - left)
      return true;
    if (right >= 0 && j0 + block_n - 1 > m0 + diag + right)
      return true;
    return false;
  }
};

} // namespace kattn::cuda_kernels::sm80
