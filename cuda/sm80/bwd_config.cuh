// Tile shapes of the sm80 backward kernel (bwd_kernel.cuh): a CTA of 4 warps keeps 64 keys of K
// and V in shared memory (16 per warp: the rows of its dK and dV accumulators) and walks the
// query rows that see them 64 at a time. Head dims 64 and 128; 256 would need 256 fp32
// accumulator registers per thread for dK and dV alone.
#pragma once

namespace kattn::cuda_kernels::sm80 {

template <int HD>
struct BwdConfig {
  static_assert(HD == 64 || HD == 128, "sm80 backward: head dims 64 and 128");
  static constexpr int WARPS = 4;
  static constexpr int THREADS = 32 * WARPS;
  static constexpr int BLOCK_N = 16 * WARPS; // keys per CTA
  static constexpr int BLOCK_M = 64;         // query rows per step
  // Shared memory: K, V [BLOCK_N, HD]; Q, dO [BLOCK_M, HD]; dS^T [BLOCK_N, BLOCK_M] (all 16-bit,
  // swizzled as kernel_traits.cuh's tile_offset); LSE * log2(e) and D [BLOCK_M] (fp32).
  static constexpr int KV_ELEMS = BLOCK_N * HD;
  static constexpr int Q_ELEMS = BLOCK_M * HD;
  static constexpr int DS_ELEMS = BLOCK_N * BLOCK_M;
  static constexpr int SMEM_BYTES = (2 * KV_ELEMS + 2 * Q_ELEMS + DS_ELEMS) * 2 + 2 * BLOCK_M * 4;
  // dQ by fp32 atomics from the main kernel (else by the dq kernel, as in deterministic mode).
  // H200, 2026-12-02 (benchmarks/results/h200-2026-12-02-cuda-backward.md): at head dim 128 the
  // dq kernel's fwd+bwd takes 0.77-0.83x the atomics path's time (whose main kernel sat at 255
  // registers with a spill); at head dim 64 1.02-1.06x.
  static constexpr bool ATOMIC_DQ = HD < 128;
  // The deterministic dQ kernel (bwd_dq_kernel.cuh): Q, dO [BLOCK_M, HD] and two stages of K, V.
  static constexpr int DQ_SMEM_BYTES = (2 * Q_ELEMS + 4 * KV_ELEMS) * 2;
};

} // namespace kattn::cuda_kernels::sm80
