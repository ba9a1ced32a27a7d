// Tile shapes and shared-memory layout of the f64 forward (DMMA: f64 mma.sync, ptx.cuh).
//
// A warp owns 16 query rows (the m16 of ptx.cuh's mma_f64_m16n8k8); a CTA of WARPS warps walks
// the keys BLOCK_N at a time. Tiles are row-major doubles with padded rows, chosen so that every
// fragment load is conflict-free: a half-warp's 16 lanes (g = lane / 4 in 0..3, t = lane % 4) read
// 64-bit words
//   Q and K  (row g, column t):       word pair 2 (g * STRIDE + t)      -> STRIDE = 4 mod 16
//   V        (row 2t + s, column g):  word pair 2 ((2t + s) STRIDE + g) -> STRIDE = 2 mod 8
// (V's rows are read by key pairs: dmma_fwd_kernel.cuh's P.V relabels each 8-key score tile).
#pragma once

namespace kattn::cuda_kernels::sm80 {

template <int HD>
struct DmmaTraits;

// Per head dim: warps per CTA, keys per tile, CTAs per SM (the launch bound). Measured on the
// H200 (benchmarks/results/h200-2026-12-04-cuda-f64.md): 8 warps with one CTA per SM ran
// 1.01-1.10x 4 warps with two CTAs per SM (head dim 128 at 16-key tiles) and 1.05-1.06x 8 warps
// at 32-key (head dim 64) and 16-key (128) tiles.
// Head dim 64: 64-key tiles, 135 KiB of shared memory.
template <>
struct DmmaTraits<64> {
  static constexpr int WARPS = 8, BLOCK_N = 64, CTAS = 1;
};
// Head dim 128: 32-key tiles keep the scores at 16 doubles per thread beside 64 of O;
// 198 KiB of shared memory.
template <>
struct DmmaTraits<128> {
  static constexpr int WARPS = 8, BLOCK_N = 32, CTAS = 1;
};

template <int HD>
struct DmmaConfig : DmmaTraits<HD> {
  static constexpr int WARPS = DmmaTraits<HD>::WARPS;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int WARP_ROWS = 16;
  static constexpr int BLOCK_M = WARP_ROWS * WARPS;
  static constexpr int QK_STRIDE = HD + 4; // doubles per row of the Q and K tiles
  static constexpr int V_STRIDE = HD + 2;
  static constexpr int Q_ELEMS = BLOCK_M * QK_STRIDE;
  static constexpr int K_ELEMS = DmmaTraits<HD>::BLOCK_N * QK_STRIDE;
  static constexpr int V_ELEMS = DmmaTraits<HD>::BLOCK_N * V_STRIDE;
  static constexpr int SMEM_BYTES = (Q_ELEMS + K_ELEMS + V_ELEMS) * 8;
  static_assert(HD % 16 == 0 && QK_STRIDE % 16 == 4 && V_STRIDE % 8 == 2);
  // cp.async writes 16-byte chunks: every row must start 16-byte aligned.
  static_assert(QK_STRIDE % 2 == 0 && V_STRIDE % 2 == 0);
};

} // namespace kattn::cuda_kernels::sm80
