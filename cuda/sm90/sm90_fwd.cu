// The sm90 family's hooks (support check, name, dispatch) and the host helpers its launcher
// shares across instantiations.
#include "sm90_fwd.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "host_utils.hpp"
#include "inst/run_switch.hpp"
#include "kattn_kernels/params_limits.hpp"
#include "sm90_fwd_f32.hpp"
#include "tile_choice.hpp"

namespace kattn::cuda_kernels::sm90 {

namespace {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                   const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                   CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiledFn encode_tiled() {
  static EncodeTiledFn fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    check_cuda(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                cudaEnableDefault, &q),
               "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
    if (q != cudaDriverEntryPointSuccess || f == nullptr) {
      throw std::runtime_error("sm90: driver has no cuTensorMapEncodeTiled");
    }
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

// 16-bit elements.
bool stride_ok(std::int64_t s, std::int64_t extent) {
  return tma_stride_ok(s, extent, 2);
}

bool seq_major(const FlashFwdParams& p) {
  return p.q_dim_stride != 1 || p.k_dim_stride != 1 || p.v_dim_stride != 1;
}

// Sequence-major q, k, v (row stride 1): all three, head dims 64 and 128 (the tiles compiled
// for them), no padded or packed lengths (their rows would need zeroing across the boxes).
std::string seq_major_limit(const FlashFwdParams& p) {
  if (p.q_row_stride != 1 || p.k_row_stride != 1 || p.v_row_stride != 1 || p.q_dim_stride == 1 ||
      p.k_dim_stride == 1 || p.v_dim_stride == 1)
    return "sm90 kernels read q, k and v all sequence-major (row stride 1) or all with head-dim "
           "stride 1, got row strides q " +
           std::to_string(p.q_row_stride) + " k " + std::to_string(p.k_row_stride) + " v " +
           std::to_string(p.v_row_stride) + ", head-dim strides q " +
           std::to_string(p.q_dim_stride) + " k " + std::to_string(p.k_dim_stride) + " v " +
           std::to_string(p.v_dim_stride);
  if (p.H != 64 && p.H != 128)
    return "sm90 kernels: sequence-major q, k, v with head dims 64 and 128, got " +
           std::to_string(p.H);
  if (p.cu_seqlens_q != nullptr || p.seqlens_q != nullptr || p.seqlens_k != nullptr)
    return "sm90 kernels: sequence-major q, k, v without padded or packed lengths";
  return {};
}

// A 4-d tensor map (cols contiguous; strides in elements) with 128-byte swizzle and a
// (box_cols, box_rows, 1, 1) box.
CUtensorMap encode_tile_map(const void* base, CUtensorMapDataType type, std::int64_t elem_bytes,
                            std::uint64_t cols, std::uint64_t rows, std::uint64_t heads,
                            std::uint64_t batches, std::int64_t row_stride,
                            std::int64_t head_stride, std::int64_t batch_stride,
                            std::uint32_t box_cols, std::uint32_t box_rows) {
  CUtensorMap map{};
  const auto bytes = [elem_bytes](std::int64_t s, std::uint64_t extent) -> cuuint64_t {
    // Unused strides (extent 1) still have to be valid: any positive multiple of 16.
    return extent <= 1 || s <= 0 ? 16 : static_cast<cuuint64_t>(s * elem_bytes);
  };
  const cuuint64_t dims[4] = {cols, rows, heads, batches};
  const cuuint64_t strides[3] = {bytes(row_stride, rows), bytes(head_stride, heads),
                                 bytes(batch_stride, batches)};
  const cuuint32_t box[4] = {box_cols, box_rows, 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r =
      encode_tiled()(&map, type, 4, const_cast<void*>(base), dims, strides, box, elem_strides,
                     CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw std::runtime_error("sm90: cuTensorMapEncodeTiled failed (CUresult " +
                             std::to_string(static_cast<int>(r)) + ")");
  }
  return map;
}

} // namespace

CUtensorMap make_tile_map(const void* base, bool bf16, std::uint64_t cols, std::uint64_t rows,
                          std::uint64_t heads, std::uint64_t batches, std::int64_t row_stride,
                          std::int64_t head_stride, std::int64_t batch_stride,
                          std::uint32_t box_rows) {
  return encode_tile_map(
      base, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, cols,
      rows, heads, batches, row_stride, head_stride, batch_stride, 64, box_rows);
}

CUtensorMap make_f32_tile_map(const float* base, std::uint64_t cols, std::uint64_t rows,
                              std::uint64_t heads, std::uint64_t batches, std::int64_t row_stride,
                              std::int64_t head_stride, std::int64_t batch_stride,
                              std::uint32_t box_rows) {
  return encode_tile_map(base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, cols, rows, heads, batches,
                         row_stride, head_stride, batch_stride, 32, box_rows);
}

CUtensorMap make_f32_rows_map(float* base, std::uint64_t cols, std::uint64_t rows,
                              std::uint64_t heads, std::uint32_t box_cols, std::uint32_t box_rows) {
  CUtensorMap map{};
  // Columns as (32, cols / 32): a 128-byte swizzle takes boxes of at most 128-byte rows.
  const std::uint64_t r = std::max<std::uint64_t>(rows, 1);
  const cuuint64_t dims[4] = {32, cols / 32, r, heads};
  const cuuint64_t strides[3] = {128, cols * 4, cols * r * 4};
  const cuuint32_t box[4] = {32, box_cols / 32, box_rows, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult res =
      encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, base, dims, strides, box,
                     elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS) {
    throw std::runtime_error("sm90: cuTensorMapEncodeTiled (f32 rows) failed (CUresult " +
                             std::to_string(static_cast<int>(res)) + ")");
  }
  return map;
}

int multiprocessor_count() {
  // Cached per device id (read on first use).
  static std::array<std::atomic<int>, 64> cache{};
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  const bool cached = dev >= 0 && dev < 64;
  if (cached && cache[static_cast<std::size_t>(dev)].load() > 0) {
    return cache[static_cast<std::size_t>(dev)].load();
  }
  int count = 0;
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev),
             "cudaDeviceGetAttribute(multiprocessor count)");
  if (cached) {
    cache[static_cast<std::size_t>(dev)].store(count);
  }
  return count;
}

int packed_total(const int* cu_seqlens, int batch, cudaStream_t stream) {
  int total = 0;
  check_cuda(
      cudaMemcpyAsync(&total, cu_seqlens + batch, sizeof(int), cudaMemcpyDeviceToHost, stream),
      "cudaMemcpyAsync(cu_seqlens total)");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize(cu_seqlens total)");
  return total;
}

std::uint64_t tma_rows(const FlashFwdParams& p, bool queries, cudaStream_t stream) {
  const int dense = queries ? p.T : p.S;
  if (p.cu_seqlens_q == nullptr)
    return static_cast<std::uint64_t>(std::max(dense, 1));
  const std::int64_t total = queries ? p.total_q : p.total_k;
  const std::int64_t n =
      total > 0 ? total : packed_total(queries ? p.cu_seqlens_q : p.cu_seqlens_k, p.B, stream);
  return static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1));
}

std::string unsupported_reason(const FlashFwdParams& p) {
  int dev = 0;
  int major = 0;
  int minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    return "sm90 kernels: no usable CUDA device";
  }
  if (major != 9 || minor != 0) {
    return "sm90 kernels need compute capability 9.0 (device has " + std::to_string(major) + "." +
           std::to_string(minor) + ")";
  }
  if (p.dtype == ElemType::f32)
    return f32_unsupported_reason(p);
  if (p.dtype != ElemType::bf16 && p.dtype != ElemType::f16)
    return std::string("dtype: expected bf16, f16 or f32 (sm90 kernels), got ") +
           elem_name(p.dtype);
  if (p.H != p.Hv) {
    return "sm90 kernels need equal q/k and v head dims (got H " + std::to_string(p.H) + ", Hv " +
           std::to_string(p.Hv) + ")";
  }
  if (p.H != 64 && p.H != 128 && p.H != 256) {
    return "head dim " + std::to_string(p.H) + ": sm90 kernels exist for 64, 128 and 256";
  }
  for (const std::string& why :
       {heads_limit(p), varlen_limit(p), paged_limit(p, "the sm90 kernels"),
        access_limit(p, 16, 2, "TMA; 4-byte output stores")}) {
    if (!why.empty()) {
      return why;
    }
  }
  if (seq_major(p))
    if (std::string why = seq_major_limit(p); !why.empty())
      return why;
  const bool packed = p.cu_seqlens_q != nullptr;
  const std::int64_t nb = packed ? 1 : p.B;
  // The tensor maps' outer strides: row, head, batch (sequence-major: head dim, head, batch).
  const bool strides_ok = stride_ok(outer_stride(p.q_row_stride, p.q_dim_stride), 2) &&
                          stride_ok(p.q_head_stride, p.N) && stride_ok(p.q_batch_stride, nb) &&
                          stride_ok(outer_stride(p.k_row_stride, p.k_dim_stride), 2) &&
                          stride_ok(p.k_head_stride, p.K) && stride_ok(p.k_batch_stride, nb) &&
                          stride_ok(outer_stride(p.v_row_stride, p.v_dim_stride), 2) &&
                          stride_ok(p.v_head_stride, p.K) && stride_ok(p.v_batch_stride, nb) &&
                          p.o_row_stride % 2 == 0 && p.o_head_stride % 2 == 0 &&
                          p.o_batch_stride % 2 == 0;
  if (!strides_ok) {
    return "sm90 kernels (TMA) need q/k/v strides that are positive multiples of 8 elements";
  }
  return {};
}

std::string kernel_name(const FlashFwdParams& p) {
  if (p.dtype == ElemType::f32)
    return f32_kernel_name(p);
  return std::string("sm90_fwd_") + (p.dtype == ElemType::bf16 ? "bf16_" : "f16_") +
         tile_name(choose_tile(p)) + (seq_major(p) ? "_seq" : "");
}

void run(const FlashFwdParams& p, CUstream_st* stream) {
  if (p.dtype == ElemType::f32)
    return run_f32(p, stream);
  if (p.H != 64 && p.H != 128 && p.H != 256) {
    throw std::invalid_argument("sm90::run: head dim " + std::to_string(p.H) +
                                " is not instantiated");
  }
  launch_tile(choose_tile(p), p.dtype == ElemType::bf16, seq_major(p), p, stream);
}

} // namespace kattn::cuda_kernels::sm90
