// Host helpers shared by the sm90 launchers (defined in sm90_fwd.cu).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels::sm90 {

// 4-d bf16/fp16 tensor map (cols, rows, heads, batches; strides in elements; cols contiguous:
// the head dim, or for sequence-major tensors the sequence) with 128-byte swizzle and a
// (64, box_rows, 1, 1) box; cuTensorMapEncodeTiled via the runtime's entry point.
CUtensorMap make_tile_map(const void* base, bool bf16, std::uint64_t cols, std::uint64_t rows,
                          std::uint64_t heads, std::uint64_t batches, std::int64_t row_stride,
                          std::int64_t head_stride, std::int64_t batch_stride,
                          std::uint32_t box_rows);
// The same for f32 (the exact-fp32 forward's split operands): boxes of (32, box_rows), 32 floats
// being the swizzle's 128 bytes.
CUtensorMap make_f32_tile_map(const float* base, std::uint64_t cols, std::uint64_t rows,
                              std::uint64_t heads, std::uint64_t batches, std::int64_t row_stride,
                              std::int64_t head_stride, std::int64_t batch_stride,
                              std::uint32_t box_rows);
// f32 tensor map of a dense [heads, rows, cols] array (cols contiguous, a multiple of 32) with
// 128-byte swizzle and a box of box_rows x box_cols (a multiple of 32): the backward's dq_accum,
// target of TMA reductions. 4-d (32, cols / 32, rows, heads), so that a box row wider than the
// swizzle's 128 bytes is box_cols / 32 swizzle rows in shared memory (box coordinates
// {0, col / 32, row, head}).
CUtensorMap make_f32_rows_map(float* base, std::uint64_t cols, std::uint64_t rows,
                              std::uint64_t heads, std::uint32_t box_cols, std::uint32_t box_rows);
// TMA needs 16-byte aligned outer strides (in elements of elem_bytes); the stride of a size-1
// dimension is never used.
inline bool tma_stride_ok(std::int64_t stride, std::int64_t extent, int elem_bytes) {
  return extent <= 1 || (stride > 0 && (stride * elem_bytes) % 16 == 0);
}
// Multiprocessors of the current device.
int multiprocessor_count();
// Packed varlen: total tokens (cu_seqlens[batch]), read back from the device (synchronises).
int packed_total(const int* cu_seqlens, int batch, cudaStream_t stream);
// Row extent of q's (queries) or k's tensor map, >= 1 (a map needs it; with no keys nothing is
// loaded): T or S, or when packed the tensors' token extent when the caller gave it (the cuda
// backend always does), else cu_seqlens[B] read back from the device (synchronises).
std::uint64_t tma_rows(const FlashFwdParams& p, bool queries, cudaStream_t stream);

} // namespace kattn::cuda_kernels::sm90
