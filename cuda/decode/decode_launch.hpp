// Host side of the decode kernel: the launchers each instantiation file compiles for one
// (element type, head dim), and the split merge.
#pragma once

#include <cuda_runtime_api.h>

#include "decode/decode_config.cuh"
#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_kernels::decode {

// Defined in decode_launch.cuh; instantiated once per inst/decode_<dtype>_h<HD>.cu.
template <class Elem, int HD>
void launch(const FlashFwdParams& p, const SplitOut& part, cudaStream_t stream);
template <class Elem, int HD>
int resident_ctas();

// Enqueues decode_combine for p's dtype (decode_combine.cu).
void combine(const FlashFwdParams& p, const SplitOut& part, cudaStream_t stream);

} // namespace kattn::cuda_kernels::decode
