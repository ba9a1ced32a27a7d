// The sm80 family's backward hooks: what it serves, the kernel's name, and the passes of one
// backward (dq_accum zeroed, D, the main kernel, dq converted) in stream order.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/bwd_row_passes.hpp"
#include "common/cuda_check.hpp"
#include "kattn_kernels/params_limits.hpp"
#include "sm80/bwd_config.cuh"
#include "sm80/launch.hpp"
#include "sm80/sm80_bwd.hpp"
#include "sm80/sm80_fwd.hpp"

namespace kattn::cuda_kernels::sm80 {

std::string bwd_unsupported_reason(const FlashBwdParams& p) {
  const FlashFwdParams& f = p.fwd;
  if (std::string why = half_dtype_limit(f, "sm80 backward"); !why.empty())
    return why;
  if (f.H != f.Hv || (f.H != 64 && f.H != 128))
    return "head dims H=" + std::to_string(f.H) + " Hv=" + std::to_string(f.Hv) +
           " not instantiated (sm80 backward: H == Hv in {64, 128})";
  for (const std::string& why :
       {sizes_limit(f), unit_dim_stride_limit(f), access_limit(f, 16, 8, "16-byte cp.async rows"),
        bwd_access_limit(p, 16, 8, "16-byte cp.async rows"), varlen_limit(f), heads_limit(f),
        grid_limit(f)})
    if (!why.empty())
      return why;
  return {};
}

std::string bwd_kernel_name(const FlashBwdParams& p) {
  return std::string("sm80_bwd_") + (p.fwd.dtype == ElemType::bf16 ? "bf16" : "f16") + "_h" +
         std::to_string(p.fwd.H) + (uses_dq_kernel(p) ? "_dq" : "");
}

bool uses_dq_kernel(const FlashBwdParams& p) {
  return p.deterministic ||
         (p.fwd.H == 64 ? !BwdConfig<64>::ATOMIC_DQ : !BwdConfig<128>::ATOMIC_DQ);
}

namespace {

template <class Elem>
void main_kernel(const FlashBwdParams& p, cudaStream_t stream) {
  if (p.fwd.H == 64)
    launch_bwd<Elem, 64>(p, stream);
  else
    launch_bwd<Elem, 128>(p, stream);
}

} // namespace

void run_bwd(const FlashBwdParams& p, CUstream_st* stream) {
  bwd_prepass(p, stream);
  if (p.fwd.dtype == ElemType::bf16)
    main_kernel<__nv_bfloat16>(p, stream);
  else
    main_kernel<__half>(p, stream);
  bwd_convert_dq(p, stream);
}

} // namespace kattn::cuda_kernels::sm80
