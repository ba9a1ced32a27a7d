// Global -> shared copies of [rows, HD] tiles with cp.async, 16 bytes per thread per step,
// into the swizzled layout of kernel_traits.cuh. Rows past `valid_rows` are zero-filled, so
// the MMAs never read stale or NaN data (padding rows give exact zeros in S and in P.V).
#pragma once

#include <cstdint>

#include "sm80/kernel_traits.cuh"
#include "sm80/ptx.cuh"

namespace kattn::cuda_kernels::sm80 {

template <int HD, int ROWS, int THREADS, class Elem>
__device__ __forceinline__ void copy_tile_async(Elem* smem, const Elem* gmem,
                                                std::int64_t row_stride, int valid_rows, int tid) {
  constexpr int CHUNKS = HD / 8;
  constexpr int ROWS_PER_STEP = THREADS / CHUNKS;
  static_assert(THREADS % CHUNKS == 0 && ROWS % ROWS_PER_STEP == 0, "uneven tile split");
  static_assert(ROWS_PER_STEP % 8 == 0, "a thread's rows must share row % 8 (one swizzle)");
  // A thread copies chunk tid % CHUNKS of rows tid / CHUNKS + k * ROWS_PER_STEP: one source
  // pointer and one shared address, both advanced by a constant step.
  const int row0 = tid / CHUNKS;
  const int chunk = tid % CHUNKS;
  const Elem* src = gmem + row0 * row_stride + chunk * 8;
  const std::int64_t step = ROWS_PER_STEP * row_stride;
  const std::uint32_t dst = smem_addr(smem + tile_offset<HD>(row0, chunk));
#pragma unroll
  for (int it = 0; it < ROWS / ROWS_PER_STEP; ++it) {
    const bool valid = row0 + it * ROWS_PER_STEP < valid_rows;
    cp_async_16(dst + it * ROWS_PER_STEP * HD * 2, valid ? src : gmem, valid);
    src += step;
  }
}

} // namespace kattn::cuda_kernels::sm80
