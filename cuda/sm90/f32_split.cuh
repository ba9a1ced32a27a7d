// The fp32 wgmma forward's operand pass (f32_config.cuh): k and v split into TF32 big and small
// parts in a dense workspace, v transposed (q is split per tile inside the kernel). One read and
// two writes per element, O(S) against the forward's O(T S).
//
//   k[b][key][head][h] (any strides, head dim contiguous) -> big, small [b][head][key][h]
//   v[b][key][head][h]                                    -> big, small [b][head][h][key']
//
// Keys at or past the sequence's length (padded batches) become 0: the kernel's masked scores
// never reach P V, and 0 * NaN from caller padding would. Vt's keys are permuted inside each
// group of 8 (key 2 t + e at position t + 4 e): the wgmma A fragment of a P register tile then
// holds keys in that order without shuffles (f32_mainloop.cuh).
#pragma once

#include <cstdint>

#include "common/fast_math.cuh"

namespace kattn::cuda_kernels::sm90 {

struct SplitSrc {
  const float* x;
  std::int64_t batch_stride, row_stride, head_stride; // elements; head-dim stride 1
  const int* lens;                                    // padded lengths per batch, or nullptr
};

__device__ __forceinline__ void split_store(float x, float* big, float* small, std::int64_t i) {
  std::uint32_t b, s;
  tf32_split(x, b, s);
  big[i] = __uint_as_float(b);
  small[i] = __uint_as_float(s);
}

// One warp per row, lanes along the head dim (hd a multiple of 32): grid (ceil(rows / 8),
// heads, batches), block (32, 8).
__global__ void split_rows_kernel(SplitSrc src, float* big, float* small, int rows, int hd) {
  const int r = static_cast<int>(blockIdx.x) * 8 + static_cast<int>(threadIdx.y);
  if (r >= rows) {
    return;
  }
  const int head = static_cast<int>(blockIdx.y);
  const int heads = static_cast<int>(gridDim.y);
  const int b = static_cast<int>(blockIdx.z);
  const int len = src.lens != nullptr ? src.lens[b] : rows;
  const float* x = src.x + b * src.batch_stride + r * src.row_stride + head * src.head_stride;
  const std::int64_t o = ((std::int64_t{b} * heads + head) * rows + r) * hd;
  for (int h = static_cast<int>(threadIdx.x); h < hd; h += 32) {
    split_store(r < len ? x[h] : 0.f, big, small, o + h);
  }
}

// A 32-key x 32-column tile per block of 32 x 8 threads, transposed through shared memory:
// reads along the head dim, writes along the keys. grid: (keys_out / 32, hd / 32, B x heads);
// keys_out (a multiple of 8) is the output's row length, keys >= keys (or the length) are 0.
__global__ void split_vt_kernel(SplitSrc src, float* big, float* small, int heads, int keys,
                                int keys_out, int hd) {
  __shared__ float tile[32][33];
  const int k0 = static_cast<int>(blockIdx.x) * 32;
  const int h0 = static_cast<int>(blockIdx.y) * 32;
  const int head = static_cast<int>(blockIdx.z) % heads;
  const int b = static_cast<int>(blockIdx.z) / heads;
  const int len = src.lens != nullptr ? min(src.lens[b], keys) : keys;
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int key = k0 + ty + 8 * j;
    tile[ty + 8 * j][tx] =
        key < len
            ? src.x[b * src.batch_stride + key * src.row_stride + head * src.head_stride + h0 + tx]
            : 0.f;
  }
  __syncthreads();
  const int pos = k0 + tx;
  // Position t + 4 e of a group of 8 holds key 2 t + e.
  const int q = tx % 8;
  const int key_local = tx - q + 2 * (q % 4) + q / 4;
  if (pos < keys_out) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int h = h0 + ty + 8 * j;
      const std::int64_t o =
          (std::int64_t{b} * heads + head) * hd * keys_out + std::int64_t{h} * keys_out + pos;
      split_store(tile[key_local][ty + 8 * j], big, small, o);
    }
  }
}

} // namespace kattn::cuda_kernels::sm90
