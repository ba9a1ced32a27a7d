// The sm90 exact-fp32 forward: its support check, the operand split and the launch.
#include "sm90_fwd_f32.hpp"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "common/stream_scratch.hpp"
#include "f32_config.cuh"
#include "f32_fwd_kernel.cuh"
#include "f32_split.cuh"
#include "host_utils.hpp"
#include "kattn_kernels/params_limits.hpp"

namespace kattn::cuda_kernels::sm90 {

namespace {

using F32Cfg = F32FwdConfig<128>;

// Keys of a Vt row: whole groups of 8 (the key permutation's unit).
std::int64_t vt_keys(const FlashFwdParams& p) {
  return (std::int64_t{p.S} + 7) / 8 * 8;
}

} // namespace

std::string f32_unsupported_reason(const FlashFwdParams& p) {
  if (p.dtype != ElemType::f32)
    return std::string("dtype: expected f32 (the sm90 fp32 kernel), got ") + elem_name(p.dtype);
  if (p.tf32)
    return "options.allow_tf32: the sm90 fp32 kernel computes exact-fp32 (3xTF32) products; "
           "sm80's kernel serves TF32";
  if (p.H != F32Cfg::kHeadDim || p.Hv != F32Cfg::kHeadDim)
    return "head dim: the sm90 fp32 kernel is built for 128 (q/k and v), got H " +
           std::to_string(p.H) + ", Hv " + std::to_string(p.Hv);
  for (const std::string& why :
       {heads_limit(p), varlen_limit(p), paged_limit(p, "the sm90 fp32 kernel"),
        unit_dim_stride_limit(p), access_limit(p, 4, 1, "fp32 elements")})
    if (!why.empty())
      return why;
  if (p.cu_seqlens_q != nullptr)
    return "packed varlen: the sm90 fp32 kernel serves dense and padded batches (sm80's kernel "
           "serves packed ones)";
  // q is read by TMA as it is: 16-byte aligned, strides of whole 16-byte units.
  if (reinterpret_cast<std::uintptr_t>(p.q) % 16 != 0 || !tma_stride_ok(p.q_row_stride, p.T, 4) ||
      !tma_stride_ok(p.q_head_stride, p.N, 4) || !tma_stride_ok(p.q_batch_stride, p.B, 4))
    return "q: the sm90 fp32 kernel reads it by TMA: expected a 16-byte aligned pointer and "
           "row/head/batch strides that are positive multiples of 4 elements, got strides " +
           std::to_string(p.q_row_stride) + "/" + std::to_string(p.q_head_stride) + "/" +
           std::to_string(p.q_batch_stride);
  return {};
}

bool f32_auto(const FlashFwdParams& p) {
  return p.T >= 2048 && p.S >= 2048;
}

std::string f32_kernel_name(const FlashFwdParams& p) {
  return "sm90_fwd_f32_3xtf32_h" + std::to_string(p.H);
}

void run_f32(const FlashFwdParams& p, CUstream_st* stream) {
  if (p.B == 0 || p.T == 0 || p.N == 0)
    return;
  constexpr std::int64_t H = F32Cfg::kHeadDim;
  const std::int64_t B = p.B, N = p.N, K = p.K, T = p.T, S = p.S, Sv = vt_keys(p);
  const std::int64_t nk = B * K * S * H, nv = B * K * H * Sv;
  const StreamScratch ws(static_cast<std::size_t>(2 * (nk + nv)) * sizeof(float), stream,
                         "sm90 fp32 forward");
  float* const k_big = static_cast<float*>(ws.ptr);
  float* const k_small = k_big + nk;
  float* const v_big = k_small + nk;
  float* const v_small = v_big + nv;

  const auto src = [](const void* x, std::int64_t bs, std::int64_t rs, std::int64_t hs,
                      const int* lens) {
    return SplitSrc{static_cast<const float*>(x), bs, rs, hs, lens};
  };
  if (S > 0) {
    const dim3 rows_grid(static_cast<unsigned>((S + 7) / 8), static_cast<unsigned>(K),
                         static_cast<unsigned>(B));
    split_rows_kernel<<<rows_grid, dim3(32, 8), 0, stream>>>(
        src(p.k, p.k_batch_stride, p.k_row_stride, p.k_head_stride, p.seqlens_k), k_big, k_small,
        p.S, p.H);
    check_cuda(cudaGetLastError(), "sm90 fp32 forward: split k");
    const dim3 vt_grid(static_cast<unsigned>((Sv + 31) / 32), static_cast<unsigned>(H / 32),
                       static_cast<unsigned>(B * K));
    split_vt_kernel<<<vt_grid, dim3(32, 8), 0, stream>>>(
        src(p.v, p.v_batch_stride, p.v_row_stride, p.v_head_stride, p.seqlens_k), v_big, v_small,
        p.K, p.S, static_cast<int>(Sv), p.H);
    check_cuda(cudaGetLastError(), "sm90 fp32 forward: split v");
  }

  F32FwdArgs a{};
  a.p = p;
  const auto rows = [](std::int64_t n) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(n, 1));
  };
  const auto map = [&](const float* base, std::int64_t cols, std::int64_t r, std::int64_t heads,
                       std::uint32_t box_rows) {
    return make_f32_tile_map(base, rows(cols), rows(r), rows(heads), rows(B), cols, r * cols,
                             heads * r * cols, box_rows);
  };
  a.tma_q = make_f32_tile_map(static_cast<const float*>(p.q), H, rows(T), rows(N), rows(B),
                              p.q_row_stride, p.q_head_stride, p.q_batch_stride, F32Cfg::kBlockM);
  a.tma_k = map(k_big, H, S, K, F32Cfg::kBlockN);
  a.tma_k_small = map(k_small, H, S, K, F32Cfg::kBlockN);
  a.tma_v = map(v_big, Sv, H, K, F32Cfg::kHeadDim);
  a.tma_v_small = map(v_small, Sv, H, K, F32Cfg::kHeadDim);
  a.out_vec8 = reinterpret_cast<std::uintptr_t>(p.out) % 8 == 0 && p.o_row_stride % 2 == 0 &&
               p.o_head_stride % 2 == 0 && p.o_batch_stride % 2 == 0;
  a.num_m_blocks = (p.T + F32Cfg::kBlockM - 1) / F32Cfg::kBlockM;
  a.num_tiles = a.num_m_blocks * p.B * p.N;
  set_score_args(a, p);

  opt_in_smem<&f32_fwd_kernel<F32Cfg>>(F32Cfg::kSmemBytes, "sm90 fp32 fwd");
  const int work = num_work_items<F32Cfg>(a.num_m_blocks, p.B, p.N);
  const dim3 grid(static_cast<unsigned>(std::min(work, multiprocessor_count())));
  f32_fwd_kernel<F32Cfg><<<grid, F32Cfg::kThreads, F32Cfg::kSmemBytes, stream>>>(a);
  check_cuda(cudaGetLastError(), "sm90 fp32 fwd launch");
}

} // namespace kattn::cuda_kernels::sm90
