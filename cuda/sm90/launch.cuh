// Host side of the sm90 forward: TMA descriptors, launch shape, kernel launch. Included only
// by the per-type/head-dim instantiation files.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "fwd_config.cuh"
#include "fwd_kernel.cuh"
#include "host_utils.hpp"
#include "probe.cuh"

namespace kattn::cuda_kernels::sm90 {

// Probe and its buffer: the A/B tool's (probe.cuh); the library launches NoProbe.
template <class Cfg, class Probe = NoProbe>
void launch_fwd(const FlashFwdParams& p, cudaStream_t stream, void* probe = nullptr) {
  if (p.B == 0 || p.T == 0 || p.N == 0) {
    return;
  }
  FwdArgs a{};
  a.p = p;
  a.probe = probe;
  const bool packed = p.cu_seqlens_q != nullptr;
  a.out_vec16 = reinterpret_cast<std::uintptr_t>(p.out) % 16 == 0 && p.o_row_stride % 8 == 0 &&
                p.o_head_stride % 8 == 0 && (packed || p.o_batch_stride % 8 == 0);
  const std::uint64_t q_rows = tma_rows(p, true, stream);
  const std::uint64_t k_rows = tma_rows(p, false, stream);
  const std::uint64_t batches = packed ? 1 : p.B;
  if constexpr (Cfg::kSeqMajor) {
    // The sequence is the contiguous dimension: boxes of 64 rows by the whole head dim.
    constexpr auto hd = static_cast<std::uint64_t>(Cfg::kHeadDim);
    a.tma_q = make_tile_map(p.q, Cfg::kBf16, q_rows, hd, p.N, batches, p.q_dim_stride,
                            p.q_head_stride, p.q_batch_stride, Cfg::kHeadDim);
    a.tma_k = make_tile_map(p.k, Cfg::kBf16, k_rows, hd, p.K, batches, p.k_dim_stride,
                            p.k_head_stride, p.k_batch_stride, Cfg::kHeadDim);
    a.tma_v = make_tile_map(p.v, Cfg::kBf16, k_rows, hd, p.K, batches, p.v_dim_stride,
                            p.v_head_stride, p.v_batch_stride, Cfg::kHeadDim);
  } else {
    a.tma_q = make_tile_map(p.q, Cfg::kBf16, Cfg::kHeadDim, q_rows, p.N, batches, p.q_row_stride,
                            p.q_head_stride, p.q_batch_stride, Cfg::kBlockM);
    a.tma_k = make_tile_map(p.k, Cfg::kBf16, Cfg::kHeadDim, k_rows, p.K, batches, p.k_row_stride,
                            p.k_head_stride, p.k_batch_stride, Cfg::kBlockN);
    a.tma_v = make_tile_map(p.v, Cfg::kBf16, Cfg::kHeadDim, k_rows, p.K, batches, p.v_row_stride,
                            p.v_head_stride, p.v_batch_stride, Cfg::kBlockN);
  }
  a.num_m_blocks = (p.T + Cfg::kBlockM - 1) / Cfg::kBlockM;
  a.num_tiles = a.num_m_blocks * p.B * p.N;
  set_score_args(a, p);

  opt_in_smem<&fwd_kernel<Cfg, Probe>>(Cfg::kSmemBytes, "sm90 fwd");
  // Persistent: one CTA per SM (the shared-memory ring allows no second one).
  const int work = num_work_items<Cfg>(a.num_m_blocks, p.B, p.N);
  const dim3 grid(static_cast<unsigned>(std::min(work, multiprocessor_count())));
  fwd_kernel<Cfg, Probe><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
  check_cuda(cudaGetLastError(), "sm90 fwd launch");
}

} // namespace kattn::cuda_kernels::sm90
