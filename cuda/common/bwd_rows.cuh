// The backward's row-wise passes, shared by every CUDA backward family (one warp per row):
//   dot_do_o_kernel  before the main kernel: D = rowsum(dO * O) in fp32 for every query row
//                    (0 for rows past the sequence), into p.dsum
//   convert_dq_kernel after it: dq = dq_accum rounded to the element type (rows past the
//                    sequence of a padded batch get 0)
// Grid: x = blocks of kRowsPerBlock query rows, y = query heads, z = batch. Memory-bound and
// small next to the main kernel (reads 2 and writes 1 tensor of q's size in all).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/cuda_check.hpp"
#include "kattn_kernels/bwd_geometry.hpp"

namespace kattn::cuda_kernels {

inline constexpr int kRowWarps = 4, kRowsPerWarp = 4;
inline constexpr int kRowsPerBlock = kRowWarps * kRowsPerWarp;

__device__ __forceinline__ float2 to_float2(__nv_bfloat162 x) {
  return __bfloat1622float2(x);
}
__device__ __forceinline__ float2 to_float2(__half2 x) {
  return __half22float2(x);
}
template <class Pair>
__device__ __forceinline__ Pair from_float2(float2 x);
template <>
__device__ __forceinline__ __nv_bfloat162 from_float2<__nv_bfloat162>(float2 x) {
  return __float22bfloat162_rn(x);
}
template <>
__device__ __forceinline__ __half2 from_float2<__half2>(float2 x) {
  return __float22half2_rn(x);
}

// Pair: __nv_bfloat162 or __half2 (H is even: the kernels serve head dims 64, 128, 256).
template <class Pair>
__global__ void __launch_bounds__(32 * kRowWarps)
    dot_do_o_kernel(const __grid_constant__ FlashBwdParams p) {
  const int b = static_cast<int>(blockIdx.z), n = static_cast<int>(blockIdx.y);
  const SeqSpan<int> s = seq_span(p.fwd, b);
  const int rows = rows_written(p.fwd, s);
  const RowOffsets off = row_offsets(p.fwd, s, b, n);
  const BwdRowOffsets boff = bwd_row_offsets(p, s, b, n, 0);
  const std::int64_t acc0 = n * p.acc_rows + acc_row0(p, s, b);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int i0 = static_cast<int>(blockIdx.x) * kRowsPerBlock +
                 static_cast<int>(threadIdx.x) / 32 * kRowsPerWarp;
  for (int i = i0; i < i0 + kRowsPerWarp && i < rows; ++i) {
    float acc = 0.f;
    if (i < s.q_len) {
      const Pair* o = reinterpret_cast<const Pair*>(static_cast<const char*>(p.fwd.out) +
                                                    2 * (off.o + i * p.fwd.o_row_stride));
      const Pair* d = reinterpret_cast<const Pair*>(static_cast<const char*>(p.dout) +
                                                    2 * (boff.dout + i * p.do_row_stride));
      for (int c = lane; c < p.fwd.Hv / 2; c += 32) {
        const float2 x = to_float2(o[c]), y = to_float2(d[c]);
        acc = fmaf(x.x, y.x, fmaf(x.y, y.y, acc));
      }
    }
#pragma unroll
    for (int m = 16; m >= 1; m /= 2)
      acc += __shfl_xor_sync(0xffffffffu, acc, m);
    if (lane == 0)
      p.dsum[acc0 + i] = acc;
  }
}

template <class Pair>
__global__ void __launch_bounds__(32 * kRowWarps)
    convert_dq_kernel(const __grid_constant__ FlashBwdParams p) {
  const int b = static_cast<int>(blockIdx.z), n = static_cast<int>(blockIdx.y);
  const SeqSpan<int> s = seq_span(p.fwd, b);
  const int rows = rows_written(p.fwd, s);
  const BwdRowOffsets boff = bwd_row_offsets(p, s, b, n, 0);
  const std::int64_t acc0 = n * p.acc_rows + acc_row0(p, s, b);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int i0 = static_cast<int>(blockIdx.x) * kRowsPerBlock +
                 static_cast<int>(threadIdx.x) / 32 * kRowsPerWarp;
  for (int i = i0; i < i0 + kRowsPerWarp && i < rows; ++i) {
    const float* row = p.dq_accum + (acc0 + i) * p.fwd.H;
    const float* tile = p.dq_accum + (acc0 + i - i % kAccTileRows) * p.fwd.H;
    Pair* dst =
        reinterpret_cast<Pair*>(static_cast<char*>(p.dq) + 2 * (boff.dq + i * p.dq_row_stride));
    for (int c = lane; c < p.fwd.H / 2; c += 32) {
      const float* src = p.dq_tile_order ? tile + tile_order_offset(i, 2 * c) : row + 2 * c;
      dst[c] =
          from_float2<Pair>(i < s.q_len ? *reinterpret_cast<const float2*>(src) : float2{0.f, 0.f});
    }
  }
}

// The grid of both passes.
inline dim3 row_pass_grid(const FlashBwdParams& p) {
  return dim3(static_cast<unsigned>((p.fwd.T + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned>(p.fwd.N), static_cast<unsigned>(p.fwd.B));
}

template <class Pair>
void launch_dot_do_o(const FlashBwdParams& p, cudaStream_t stream) {
  dot_do_o_kernel<Pair><<<row_pass_grid(p), 32 * kRowWarps, 0, stream>>>(p);
  check_cuda(cudaGetLastError(), "backward pre-pass (D = rowsum(dO * O)): kernel launch");
}
template <class Pair>
void launch_convert_dq(const FlashBwdParams& p, cudaStream_t stream) {
  convert_dq_kernel<Pair><<<row_pass_grid(p), 32 * kRowWarps, 0, stream>>>(p);
  check_cuda(cudaGetLastError(), "backward dq conversion: kernel launch");
}

} // namespace kattn::cuda_kernels
