// Host side of the sm80 family: the launcher each instantiation file compiles for one
// (element type, head dim), and the names the hooks dispatch on.
#pragma once

#include <cuda_runtime_api.h>

#include "kattn_kernels/flash_bwd_params.hpp"
#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels::sm80 {

// Defined in launch.cuh; explicitly instantiated once per inst/fwd_<dtype>_h<HD>.cu.
template <class Elem, int HD>
void launch(const FlashFwdParams& p, cudaStream_t stream);

// Defined in wide_launch.cuh (the f32/f64 forward; TF32: f32's products in single TF32);
// instantiated once per inst/fwd_<f32|f32tf32|f64>_h<HD>.cu.
template <class T, int HD, bool TF32>
void launch_wide(const FlashFwdParams& p, cudaStream_t stream);

// Defined in bwd_launch.cuh; explicitly instantiated once per inst/bwd_<dtype>_h<HD>.cu.
template <class Elem, int HD>
void launch_bwd(const FlashBwdParams& p, cudaStream_t stream);

// Shared memory (bytes) the forward kernel for (dtype, head dim) needs; 0 for one not
// instantiated.
int smem_bytes(ElemType dtype, int hd);

} // namespace kattn::cuda_kernels::sm80
