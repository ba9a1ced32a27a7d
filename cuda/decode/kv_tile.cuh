// Global -> shared copies of the decode kernel's Q rows and K/V tiles (cp.async, 16 bytes per
// thread per step, sm80's swizzled layout). Each key row finds its own address: through the
// page table for a paged cache (rule paged_kv), so pages of any size, shared or shuffled, cost
// the same. Keys past the sequence are zero-filled; a page id outside [0, num_pages) is not
// read: its keys are written as NaN and its values as 0, so exactly the rows that see such a
// key come out NaN (the portable backend's contract for a corrupt device-resident table).
#pragma once

#include <cstdint>

#include "decode/decode_config.cuh"
#include "kattn_kernels/flash_params.hpp"
#include "sm80/kernel_traits.cuh"
#include "sm80/ptx.cuh"

namespace kattn::cuda_kernels::decode {

// Two NaNs of the element type in one 32-bit word (a quiet NaN's bits).
template <class Elem>
__device__ __forceinline__ std::uint32_t nan_pair();
template <>
__device__ __forceinline__ std::uint32_t nan_pair<__nv_bfloat16>() {
  return 0x7fc07fc0u;
}
template <>
__device__ __forceinline__ std::uint32_t nan_pair<__half>() {
  return 0x7e007e00u;
}

// Q rows r0 .. r0 + ROWS - 1 of (sequence b, KV head kv); rows past the packed rows are zeros.
template <class Elem, int HD>
__device__ __forceinline__ void load_q_rows(Elem* sQ, const FlashFwdParams& p, int b, int kv,
                                            int group, int r0, int rows, int tid) {
  using C = Config<HD>;
  const Elem* q = static_cast<const Elem*>(p.q);
#pragma unroll
  for (int it = 0; it < C::ROWS * C::CHUNKS / C::THREADS; ++it) {
    const int idx = tid + it * C::THREADS;
    const int row = idx / C::CHUNKS, chunk = idx % C::CHUNKS;
    const int r = r0 + row;
    const bool valid = r < rows;
    const int t = r / group, n = kv * group + r % group;
    const Elem* src = q + b * p.q_batch_stride + t * p.q_row_stride + n * p.q_head_stride;
    sm80::cp_async_16(sm80::smem_addr(sQ + sm80::tile_offset<HD>(row, chunk)),
                      valid ? src + chunk * 8 : q, valid);
  }
}

// Keys tile * TILE .. + TILE - 1 of (sequence b, KV head kv), k_len valid, into sK and sV.
template <class Elem, int HD>
__device__ __forceinline__ void load_kv_tile(Elem* sK, Elem* sV, const FlashFwdParams& p, int b,
                                             int kv, int k_len, int tile, int tid) {
  using C = Config<HD>;
  const Elem* k = static_cast<const Elem*>(p.k) + kv * p.k_head_stride;
  const Elem* v = static_cast<const Elem*>(p.v) + kv * p.v_head_stride;
  const int chunk = tid % C::CHUNKS;
#pragma unroll
  for (int it = 0; it < C::TILE / C::ROWS_PER_STEP; ++it) {
    const int row = tid / C::CHUNKS + it * C::ROWS_PER_STEP;
    const int j = tile * C::TILE + row;
    bool valid = j < k_len, bad = false;
    std::int64_t k_off = 0, v_off = 0;
    if (valid) {
      if (p.page_table != nullptr) {
        const int slot = j / p.page_size;
        const int page = __ldg(p.page_table + b * p.page_table_stride + slot);
        const int in_page = j - slot * p.page_size;
        bad = page < 0 || page >= p.num_pages;
        k_off = page * p.k_batch_stride + in_page * p.k_row_stride;
        v_off = page * p.v_batch_stride + in_page * p.v_row_stride;
      } else {
        k_off = b * p.k_batch_stride + j * p.k_row_stride;
        v_off = b * p.v_batch_stride + j * p.v_row_stride;
      }
      valid = !bad;
    }
    const int at = sm80::tile_offset<HD>(row, chunk);
    if (bad) {
      const std::uint32_t w = nan_pair<Elem>();
      *reinterpret_cast<uint4*>(sK + at) = make_uint4(w, w, w, w);
    } else {
      sm80::cp_async_16(sm80::smem_addr(sK + at), valid ? k + k_off + chunk * 8 : k, valid);
    }
    sm80::cp_async_16(sm80::smem_addr(sV + at), valid ? v + v_off + chunk * 8 : v, valid);
  }
}

} // namespace kattn::cuda_kernels::decode
