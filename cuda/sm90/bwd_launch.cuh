// Host side of the sm90 backward's main kernel: TMA descriptors, grid, launch. Included only by
// the per-type/head-dim instantiation files (inst/sm90_bwd_*.cu).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "bwd_config.cuh"
#include "bwd_kernel.cuh"
#include "bwd_trace.cuh"
#include "common/cuda_check.hpp"
#include "host_utils.hpp"

namespace kattn::cuda_kernels::sm90 {

template <class Cfg>
void launch_bwd(const FlashBwdParams& p, cudaStream_t stream) {
  const FlashFwdParams& f = p.fwd;
  BwdArgs a{};
  a.p = p;
  const std::uint64_t q_rows = tma_rows(f, true, stream);
  const std::uint64_t k_rows = tma_rows(f, false, stream);
  const std::uint64_t batches = f.cu_seqlens_q != nullptr ? 1 : f.B;
  constexpr int hd = Cfg::kHeadDim;
  a.tma_q = make_tile_map(f.q, Cfg::kBf16, hd, q_rows, f.N, batches, f.q_row_stride,
                          f.q_head_stride, f.q_batch_stride, Cfg::kBlockM);
  a.tma_do = make_tile_map(p.dout, Cfg::kBf16, hd, q_rows, f.N, batches, p.do_row_stride,
                           p.do_head_stride, p.do_batch_stride, Cfg::kBlockM);
  a.tma_k = make_tile_map(f.k, Cfg::kBf16, hd, k_rows, f.K, batches, f.k_row_stride,
                          f.k_head_stride, f.k_batch_stride, Cfg::kBlockN);
  a.tma_v = make_tile_map(f.v, Cfg::kBf16, hd, k_rows, f.K, batches, f.v_row_stride,
                          f.v_head_stride, f.v_batch_stride, Cfg::kBlockN);
  if constexpr (!Cfg::kDqBulk)
    a.tma_dq = make_f32_rows_map(p.dq_accum, hd, static_cast<std::uint64_t>(p.acc_rows), f.N, 64,
                                 Cfg::kDqWarpRows);
  opt_in_smem<&bwd_kernel<Cfg>>(Cfg::kSmemBytes, "sm90 backward");
  // Key blocks in order: under a causal mask the first ones see the most queries and start
  // first.
  const dim3 grid(static_cast<unsigned>((f.S + Cfg::kBlockN - 1) / Cfg::kBlockN),
                  static_cast<unsigned>(f.K), static_cast<unsigned>(f.B));
#ifdef KATTN_SM90_BWD_TRACE
  const BwdTraceRecorder trace(stream);
  a.trace = trace.buffer();
#endif
  bwd_kernel<Cfg><<<grid, Cfg::kThreads, Cfg::kSmemBytes, stream>>>(a);
  check_cuda(cudaGetLastError(), "sm90 backward: kernel launch");
#ifdef KATTN_SM90_BWD_TRACE
  trace.write(Cfg::kHeadDim);
#endif
}

} // namespace kattn::cuda_kernels::sm90
