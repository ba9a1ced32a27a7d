// Tile shapes and shared-memory layout of the f32/f64 forward (wide_fwd_kernel.cuh).
//
// A warp owns 16 query rows (the m16 of the m16n8k8 MMAs in wide_math.cuh); a CTA of WARPS warps
// walks the keys BLOCK_N at a time. Tiles are row-major with padded rows, chosen so that every
// fragment load is conflict-free (lane: g = lane / 4, t = lane % 4):
//   Q and K  element (row g, column t) (f64),  V  element (row 2t + s, column g)
// (V's rows are read by key pairs: wide_fwd_kernel.cuh's P.V relabels each 8-key score tile).
//   f64 (a half-warp's 16 lanes share a request): 2 (g S + t) distinct mod 32 for g, t < 4 needs
//       S = 4 mod 16; 2 ((2t + s) S + g) needs S = 2 mod 8.
//   f32 (a warp's 32 lanes): V as f64's, (2t + s) S + g for t < 4, g < 8 needs 2S = 8 mod 32
//       (S = 4 mod 32). Q and K are read as 16-byte vectors instead: lane t takes columns
//       4t..4t+3 of each 16-column chunk for two k-steps (the head-dim index permuted alike in Q
//       and K, which leaves Q K^T unchanged; wide_fwd_kernel.cuh), and a quarter-warp phase
//       (rows g, g + 1, four lanes each) touches 32 distinct banks when S = 16 mod 32.
#pragma once

namespace kattn::cuda_kernels::sm80 {

template <class T, int HD>
struct WideTraits;

// Per element type and head dim: warps per CTA, keys per tile, CTAs per SM (the launch bound).
// Measured on the H200 (benchmarks/results/h200-2026-12-04-cuda-f64.md): f64 with 8 warps and
// one CTA per SM ran 1.01-1.10x 4 warps with two CTAs per SM (head dim 128 at 16-key tiles) and
// 1.05-1.06x 8 warps at 32-key (head dim 64) and 16-key (128) tiles.
// f64, head dim 64: 64-key tiles, 135 KiB of shared memory.
template <>
struct WideTraits<double, 64> {
  static constexpr int WARPS = 8, BLOCK_N = 64, CTAS = 1;
};
// f64, head dim 128: 32-key tiles keep the scores at 16 doubles per thread beside 64 of O;
// 198 KiB of shared memory.
template <>
struct WideTraits<double, 128> {
  static constexpr int WARPS = 8, BLOCK_N = 32, CTAS = 1;
};
// f32: the f64 shapes with half the bytes; 64-key tiles at both head dims (77 / 141 KiB).
// 10-16 warps with 32-48-key tiles ran 0.80-1.02x (H100,
// benchmarks/results/h100-2026-12-06-cuda-f32-warps.md).
template <>
struct WideTraits<float, 64> {
  static constexpr int WARPS = 8, BLOCK_N = 64, CTAS = 1;
};
template <>
struct WideTraits<float, 128> {
  static constexpr int WARPS = 8, BLOCK_N = 64, CTAS = 1;
};

template <class T, int HD>
struct WideConfig : WideTraits<T, HD> {
  static constexpr bool F64 = sizeof(T) == 8;
  static constexpr int WARPS = WideTraits<T, HD>::WARPS;
  static constexpr int BLOCK_N = WideTraits<T, HD>::BLOCK_N;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int WARP_ROWS = 16;
  static constexpr int BLOCK_M = WARP_ROWS * WARPS;
  static constexpr int QK_STRIDE = F64 ? HD + 4 : HD + 16; // elements per row of Q and K
  static constexpr int V_STRIDE = F64 ? HD + 2 : HD + 4;
  static constexpr int CHUNK = 16 / static_cast<int>(sizeof(T)); // elements per cp.async
  static constexpr int Q_ELEMS = BLOCK_M * QK_STRIDE;
  static constexpr int K_ELEMS = BLOCK_N * QK_STRIDE;
  static constexpr int V_ELEMS = BLOCK_N * V_STRIDE;
  static constexpr int SMEM_BYTES = (Q_ELEMS + K_ELEMS + V_ELEMS) * static_cast<int>(sizeof(T));
  static_assert(HD % 32 == 0);
  static_assert(F64 ? QK_STRIDE % 16 == 4 && V_STRIDE % 8 == 2
                    : QK_STRIDE % 32 == 16 && V_STRIDE % 32 == 4);
  // cp.async writes 16-byte chunks: every row must start 16-byte aligned.
  static_assert(QK_STRIDE % CHUNK == 0 && V_STRIDE % CHUNK == 0);
};

} // namespace kattn::cuda_kernels::sm80
