// Where the backward's extra tensors and workspaces put sequence b (kattn_kernels/
// flash_bwd_params.hpp): dout and dq rows beside q's, dk and dv rows beside k's, and the fp32
// accumulator rows of D and dQ. One definition for every backward kernel.
#pragma once

#include <cstdint>

#include "kattn_kernels/flash_bwd_params.hpp"
#include "kattn_kernels/seq_geometry.hpp"

namespace kattn {

// Accumulator rows in one of two layouts. Token order (every family but sm90 at head dim 64):
// b * T + i (batched) or the token index (packed). Tiles (p.dq_tile_order): each sequence's rows
// start at a 64-row tile and own whole tiles, because the sm90 backward at head dim 64 adds dQ
// into dq_accum in whole tiles (1-D bulk reductions, tile_order_offset below): b * T rounded up
// to a tile (batched), or (first token + 64 b) rounded down to a tile (packed), which is past
// the previous sequence's last tile since each sequence adds 64 to the unrounded sum. The
// workspace has the tiled layout's rows (acc_rows_total), which hold either.
inline constexpr int kAccTileRows = 64;
// Rounding by masks, not divisions: every count here is >= 0, and a signed division by 64 costs
// the kernel's per-step address arithmetic a sign fix-up.
KATTN_INLINE std::int64_t acc_tiled_rows(std::int64_t rows) {
  return (rows + kAccTileRows - 1) & ~std::int64_t{kAccTileRows - 1};
}
template <bool kTiles>
KATTN_INLINE std::int64_t acc_row0_of(const FlashFwdParams& f, std::int64_t q_tok0, int b) {
  if constexpr (kTiles)
    return f.cu_seqlens_q != nullptr
               ? (q_tok0 + std::int64_t{kAccTileRows} * b) & ~std::int64_t{kAccTileRows - 1}
               : std::int64_t{b} * acc_tiled_rows(f.T);
  else
    return f.cu_seqlens_q != nullptr ? q_tok0 : std::int64_t{b} * f.T;
}
// Accumulator row of query 0 of sequence b: in a kernel, whose layout is fixed at compile time,
// and in the row passes, which serve both (p.dq_tile_order).
template <bool kTiles>
KATTN_INLINE std::int64_t acc_row0(const FlashBwdParams& p, const SeqSpan<int>& s, int b) {
  return acc_row0_of<kTiles>(p.fwd, s.q_tok0, b);
}
KATTN_INLINE std::int64_t acc_row0(const FlashBwdParams& p, const SeqSpan<int>& s, int b) {
  return p.dq_tile_order ? acc_row0<true>(p, s, b) : acc_row0<false>(p, s, b);
}
// Accumulator rows of one head (a multiple of the tile): enough for either layout.
KATTN_INLINE std::int64_t acc_rows_total(const FlashFwdParams& f) {
  return f.cu_seqlens_q != nullptr ? acc_row0_of<true>(f, f.total_q, f.B)
                                   : acc_row0_of<true>(f, 0, f.B);
}

// Deterministic mode's order of the dQ additions (the sm90 backward, p.deterministic): each
// 64-row query tile of each query head has a counter in p.dq_order, and the key blocks that see
// the tile add their dQ into it one at a time, in a fixed order, each waiting until the counter
// equals its ticket. One counter per accumulator tile (the tiled layout's, whatever dq_accum's
// layout), then one per (sequence, KV head) from which its CTAs draw their key blocks.
KATTN_INLINE std::int64_t dq_order_tiles(const FlashFwdParams& f) {
  return std::int64_t{f.N} * (acc_rows_total(f) / kAccTileRows);
}
KATTN_INLINE std::int64_t dq_order_ints(const FlashFwdParams& f) {
  return dq_order_tiles(f) + std::int64_t{f.B} * f.K;
}
KATTN_INLINE std::int64_t dq_order_slot(const FlashBwdParams& p, const SeqSpan<int>& s, int b,
                                        int head, int m0) {
  return std::int64_t{head} * (p.acc_rows / kAccTileRows) +
         (acc_row0<true>(p, s, b) + m0) / kAccTileRows;
}
// Which key blocks of block_n keys see query rows [m0, m0 + block_m): a contiguous range
// (keys_of_rows is one interval), exactly those whose rows_of_keys reaches the rows. Under a
// right-bounded window (causal) later key blocks start their walk at later query blocks, so they
// reach a tile first and go first (descending); otherwise key blocks go in ascending order.
// Returns the key block's place in that order, or -1 when it does not see the rows.
template <class I>
KATTN_INLINE bool dq_order_descending(I window_right) {
  return window_right >= 0;
}
template <class I>
KATTN_INLINE I dq_order_ticket(const BasicMaskRule<I>& rule, I n_block, I block_n, I m0,
                               I block_m) {
  const IndexRange<I> keys = rule.keys_of_rows(m0, m0 + block_m - 1);
  if (keys.hi <= keys.lo)
    return -1;
  const I first = keys.lo / block_n, last = (keys.hi - 1) / block_n;
  if (n_block < first || n_block > last)
    return -1;
  return dq_order_descending(rule.window_right) ? last - n_block : n_block - first;
}

// Where dQ's element (row i, even column c) of a tile lies in a tile-ordered dq_accum
// (p.dq_tile_order), counted from the tile's first float ((acc row of the tile's row 0) * H): a
// tile (64 rows x H fp32) holds 64-column halves, each of four 16-row warp blocks in the order
// of the m64n64 wgmma accumulator fragments (lane l of a warp: rows l / 4 and + 8, columns
// 8 j + 2 (l % 4) and + 1 of column group j, four floats per j), so that a warp stages its
// fragments with conflict-free 16-byte stores and one bulk reduction adds the 4 KB block.
KATTN_INLINE int tile_order_offset(int i, int c) {
  const int r = i % kAccTileRows, rr = r % 16, cc = c % 64;
  const int lane = 4 * (rr % 8) + (cc % 8) / 2;
  return (c / 64) * 4096 + (r / 16) * 1024 + ((cc / 8) * 32 + lane) * 4 + 2 * (rr / 8) + cc % 2;
}

struct BwdRowOffsets {
  std::int64_t dout = 0, dq = 0; // query head n's row 0
  std::int64_t dk = 0, dv = 0;   // KV head kv's row 0
};
KATTN_INLINE BwdRowOffsets bwd_row_offsets(const FlashBwdParams& p, const SeqSpan<int>& s, int b,
                                           int n, int kv) {
  const bool packed = p.fwd.cu_seqlens_q != nullptr;
  BwdRowOffsets r;
  r.dout =
      row0_offset(packed, s.q_tok0, b, n, p.do_batch_stride, p.do_row_stride, p.do_head_stride);
  r.dq = row0_offset(packed, s.q_tok0, b, n, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride);
  r.dk = row0_offset(packed, s.k_tok0, b, kv, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride);
  r.dv = row0_offset(packed, s.k_tok0, b, kv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride);
  return r;
}

// Rows of dk and dv a kernel writes for sequence b: its own keys (packed), or all S.
KATTN_INLINE int key_rows_written(const FlashFwdParams& p, const SeqSpan<int>& s) {
  return p.cu_seqlens_k != nullptr ? s.k_len : p.S;
}

} // namespace kattn
