// The parameter block of our GPU flash-attention backward kernels: the forward's problem (q, k,
// v, out and the forward's LSE, read), the gradients' tensors and the fp32 workspaces. Filled by
// backends/gpu_common/flash_params.cpp (make_flash_bwd_params); plain C++ like FlashFwdParams.
//
// Layout: dout and dq like q's [B, T, N, H] (packed [Tq_total, N, H]), dk and dv like k's and v's;
// head-dim stride 1 for all four. The workspaces (allocated by the launcher,
// cuda/src/flash_bwd.cpp) are indexed by "accumulator rows", one per query token, in token order
// or (dq_tile_order) with each sequence's rows starting at a 64-row tile
// (kattn_kernels/bwd_geometry.hpp: acc_row0, acc_rows_total):
//   dsum     f32 [N, acc_rows]     D = rowsum(dO * O), written by the pre-pass
//   dq_accum f32 [N, acc_rows, H]  dQ summed over key blocks (zeroed first), converted at the end
//                                  (absent when dq_kernel); row-major, or each 64-row tile in
//                                  wgmma fragment order when dq_tile_order (tile_order_offset)
//   dq_order i32 [dq_order_ints]   deterministic mode of the sm90 backward: the order of the dQ
//                                  additions per tile, and a block ticket (zeroed first)
#pragma once

#include <cstdint>

#include "kattn_kernels/flash_params.hpp"

namespace kattn {

struct FlashBwdParams {
  FlashFwdParams fwd; // fwd.out is read (not written); fwd.lse is required (the forward's LSE)

  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  // Element strides [batch, row (token), head]; batch 0 when packed. Head-dim stride 1.
  std::int64_t do_batch_stride = 0, do_row_stride = 0, do_head_stride = 0;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  std::int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  std::int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;

  // Workspaces (above); set by the launcher.
  float* dsum = nullptr;
  float* dq_accum = nullptr;
  std::int64_t acc_rows = 0;
  std::int32_t* dq_order = nullptr;

  bool deterministic = false; // bitwise-repeatable gradients requested
  // Set by the launcher: dQ comes from a kernel of its own (no atomics, no dq_accum), as it must
  // when deterministic and does where the family finds it faster.
  bool dq_kernel = false;
  // Set by the family's launcher: dq_accum's tiles are in fragment order (sm90 at head dim 64).
  bool dq_tile_order = false;
};

} // namespace kattn
