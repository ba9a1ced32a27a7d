// The sm90 family's backward hooks: what it serves, the kernel's name, and the passes of one
// backward in stream order.
#include "sm90_bwd.hpp"

#include <limits>
#include <string>

#include <cuda_runtime_api.h>

#include "bwd_config.cuh"
#include "common/bwd_row_passes.hpp"
#include "common/cuda_check.hpp"
#include "inst/bwd_instances.hpp"
#include "kattn_kernels/bwd_geometry.hpp"
#include "kattn_kernels/params_limits.hpp"

namespace kattn::cuda_kernels::sm90 {

std::string bwd_unsupported_reason(const FlashBwdParams& p) {
  const FlashFwdParams& f = p.fwd;
  if (std::string why = half_dtype_limit(f, "sm90 backward"); !why.empty())
    return why;
  if (f.H != f.Hv || (f.H != 64 && f.H != 128))
    return "head dims H=" + std::to_string(f.H) + " Hv=" + std::to_string(f.Hv) +
           " not instantiated (sm90 backward: H == Hv in {64, 128})";
  if (p.deterministic && dq_order_ints(f) > std::numeric_limits<int>::max())
    return "deterministic mode: " + std::to_string(dq_order_ints(f)) +
           " order counters (N x 64-row query tiles) past the kernel's int range";
  for (const std::string& why :
       {sizes_limit(f), unit_dim_stride_limit(f), access_limit(f, 16, 8, "TMA"),
        bwd_access_limit(p, 16, 8, "TMA"), varlen_limit(f), heads_limit(f), grid_limit(f)})
    if (!why.empty())
      return why;
  return {};
}

std::string bwd_kernel_name(const FlashBwdParams& p) {
  return std::string("sm90_bwd_") + (p.fwd.dtype == ElemType::bf16 ? "bf16" : "f16") + "_h" +
         std::to_string(p.fwd.H);
}

void run_bwd(const FlashBwdParams& params, CUstream_st* stream) {
  FlashBwdParams p = params;
  p.dq_tile_order = bwd_dq_bulk(p.fwd.H); // what the conversion reads
  if (p.deterministic)                    // the order's counters and the block ticket start at 0
    check_cuda(cudaMemsetAsync(p.dq_order, 0,
                               static_cast<std::size_t>(dq_order_ints(p.fwd)) * sizeof(int),
                               stream),
               "sm90 backward: zeroing the deterministic order's counters");
  bwd_prepass(p, stream);
  launch_bwd_instance(p.fwd.dtype == ElemType::bf16, p.fwd.H, p, stream);
  bwd_convert_dq(p, stream);
}

} // namespace kattn::cuda_kernels::sm90
