// Tile shapes of the sm80 forward kernel per head dim, and the swizzled shared-memory layout
// of a [rows, HD] tile of 16-bit elements.
//
// Each warp owns 16 * MT query rows (MT m16 tiles: B fragments read once, used MT times); a
// CTA of WARPS warps owns BLOCK_M = 16 * MT * WARPS rows and walks the keys BLOCK_N at a time.
#pragma once

#include <cstdint>

namespace kattn::cuda_kernels::sm80 {

template <int HD>
struct Traits;

// hdim 64: 128 x 64 tiles, 32 KiB shared memory. (Q fragments in registers would save the Q
// ldmatrix per tile but cost 32 registers: ptxas then spills at the 255-register limit.)
template <>
struct Traits<64> {
  static constexpr int WARPS = 4, MT = 2, BLOCK_N = 64;
  static constexpr bool Q_IN_REGS = false;
};
// hdim 128: 8 warps x 16 rows, 128 x 64 tiles, 64 KiB; 206 registers, no spills. Measured
// alternative (H200, 4k/8k tokens, non-causal): 4 warps x 32 rows (WARPS = 4, MT = 2) ran
// 363-370 TFLOP/s against 298-303 here, since each K/V fragment then feeds two MMAs, but ptxas
// spills 8 bytes for it and it has not been through the device tests yet (docs/cuda.md).
template <>
struct Traits<128> {
  static constexpr int WARPS = 8, MT = 1, BLOCK_N = 64;
  static constexpr bool Q_IN_REGS = false;
};
// hdim 256: one m16 tile per warp, 8 warps, 128 x 64 tiles, 128 KiB shared memory.
template <>
struct Traits<256> {
  static constexpr int WARPS = 8, MT = 1, BLOCK_N = 64;
  static constexpr bool Q_IN_REGS = false;
};

template <int HD>
struct Config : Traits<HD> {
  using Base = Traits<HD>;
  static constexpr int THREADS = 32 * Base::WARPS;
  static constexpr int WARP_ROWS = 16 * Base::MT;
  static constexpr int BLOCK_M = WARP_ROWS * Base::WARPS;
  static constexpr int CHUNKS = HD / 8; // 16-byte chunks per row
  // Shared memory in elements: Q [BLOCK_M, HD] (reused to stage O), K and V [BLOCK_N, HD].
  static constexpr int Q_ELEMS = BLOCK_M * HD;
  static constexpr int KV_ELEMS = Base::BLOCK_N * HD;
  static constexpr int SMEM_BYTES = (Q_ELEMS + 2 * KV_ELEMS) * 2;
  static_assert(HD % 64 == 0, "rows must hold a multiple of 8 chunks for the swizzle");
  static_assert(Base::BLOCK_N % 16 == 0);
};

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows, HD] tile. The chunk index
// is XORed with row % 8, so the 8 rows an ldmatrix phase reads (same logical chunk) land in 8
// different bank groups: no bank conflicts for ldmatrix or the cp.async writes.
template <int HD>
__device__ __forceinline__ int tile_offset(int row, int chunk) {
  return row * HD + ((chunk ^ (row & 7)) << 3);
}

// ldmatrix addressing without one register per (row, chunk) pair. A lane reads row r (r % 8
// fixed per lane) at chunk 2k + c (c in {0, 1} per lane); since rows are 128-byte multiples
// and 2k is even, its byte offset is
//   (lane_off ^ ((2k % 8) << 4)) + ((2k - 2k % 8) << 4) + row_step * row_bytes
// with lane_off = r * row_bytes + ((c ^ (r % 8)) << 4): one register per operand.
template <int HD>
__device__ __forceinline__ std::uint32_t lane_offset(int row, int c) {
  return static_cast<std::uint32_t>(row * HD * 2 + ((c ^ (row & 7)) << 4));
}
template <int HD>
__device__ __forceinline__ std::uint32_t swizzled(std::uint32_t lane_off, int row_step,
                                                  int chunk_even) {
  return (lane_off ^ static_cast<std::uint32_t>((chunk_even & 7) << 4)) +
         static_cast<std::uint32_t>(row_step * HD * 2 + ((chunk_even & ~7) << 4));
}

} // namespace kattn::cuda_kernels::sm80
